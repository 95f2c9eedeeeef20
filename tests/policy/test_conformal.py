"""Conformal prediction sets: MAPIE's own sets from the stored quantile, ≥ 1 − α coverage on exchangeable tickets."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ticketnet.policy import ConformalSets, fit_conformal, mapie_classifier, min_calibration, set_report
from ticketnet.policy import team_set_labels


def _exchangeable(seed: int, n: int, k: int = 5, spread: float = 2.0):
    """Tickets whose true team is drawn from the probabilities themselves (a calibrated router)."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * spread
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > probs.cumsum(axis=1)).sum(axis=1).clip(0, k - 1)
    return np.round(probs, 4), y


@pytest.mark.parametrize("method", ["lac", "aps"])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.3])
@pytest.mark.parametrize("k", [4, 12])
def test_stored_quantile_sets_equal_mapie_s_own_sets_on_held_out_tickets(method, alpha, k):
    probs, y = _exchangeable(11 + k, 1600, k)
    calib, held = slice(0, 800), slice(800, None)
    rule = fit_conformal(probs[calib], y[calib], alpha, method)
    mapie = mapie_classifier(probs[calib], y[calib], alpha, method, later=probs[held])
    _, mapie_sets = mapie.predict_set(np.arange(800, 1600).reshape(-1, 1))
    mine = rule.sets(probs[held])
    assert mine.shape == mapie_sets[:, :, 0].shape
    assert (mine == mapie_sets[:, :, 0]).all()
    if method == "aps":                                       # APS sets are never empty; LAC's may be at a large α
        assert mine.sum(axis=1).min() >= 1


@pytest.mark.parametrize("method", ["lac", "aps"])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_sets_reach_one_minus_alpha_coverage_on_exchangeable_tickets_over_seeds(method, alpha):
    # 20 seeds, each: calibrate on 500 tickets, cover 2,000 new ones. Over calibration draws the coverage has mean
    # >= 1 − α and sd about sqrt(α(1 − α)(1/500 + 1/2000)); each seed may fall 3.5 sd short at most, their mean
    # 3 sd / sqrt(20). LAC's scores have no ties, so its coverage is also at most 1 − α + 1/(n + 1) on average.
    n_cal, n_new, seeds = 500, 2000, 20
    sd = math.sqrt(alpha * (1 - alpha) * (1 / n_cal + 1 / n_new))
    found = []
    for seed in range(seeds):
        probs, y = _exchangeable(seed, n_cal + n_new)
        rule = fit_conformal(probs[:n_cal], y[:n_cal], alpha, method)
        report = set_report(rule.sets(probs[n_cal:]), y[n_cal:])
        assert report["coverage"]["value"] >= 1 - alpha - 3.5 * sd, f"seed {seed}"
        found.append(report["coverage"]["value"])
    mean = float(np.mean(found))
    assert mean >= 1 - alpha - 3 * sd / math.sqrt(seeds)
    if method == "lac":
        assert mean <= 1 - alpha + 1 / (n_cal + 1) + 3 * sd / math.sqrt(seeds)


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, float("nan"), "often", None])
def test_alpha_outside_zero_one_is_refused_in_one_line(alpha):
    probs, y = _exchangeable(0, 100)
    with pytest.raises(ValueError, match="alpha must be") as err:
        fit_conformal(probs, y, alpha)
    assert "\n" not in str(err.value)


def test_too_few_calibration_tickets_for_alpha_is_refused():
    assert min_calibration(0.05) == 19 and min_calibration(0.1) == 9 and min_calibration(0.5) == 1
    probs, y = _exchangeable(0, 12)
    with pytest.raises(ValueError, match="valid has 12 tickets; sets at alpha 0.05 need at least 19"):
        fit_conformal(probs, y, 0.05)
    assert fit_conformal(probs, y, 0.1).n_calibration == 12


def test_bad_method_and_labels_are_refused():
    probs, y = _exchangeable(0, 50)
    with pytest.raises(ValueError, match="method must be one of lac, aps"):
        fit_conformal(probs, y, 0.1, "raps")
    with pytest.raises(ValueError, match="outside 0 .. 4"):
        fit_conformal(probs, y + 5, 0.1)
    with pytest.raises(ValueError, match="span at least 3 teams"):
        fit_conformal(probs, y % 2, 0.1, "aps")
    assert fit_conformal(probs, y % 2, 0.1, "lac").n_calibration == 50
    with pytest.raises(ValueError, match="team indices"):
        fit_conformal(probs, y.astype(str), 0.1)


def test_set_report_and_labels_by_hand():
    sets = np.array([[True, False, True], [False, True, False], [True, True, True], [False, False, False]])
    y = np.array([2, 0, 1, 0])
    r = set_report(sets, y)
    assert r["coverage"]["value"] == 0.5                      # tickets 0 and 2 hold their team
    assert r["coverage"]["low"] < 0.5 < r["coverage"]["high"]
    assert r["mean_size"] == 1.5 and r["size_counts"] == {0: 1, 1: 1, 2: 1, 3: 1} and r["empty"] == 1
    probs = np.array([[0.3, 0.1, 0.6], [0.1, 0.8, 0.1], [0.2, 0.5, 0.3], [0.4, 0.3, 0.3]])
    teams = ["delivery", "payments", "returns"]
    assert team_set_labels(sets, teams, probs) == ["returns or delivery", "payments",
                                                   "payments, returns or delivery", ""]
    assert team_set_labels(sets, teams)[0] == "delivery or returns"


def test_a_rule_round_trips_through_json_and_a_broken_one_is_refused():
    probs, y = _exchangeable(2, 300)
    rule = fit_conformal(probs, y, 0.1, "aps", fitted_on="valid")
    assert ConformalSets.from_json(json.loads(json.dumps(rule.to_json()))) == rule
    with pytest.raises(ValueError, match="alpha must be"):
        ConformalSets.from_json({**rule.to_json(), "alpha": 2})
    with pytest.raises(ValueError, match="not a stored conformal rule"):
        ConformalSets.from_json({"alpha": 0.1})
