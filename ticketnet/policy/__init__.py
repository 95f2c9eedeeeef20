"""Routing policy: risk–coverage, per-team thresholds for a target, conformal prediction sets, kept with the router."""

from ticketnet.policy.conformal import (
    ConformalSets, fit_conformal, mapie_classifier, min_calibration, set_report, team_set_labels,
)
from ticketnet.policy.fit import SplitScores, evaluate_policy, fit_policy, scores_from_table, split_scores
from ticketnet.policy.policy import Policy, load_policy, store_policy
from ticketnet.policy.risk_coverage import (
    area_under_risk_coverage, reference_areas, reference_curves, risk_coverage, risk_coverage_by_team,
)
from ticketnet.policy.thresholds import NEVER, TeamThresholds, auto_routed, fit_team_thresholds, threshold_report

__all__ = [
    "NEVER", "ConformalSets", "Policy", "SplitScores", "TeamThresholds", "evaluate_policy", "fit_policy",
    "scores_from_table", "split_scores", "area_under_risk_coverage", "auto_routed", "fit_conformal",
    "fit_team_thresholds", "load_policy", "mapie_classifier", "min_calibration", "reference_areas",
    "reference_curves", "risk_coverage", "risk_coverage_by_team", "set_report", "store_policy", "team_set_labels",
    "threshold_report",
]
