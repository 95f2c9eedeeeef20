"""Risk–coverage on tickets whose scores are known: every point and the area by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ticketnet.policy import (
    area_under_risk_coverage, reference_areas, reference_curves, risk_coverage, risk_coverage_by_team,
)
from ticketnet.policy.risk_coverage import REFERENCE_POINTS

CONF = [0.5, 0.9, 0.8, 0.6, 0.8]
CORRECT = [False, True, False, True, True]
PREDICTED = ["b", "a", "a", "b", "a"]


def test_each_distinct_threshold_is_one_point_computed_by_hand():
    curve = risk_coverage(CONF, CORRECT)
    # By hand, highest confidence first: {0.9 ✓}, then both 0.8s enter together (one ✗), then 0.6 ✓, then 0.5 ✗.
    assert curve["threshold"].tolist() == [0.9, 0.8, 0.6, 0.5]
    assert curve["auto_routed"].tolist() == [1, 3, 4, 5]
    assert curve["errors"].tolist() == [0, 1, 1, 2]
    assert curve["coverage"].tolist() == pytest.approx([0.2, 0.6, 0.8, 1.0])
    assert curve["risk"].tolist() == pytest.approx([0.0, 1 / 3, 1 / 4, 2 / 5])
    # Step integral: 0·0.2 + 1/3·0.4 + 1/4·0.2 + 2/5·0.2.
    assert area_under_risk_coverage(curve) == pytest.approx(0.4 / 3 + 0.05 + 0.08)


def test_per_team_curves_are_the_curve_within_each_predicted_team():
    curve = risk_coverage_by_team(CONF, PREDICTED, CORRECT, ["a", "b", "never"])
    a, b = curve[curve.team == "a"], curve[curve.team == "b"]
    assert a["threshold"].tolist() == [0.9, 0.8] and a["risk"].tolist() == pytest.approx([0.0, 1 / 3])
    assert a["coverage"].tolist() == pytest.approx([1 / 3, 1.0])
    assert b["threshold"].tolist() == [0.6, 0.5] and b["risk"].tolist() == pytest.approx([0.0, 0.5])
    assert "never" not in set(curve.team)


def test_oracle_and_random_references_by_hand():
    ref = reference_curves(CORRECT)                       # 3 of 5 correct
    oracle = ref[ref.ranking == "oracle"]
    assert oracle["coverage"].tolist() == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])
    assert oracle["risk"].tolist() == pytest.approx([0, 0, 0, 1 / 4, 2 / 5])
    assert ref[ref.ranking == "random ranking"]["risk"].tolist() == pytest.approx([0.4] * 5)
    areas = reference_areas(CORRECT)
    assert areas["oracle"] == pytest.approx((1 / 4 + 2 / 5) / 5)
    assert areas["random ranking"] == pytest.approx(0.4)
    assert area_under_risk_coverage(oracle) == pytest.approx(areas["oracle"])
    router = area_under_risk_coverage(risk_coverage(CONF, CORRECT))
    assert areas["oracle"] <= router <= areas["random ranking"]


def test_a_large_split_keeps_the_oracle_knee_on_a_coarser_grid():
    rng = np.random.default_rng(3)
    correct = rng.random(REFERENCE_POINTS * 3) < 0.9
    ref = reference_curves(correct)
    oracle = ref[ref.ranking == "oracle"]
    assert len(oracle) < correct.size
    knee = correct.sum() / correct.size
    assert oracle.loc[np.isclose(oracle.coverage, knee), "risk"].tolist() == [0.0]
    assert (oracle.loc[oracle.coverage > knee, "risk"] > 0).all()


def test_a_curve_with_no_ties_has_the_mean_error_rate_of_the_top_k_as_its_area():
    rng = np.random.default_rng(0)
    conf = rng.random(200)
    correct = rng.random(200) < conf
    ranked = correct[np.argsort(-conf)]
    by_k = np.mean(np.cumsum(~ranked) / np.arange(1, 201))
    assert area_under_risk_coverage(risk_coverage(conf, correct)) == pytest.approx(by_k)


@pytest.mark.parametrize("conf, correct, words", [
    ([], [], "no tickets"),
    ([0.5, 0.6], [True], "same tickets"),
    ([0.5, float("nan")], [True, False], "finite"),
])
def test_bad_scores_are_refused_in_words(conf, correct, words):
    with pytest.raises(ValueError, match=words):
        risk_coverage(conf, correct)


def test_a_curve_of_several_rankings_is_refused():
    with pytest.raises(ValueError, match="several rankings"):
        area_under_risk_coverage(reference_curves(CORRECT))
    with pytest.raises(ValueError, match="empty"):
        area_under_risk_coverage(pd.DataFrame({"coverage": [], "risk": []}))
