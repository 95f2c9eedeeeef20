"""The Routing policy page's warnings: a target the policy misses is said, with its interval and the teams."""

from __future__ import annotations

import pandas as pd

from dashboard.narrative import policy as words


def _stat(value, low, high):
    return {"value": value, "low": low, "high": high}


def _result(precision, low, high, coverage=0.4, per_team=None):
    return {"overall": {"n": 1000, "auto_routed": 400, "misroutes": 11, "coverage": _stat(coverage, 0.37, 0.43),
                        "precision": _stat(precision, low, high), "misroutes_per_10000": _stat(110, 60, 160)},
            "per_team": per_team or {}}


def test_a_missed_precision_is_said_with_its_interval_and_whether_noise_explains_it():
    curve = pd.DataFrame({"coverage": [0.1, 0.4, 1.0], "risk": [0.0, 0.028, 0.08]})
    within = words.target_warnings("precision", 0.98, {"test": _result(0.972, 0.955, 0.985)}, {"test": curve}, False)
    assert within[0].startswith("On test the auto-routed tickets reach precision 97.2 % (95.5–98.5), under the "
                                "98.0 % asked, though within the sampling noise")
    assert "Vouch for it" in within[0] and len(within) == 1            # the curve is not better at this point
    beyond = words.target_warnings("precision", 0.98, {"handwritten": _result(0.95, 0.92, 0.97)}, {}, True)
    assert "On the hand-written set" in beyond[0] and "by more than the sampling noise" in beyond[0]
    assert "Vouch for it" not in beyond[0]                            # already vouched for
    assert words.target_warnings("precision", 0.95, {"test": _result(0.972, 0.955, 0.985)}, {}, False) == []
    assert words.target_warnings("automation", 0.8, {"test": _result(0.972, 0.955, 0.985)}, {}, False) == []


def test_a_team_short_beyond_doubt_is_named_and_one_that_routes_everything_says_so():
    team = {"auto_routed": 13, "predicted": 13, "precision": _stat(0.846, 0.62, 0.97)}
    fine = {"auto_routed": 50, "predicted": 60, "precision": _stat(0.98, 0.95, 1.0)}
    out = words.target_warnings("precision", 0.98, {"test": _result(0.985, 0.97, 0.995,
                                                                    per_team={"vpn": team, "mail": fine})}, {}, False)
    assert out == ["On test these teams' auto-routed tickets fall short of 98.0 % beyond doubt (their whole interval "
                   "lies under it): vpn 84.6 % (62.0–97.0), every one of its tickets auto-routed."]


def test_one_global_threshold_doing_better_at_the_same_automation_rate_is_said():
    curve = pd.DataFrame({"coverage": [0.2, 0.4, 0.6], "risk": [0.005, 0.01, 0.03]})
    out = words.target_warnings("automation", 0.4, {"test": _result(0.972, 0.955, 0.985, coverage=0.4)},
                                {"test": curve}, False)
    assert out == ["On test one confidence threshold for every team, auto-routing the same 40.0 % of tickets, would "
                   "misroute 1.0 % of them, against 2.8 % with these per-team thresholds: on this router the "
                   "per-team fit costs precision at this point."]                 # 1.0 % < 1 − 0.985: beyond noise
    close = pd.DataFrame({"coverage": [0.2, 0.4, 0.6], "risk": [0.005, 0.02, 0.03]})
    noisy = words.target_warnings("automation", 0.4, {"test": _result(0.972, 0.955, 0.985, coverage=0.4)},
                                  {"test": close}, False)
    assert noisy[0].endswith("a difference within the sampling noise of this many tickets.")
