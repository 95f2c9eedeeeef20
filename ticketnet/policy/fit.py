"""A router's policy fitted on its valid split and scored on its test and hand-written splits, from stored tables."""

# Each split's table is the router's stored predictions (`ticketnet.predictions`) while they are fresh, else the
# split routed now (the model is loaded only then). Thresholds and the conformal quantile are fitted on valid; the
# results are only ever reported on other splits.

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ticketnet._runtime.hashing import file_sha256
from ticketnet.policy.conformal import fit_conformal, set_report
from ticketnet.policy.policy import Policy
from ticketnet.policy.risk_coverage import area_under_risk_coverage, reference_areas, risk_coverage
from ticketnet.policy.thresholds import auto_routed, fit_team_thresholds, threshold_report

if TYPE_CHECKING:
    import pandas as pd

FIT_SPLIT = "valid"
REPORT_SPLITS = ("test", "handwritten")
STORED, ROUTED = "stored predictions", "routed now"


@dataclass(frozen=True)
class SplitScores:
    """One split's routed tickets as arrays: probabilities (n, teams), true team indices, confidence, predicted."""

    name: str
    probs: np.ndarray
    y: np.ndarray
    confidence: np.ndarray
    predicted: np.ndarray
    correct: np.ndarray
    source: str
    data_sha256: str


def scores_from_table(table: pd.DataFrame, teams: Sequence[str], name: str, source: str = STORED,
                      data_sha256: str = "") -> SplitScores:
    """A routed table (`ticketnet.predictions.routed_table`'s columns) as SplitScores; ValueError for a ticket
    whose team is not one of the router's (or missing)."""
    names = list(teams)
    missing = [f"p_{t}" for t in names if f"p_{t}" not in table.columns]
    if missing:
        raise ValueError(f"{name}: the routed table lacks {', '.join(missing[:3])}")
    index = {t: i for i, t in enumerate(names)}
    unknown = sorted(set(table["team"]) - set(index))
    if unknown:
        raise ValueError(f"{name}: {len(unknown)} team label(s) the router does not have, e.g. {unknown[0]!r}; "
                         f"policies are fitted and scored on labelled tickets of the router's teams")
    predicted = table["predicted"].to_numpy(dtype=object)
    return SplitScores(name, table[[f"p_{t}" for t in names]].to_numpy(dtype=np.float64),
                       table["team"].map(index).to_numpy(dtype=np.int64),
                       table["confidence"].to_numpy(dtype=np.float64), predicted,
                       predicted == table["team"].to_numpy(dtype=object), source, data_sha256)


def split_scores(weights: Path, split: str, data: Path, router=None) -> SplitScores | None:
    """The router's scores on `data/<split>.csv` (None when the router's data has no such split): its stored
    predictions while fresh, else routed now with `router` (loaded from `weights` when not given)."""
    from ticketnet.data.tickets import load_split
    from ticketnet.predictions import read_predictions, routed_table

    csv = Path(data) / f"{split}.csv"
    if not csv.is_file():
        return None
    table, source = read_predictions(weights, split, csv), STORED
    if table is None:
        if router is None:
            from ticketnet.loading import load_router

            router = load_router(weights)
        table, source = routed_table(router, load_split(csv, router.teams)), ROUTED
        teams = router.teams
    else:
        from ticketnet.loading import load_any_card

        teams = load_any_card(weights).teams
    return scores_from_table(table, teams, split, source, file_sha256(csv))


def fit_policy(fit: SplitScores, teams: Sequence[str], *, precision: float | None = None,
               coverage: float | None = None, alpha: float, method: str = "lac",
               guarantee: float | None = None) -> Policy:
    """Team thresholds for the target (with probability ≥ 1 − `guarantee` when given) and the conformal rule at α,
    both fitted on `fit` (valid)."""
    thresholds = fit_team_thresholds(fit.confidence, fit.predicted, fit.correct, teams, precision=precision,
                                     coverage=coverage, fitted_on=fit.name, guarantee=guarantee)
    conformal = fit_conformal(fit.probs, fit.y, alpha, method, fitted_on=fit.name)
    return Policy(thresholds, conformal, {"split": fit.name, "n": int(fit.y.size), "data_sha256": fit.data_sha256,
                                          "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                          "source": fit.source})


def evaluate_policy(policy: Policy, scores: SplitScores, teams: Sequence[str], resamples: int = 1000,
                    seed: int = 0) -> dict:
    """The policy's result on one split: the thresholds' report, the sets' report, and the split's risk–coverage
    area beside the oracle's and a random ranking's."""
    if scores.name == policy.fitted.get("split", policy.conformal.fitted_on):
        raise ValueError(f"{scores.name} is the split the policy was fitted on; report on another split")
    curve = risk_coverage(scores.confidence, scores.correct)
    return {"split": scores.name, "source": scores.source,
            "thresholds": threshold_report(policy.thresholds, scores.confidence, scores.predicted, scores.correct,
                                           teams, resamples=resamples, seed=seed),
            "sets": set_report(policy.conformal.sets(scores.probs), scores.y),
            "aurc": {"router": area_under_risk_coverage(curve), **reference_areas(scores.correct)},
            "auto": auto_routed(policy.thresholds, scores.confidence, scores.predicted)}
