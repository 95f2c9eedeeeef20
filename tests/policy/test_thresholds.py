"""Per-team thresholds: the target reached on the fitted tickets, the unreachable target named, the report by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ticketnet.policy import NEVER, TeamThresholds, auto_routed, fit_team_thresholds, threshold_report

TEAMS = ["a", "b", "c"]
# Team a: 0.99 ✓, 0.95 ✓, 0.90 ✗, 0.80 ✓ -> precision 1, 1, 2/3, 3/4 from the top. Team b: 0.97 ✗, 0.70 ✓ -> 0, 1/2.
CONF = np.array([0.99, 0.95, 0.90, 0.80, 0.97, 0.70])
PRED = np.array(["a", "a", "a", "a", "b", "b"])
OK = np.array([True, True, False, True, False, True])


def test_precision_target_by_hand_and_the_team_that_cannot_reach_it():
    fit = fit_team_thresholds(CONF, PRED, OK, TEAMS, precision=0.98)
    assert fit.thresholds["a"] == 0.95                       # the lowest threshold still at precision >= 0.98
    assert fit.thresholds["b"] == NEVER and fit.thresholds["c"] == NEVER
    assert not fit.reached
    assert fit.best_reachable == pytest.approx(0.5)           # the highest precision every predicted team reaches
    assert any(m.startswith("b: no threshold reaches precision 0.98") and "best 0.5000" in m for m in fit.messages)
    assert any(m.startswith("c: never predicted") for m in fit.messages)
    assert fit.fitted["coverage"] == pytest.approx(2 / 6) and fit.fitted["precision"] == 1.0

    lower = fit_team_thresholds(CONF, PRED, OK, TEAMS, precision=0.75)
    assert lower.thresholds["a"] == 0.80 and lower.thresholds["b"] == NEVER


def test_a_target_no_team_reaches_says_so_with_the_best_value():
    wrong_at_top = np.array([False, True, True, True, False, True])   # each team's most confident ticket wrong
    fit = fit_team_thresholds(CONF, PRED, wrong_at_top, TEAMS, precision=0.9)
    assert not fit.reached and all(math.isinf(v) for v in fit.thresholds.values())
    # a reaches 3/4 at best (0.80 and above), b 1/2.
    assert fit.messages[0] == "no threshold reaches precision 0.9 on valid; the best any team reaches is 0.7500"
    assert fit.best_reachable == pytest.approx(0.5)
    assert not auto_routed(fit, CONF, PRED).any()


def _synthetic(seed: int, n: int = 3000, k: int = 4):
    rng = np.random.default_rng(seed)
    conf = np.round(rng.uniform(0.3, 1.0, n), 3)              # ties, as rounded probabilities have
    pred = np.array([f"t{i}" for i in rng.integers(0, k, n)])
    ok = rng.random(n) < conf ** 0.5
    return conf, pred, ok, [f"t{i}" for i in range(k)]


@pytest.mark.parametrize("seed", range(5))
def test_each_team_reaches_the_target_on_the_fitted_tickets_and_no_lower_threshold_would(seed):
    conf, pred, ok, teams = _synthetic(seed)
    fit = fit_team_thresholds(conf, pred, ok, teams, precision=0.95)
    for team in teams:
        mine = pred == team
        t = fit.thresholds[team]
        if math.isinf(t):
            continue
        assert ok[mine & (conf >= t)].mean() >= 0.95
        lower = conf[mine & (conf < t)]
        for below in np.unique(lower):                        # every lower threshold misses the target
            assert ok[mine & (conf >= below)].mean() < 0.95
    auto = auto_routed(fit, conf, pred)
    assert ok[auto].mean() >= 0.95
    assert fit.fitted["coverage"] == pytest.approx(auto.mean())


@pytest.mark.parametrize("share", [0.2, 0.6, 0.95])
def test_a_coverage_target_auto_routes_at_least_that_share_at_the_highest_precision(share):
    conf, pred, ok, teams = _synthetic(7)
    fit = fit_team_thresholds(conf, pred, ok, teams, coverage=share)
    assert fit.reached and fit.target == {"coverage": share}
    auto = auto_routed(fit, conf, pred)
    assert auto.mean() >= share
    # The chosen thresholds are those of a precision target; the next stricter one would auto-route too few.
    level = float(fit.messages[-1].split("precision target ")[1].split()[0])
    stricter = fit_team_thresholds(conf, pred, ok, teams, precision=level + 1e-3)
    assert auto_routed(stricter, conf, pred).mean() < share


@pytest.mark.parametrize("kwargs, words", [
    ({}, "exactly one target"),
    ({"precision": 0.9, "coverage": 0.5}, "exactly one target"),
    ({"precision": 0}, r"in \(0, 1\]"),
    ({"precision": 1.2}, r"in \(0, 1\]"),
    ({"coverage": float("nan")}, r"in \(0, 1\]"),
])
def test_bad_targets_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        fit_team_thresholds(CONF, PRED, OK, TEAMS, **kwargs)


def test_a_predicted_team_the_router_does_not_have_is_refused():
    with pytest.raises(ValueError, match="not among the router's teams"):
        fit_team_thresholds(CONF, PRED, OK, ["a"], precision=0.9)


def test_the_report_counts_by_hand_with_intervals_around_them():
    thresholds = {"a": 0.95, "b": 0.7}
    report = threshold_report(thresholds, CONF, PRED, OK, TEAMS, resamples=500, seed=1)
    o = report["overall"]
    # Auto-routed: a's 0.99 ✓ and 0.95 ✓, b's 0.97 ✗ and 0.70 ✓: 4 of 6, one misroute.
    assert (o["n"], o["auto_routed"], o["misroutes"], o["to_person"]) == (6, 4, 1, 2)
    assert o["coverage"]["value"] == pytest.approx(4 / 6)
    assert o["precision"]["value"] == pytest.approx(3 / 4)
    assert o["misroutes_per_10000"]["value"] == pytest.approx(10_000 / 6)
    for stat in ("coverage", "precision", "misroutes_per_10000"):
        assert o[stat]["low"] <= o[stat]["value"] <= o[stat]["high"]
    a, b, c = (report["per_team"][t] for t in TEAMS)
    assert (a["predicted"], a["auto_routed"], a["misroutes"], a["threshold"]) == (4, 2, 0, 0.95)
    assert a["coverage"]["value"] == 0.5 and a["precision"]["value"] == 1.0
    assert (b["auto_routed"], b["misroutes"]) == (2, 1) and b["precision"]["value"] == 0.5
    assert c["predicted"] == 0 and c["coverage"]["value"] is None and c["threshold"] == NEVER
    again = threshold_report(thresholds, CONF, PRED, OK, TEAMS, resamples=500, seed=1)
    assert again == report                                    # seeded
    other = threshold_report(thresholds, CONF, PRED, OK, TEAMS, resamples=500, seed=2)
    assert other["overall"]["precision"] != report["overall"]["precision"]


def test_bootstrap_intervals_cover_a_known_precision_most_of_the_time():
    # 2,000 tickets with precision 0.9 among the auto-routed: the 95 % interval should hold 0.9 for most draws.
    held = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        conf = rng.random(2000)
        ok = np.where(conf >= 0.5, rng.random(2000) < 0.9, rng.random(2000) < 0.5)
        r = threshold_report({"a": 0.5}, conf, np.array(["a"] * 2000), ok, ["a"], resamples=400, seed=seed)
        p = r["overall"]["precision"]
        held += p["low"] <= 0.9 <= p["high"]
    assert held >= 34                                         # 95 % of 40 is 38; binomial 1 % tail is 34


def test_thresholds_round_trip_through_json_with_never_as_null():
    fit = fit_team_thresholds(CONF, PRED, OK, TEAMS, precision=0.98)
    stored = fit.to_json()
    assert stored["thresholds"]["b"] is None
    import json

    assert TeamThresholds.from_json(json.loads(json.dumps(stored))) == fit
    with pytest.raises(ValueError, match="not a stored set"):
        TeamThresholds.from_json({"thresholds": {}})
