"""Risk–coverage: for every confidence threshold, the share of tickets auto-routed and the error rate among them."""

# Coverage at threshold t is the share of tickets whose confidence is >= t; risk is the share of those the router
# got wrong. Tickets with equal confidence enter together, so the curve has one point per distinct confidence.
# The area under it (AURC) is the step integral Σ risk_i · (coverage_i − coverage_{i−1}): with no ties it is the
# mean over k of the error rate of the k most confident tickets, the usual definition.

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ticketnet.policy._checks import scores

CURVE_COLUMNS = ("threshold", "auto_routed", "coverage", "errors", "risk")
# Above this many tickets the oracle and random curves are drawn on an even grid of coverages (plus the oracle's
# knee) rather than one point per ticket; their area is then computed from the closed form, not from the points.
REFERENCE_POINTS = 2000


def risk_coverage(confidence, correct) -> pd.DataFrame:
    """One row per distinct confidence, highest first: threshold, auto_routed (tickets with confidence >=
    threshold), coverage (their share), errors (how many of them are wrong), risk (errors / auto_routed)."""
    conf, ok = scores(confidence, correct)
    order = np.argsort(-conf, kind="stable")
    conf, wrong = conf[order], ~ok[order]
    cum_wrong = np.cumsum(wrong)
    # The last ticket of each run of equal confidences closes that threshold's group.
    last = np.flatnonzero(np.r_[conf[1:] != conf[:-1], True])
    auto = last + 1
    errors = cum_wrong[last]
    return pd.DataFrame({"threshold": conf[last], "auto_routed": auto.astype(np.int64),
                         "coverage": auto / conf.size, "errors": errors.astype(np.int64),
                         "risk": errors / auto})


def risk_coverage_by_team(confidence, predicted, correct, teams: Sequence[str]) -> pd.DataFrame:
    """`risk_coverage` within each predicted team, stacked with a `team` column first (teams in `teams` order;
    a team never predicted has no rows). Coverage here is the share of that team's predicted tickets."""
    conf, ok = scores(confidence, correct)
    pred = np.asarray(predicted).reshape(-1)
    if pred.shape != conf.shape:
        raise ValueError(f"{conf.size} confidences but {pred.size} predicted teams")
    parts = []
    for team in teams:
        mask = pred == team
        if mask.any():
            curve = risk_coverage(conf[mask], ok[mask])
            curve.insert(0, "team", team)
            parts.append(curve)
    if not parts:
        return pd.DataFrame(columns=["team", *CURVE_COLUMNS])
    return pd.concat(parts, ignore_index=True)


def _grid(n: int, knee: int) -> np.ndarray:
    if n <= REFERENCE_POINTS:
        return np.arange(1, n + 1)
    grid = np.unique(np.round(np.linspace(1, n, REFERENCE_POINTS)).astype(np.int64))
    return np.unique(np.r_[grid, [k for k in (knee, knee + 1) if 1 <= k <= n]])


def reference_curves(correct) -> pd.DataFrame:
    """The two curves a router's curve sits between, as columns coverage, risk, ranking: "oracle" (every correct
    ticket ranked before every wrong one: risk 0 up to coverage = accuracy) and "random ranking" (a random ranking's
    expected risk: the overall error rate at every coverage)."""
    ok = np.asarray(correct).reshape(-1).astype(bool)
    n = ok.size
    if n == 0:
        raise ValueError("no tickets: reference curves need at least one scored ticket")
    n_correct = int(ok.sum())
    k = _grid(n, n_correct)
    oracle = np.maximum(k - n_correct, 0) / k
    random = np.full(k.shape, (n - n_correct) / n)
    return pd.DataFrame({"coverage": np.r_[k, k] / n, "risk": np.r_[oracle, random],
                         "ranking": ["oracle"] * k.size + ["random ranking"] * k.size})


def area_under_risk_coverage(curve: pd.DataFrame) -> float:
    """AURC of a curve with coverage and risk columns (one ranking), as the step integral from coverage 0:
    Σ risk_i · (coverage_i − coverage_{i−1}) in order of increasing coverage. Lower is better."""
    if "ranking" in curve.columns and curve["ranking"].nunique() > 1:
        raise ValueError("the curve holds several rankings; pass one (e.g. curve[curve.ranking == 'oracle'])")
    if curve.empty:
        raise ValueError("an empty curve has no area")
    part = curve.sort_values("coverage", kind="stable")
    cov = part["coverage"].to_numpy(dtype=np.float64)
    risk = part["risk"].to_numpy(dtype=np.float64)
    return float(np.sum(risk * np.diff(np.r_[0.0, cov])))


def reference_areas(correct) -> dict[str, float]:
    """The exact AURC of the oracle and the random ranking (from their closed forms, whatever the grid)."""
    ok = np.asarray(correct).reshape(-1).astype(bool)
    n = ok.size
    if n == 0:
        raise ValueError("no tickets: reference areas need at least one scored ticket")
    n_correct = int(ok.sum())
    k = np.arange(n_correct + 1, n + 1)
    return {"oracle": float(np.sum((k - n_correct) / k) / n), "random ranking": (n - n_correct) / n}
