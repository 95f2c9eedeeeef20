"""Per team, B − A precision and recall of two routers on the same tickets, each with a paired bootstrap interval."""

# `compare_tables` reports each router's per-team precision and recall with its own interval; the Compare page's
# per-team chart needs the interval of their difference, which only the same resamples for both routers give
# (paired: one draw of tickets per resample, read by A and by B). Teams: those both routers know, tickets whose
# true team is one of them, as in `compare_tables`; a prediction of a team outside them counts as wrong.

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

LEVEL = 0.95
CELLS = 4_000_000                 # resample counts held at once (resamples × tickets)
DELTA_COLUMNS = ("team", "measure", "a", "b", "delta", "low", "high", "support")


def _rates(tp: np.ndarray, count: np.ndarray) -> np.ndarray:
    """tp / count with 0 where count is 0 (a team never predicted has precision 0, as in `compare_tables`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, tp / np.where(count > 0, count, 1), 0.0)


def team_deltas(a: pd.DataFrame, b: pd.DataFrame, teams_a: Sequence[str], teams_b: Sequence[str],
                resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """One row per (shared team, measure in precision, recall): A's value, B's, delta = B − A, and the 2.5 and 97.5
    percentiles of delta over `resamples` paired bootstrap resamples of the tickets (seeded), and the team's number
    of tickets. `a`, `b`: routed tables (ticket_id, team, predicted) of the same tickets; ValueError, one line, when
    they hold different tickets or the routers share no team."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, not {resamples}")
    if set(a["ticket_id"]) != set(b["ticket_id"]) or a["ticket_id"].duplicated().any() or len(a) != len(b):
        raise ValueError("the two tables must hold the same tickets, each once: compare the routers on one split")
    shared = [str(t) for t in teams_a if str(t) in {str(x) for x in teams_b}]
    if not shared:
        raise ValueError("the routers share no team: there is no per-team difference to show")
    b = b.set_index("ticket_id").loc[a["ticket_id"]].reset_index()
    truth = a["team"].astype(str).to_numpy()
    keep = np.isin(truth, shared)
    truth = truth[keep]
    pred_a, pred_b = a["predicted"].astype(str).to_numpy()[keep], b["predicted"].astype(str).to_numpy()[keep]
    n, k = len(truth), len(shared)
    if n == 0:
        raise ValueError("no ticket's true team is one both routers know")
    # Indicator columns per ticket: true team, A's prediction, A right, B's prediction, B right (k columns each).
    actual = truth[:, None] == np.array(shared)[None]
    said_a, said_b = pred_a[:, None] == np.array(shared)[None], pred_b[:, None] == np.array(shared)[None]
    features = np.hstack([actual, said_a, said_a & actual, said_b, said_b & actual]).astype(np.float64)

    def measures(sums: np.ndarray) -> dict[str, np.ndarray]:
        act, pa, tpa, pb, tpb = (sums[..., i * k:(i + 1) * k] for i in range(5))
        return {"precision_a": _rates(tpa, pa), "recall_a": _rates(tpa, act),
                "precision_b": _rates(tpb, pb), "recall_b": _rates(tpb, act)}

    point = measures(features.sum(0))
    rng = np.random.default_rng(seed)
    per_chunk = max(1, CELLS // n)
    draws = []
    for start in range(0, resamples, per_chunk):
        rows = min(per_chunk, resamples - start)
        # n draws with replacement per resample, counted per ticket: (rows, n), each row summing to n
        drawn = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        draws.append(counts @ features)
    boot = measures(np.vstack(draws))
    lo, hi = 100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2
    out = []
    for measure in ("precision", "recall"):
        delta = boot[f"{measure}_b"] - boot[f"{measure}_a"]                                  # (resamples, k)
        low, high = np.percentile(delta, [lo, hi], axis=0)
        for j, team in enumerate(shared):
            va, vb = float(point[f"{measure}_a"][j]), float(point[f"{measure}_b"][j])
            out.append((team, measure, round(va, 4), round(vb, 4), round(vb - va, 4), round(float(low[j]), 4),
                        round(float(high[j]), 4), int(actual[:, j].sum())))
    return pd.DataFrame(out, columns=list(DELTA_COLUMNS))
