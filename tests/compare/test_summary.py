"""compare_tables and flip_table against independent computations: scipy's binomial test, sklearn, flips by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score

from tests.compare.helpers import random_pair, table
from ticketnet.compare import compare_tables, flip_table, p_text
from ticketnet.metrics import expected_calibration_error

TEAMS = ("red", "green", "blue")


def hand_pair():
    """Eight tickets with every kind of flip, written out so the expected table can be read off."""
    ids = [f"H-{i}" for i in range(8)]
    team = ["red", "red", "green", "green", "blue", "blue", "red", "green"]
    pattern = ["plain", "negated", "plain", "negated", "plain", "plain", "negated", "plain"]
    style = ["terse", "terse", "chatty", "terse", "chatty", "chatty", "terse", "chatty"]
    pred_a = ["red", "green", "green", "blue", "blue", "red", "blue", "red"]
    pred_b = ["red", "red", "blue", "blue", "green", "red", "green", "green"]
    # ticket:  0 both right · 1 fixed · 2 broken · 3 both wrong, same team · 4 broken · 5 both wrong, same team
    #          6 both wrong, different teams · 7 fixed
    conf_a = [0.9, 0.6, 0.8, 0.5, 0.7, 0.6, 0.5, 0.55]
    conf_b = [0.95, 0.7, 0.6, 0.4, 0.5, 0.8, 0.45, 0.9]
    a = table(ids, team, pred_a, conf_a, TEAMS, pattern, style)
    b = table(ids, team, pred_b, conf_b, TEAMS, pattern, style)
    return a, b


def test_flips_by_hand():
    a, b = hand_pair()
    flips = flip_table(a, b.iloc[::-1])                                  # B's rows in another order: aligned by id
    assert flips[["ticket_id", "kind", "predicted_a", "predicted_b"]].values.tolist() == [
        ["H-1", "fixed", "green", "red"], ["H-2", "broken", "green", "blue"], ["H-4", "broken", "blue", "green"],
        ["H-6", "both wrong", "blue", "green"], ["H-7", "fixed", "red", "green"]]
    assert flips["confidence_a"].tolist() == [0.6, 0.8, 0.7, 0.5, 0.55]
    assert flips["confidence_b"].tolist() == [0.7, 0.6, 0.5, 0.45, 0.9]
    assert flips["pattern"].tolist() == ["negated", "plain", "plain", "negated", "plain"]
    assert flips["style"].tolist() == ["terse", "chatty", "chatty", "terse", "chatty"]

    s = compare_tables(a, b, TEAMS, TEAMS, resamples=200)
    assert (s["flips"]["fixed"], s["flips"]["broken"], s["flips"]["both_wrong"]) == (2, 2, 1)
    assert s["flips"]["by_team"] == {"red": {"fixed": 1, "broken": 0, "both_wrong": 1},
                                     "green": {"fixed": 1, "broken": 1, "both_wrong": 0},
                                     "blue": {"fixed": 0, "broken": 1, "both_wrong": 0}}
    assert s["flips"]["by_pattern"] == {"negated": {"fixed": 1, "broken": 0, "both_wrong": 1},
                                        "plain": {"fixed": 1, "broken": 2, "both_wrong": 0}}
    assert s["flips"]["by_style"] == {"chatty": {"fixed": 1, "broken": 2, "both_wrong": 0},
                                      "terse": {"fixed": 1, "broken": 0, "both_wrong": 1}}
    assert s["mcnemar"] == {"a_right_b_wrong": 2, "b_right_a_wrong": 2, "p": 1.0, "p_unrounded": 1.0}
    assert s["agreement"]["same_team"] == 0.375                          # tickets 0, 3, 5
    # the agreed tickets' confidence moved by +0.05, -0.1, +0.2
    assert s["agreement"]["confidence_shift"]["n"] == 3
    assert s["agreement"]["confidence_shift"]["mean"] == round((0.05 - 0.1 + 0.2) / 3, 4)
    assert s["agreement"]["confidence_shift"]["median"] == 0.05
    assert s["routers"]["a"]["accuracy"]["value"] == 0.375 == s["routers"]["b"]["accuracy"]["value"]  # 0, 2, 4 | 0, 1, 7


def test_no_style_or_pattern_no_grouping():
    a, b = random_pair(50, TEAMS, seed=1)
    s = compare_tables(a, b, TEAMS, TEAMS, resamples=50)
    assert "by_style" not in s["flips"] and "by_pattern" not in s["flips"]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mcnemar_p_is_scipy_s_exact_binomial_test(seed):
    a, b = random_pair(300, TEAMS, seed=seed, accuracy_a=0.75, accuracy_b=0.75 + 0.03 * seed)
    s = compare_tables(a, b, TEAMS, TEAMS, resamples=20)
    ra, rb = a["correct"].to_numpy(), b["correct"].to_numpy()
    broken, fixed = int((ra & ~rb).sum()), int((~ra & rb).sum())
    assert s["mcnemar"]["a_right_b_wrong"] == broken and s["mcnemar"]["b_right_a_wrong"] == fixed
    p = binomtest(min(broken, fixed), broken + fixed, 0.5).pvalue
    assert s["mcnemar"]["p"] == round(p, 4) and s["mcnemar"]["p_unrounded"] == pytest.approx(p, rel=1e-9)


@pytest.mark.parametrize("p, text", [(5.4e-05, "p = 5.4e-05"), (1e-74, "p = 1.0e-74"), (0.0001, "p = 0.0001"),
                                     (0.01234, "p = 0.0123"), (1.0, "p = 1.0000")])
def test_p_text_is_one_format_for_every_p(p, text):
    assert p_text(p) == text


def test_the_verdict_writes_the_unrounded_p_as_p_text_does():
    # The Compare page's card wrote the rounded p ("p = 0.0001") under a verdict that read "p = 5.4e-05".
    a, b = random_pair(400, TEAMS, seed=3, accuracy_a=0.6, accuracy_b=0.9)
    s = compare_tables(a, b, TEAMS, TEAMS, resamples=20)
    mc = s["mcnemar"]
    assert mc["p_unrounded"] < 1e-4 and mc["p"] in (0.0, 0.0001)
    assert f"McNemar's exact test {p_text(mc['p_unrounded'])} on" in s["verdict"]
    assert "e-" in p_text(mc["p_unrounded"])


def test_point_estimates_are_sklearn_s_and_ticketnet_metrics():
    a, b = random_pair(400, TEAMS, seed=7)
    s = compare_tables(a, b, TEAMS, TEAMS, resamples=20)
    for key, t in (("a", a), ("b", b)):
        r = s["routers"][key]
        assert r["accuracy"]["value"] == round(t["correct"].mean(), 4)
        assert r["macro_f1"]["value"] == round(f1_score(t["team"], t["predicted"], labels=list(TEAMS),
                                                        average="macro", zero_division=0), 4)
        probs = t[[f"p_{x}" for x in TEAMS]].to_numpy()
        y = t["team"].map(TEAMS.index).to_numpy()
        assert r["ece"]["value"] == round(expected_calibration_error(probs, y), 4)
        for team in TEAMS:
            pt = r["per_team"][team]
            assert pt["precision"]["value"] == round(precision_score(t["team"], t["predicted"], labels=[team],
                                                                     average="macro", zero_division=0), 4)
            assert pt["recall"]["value"] == round(recall_score(t["team"], t["predicted"], labels=[team],
                                                               average="macro", zero_division=0), 4)
            assert pt["support"] == int(t["team"].eq(team).sum())
    assert s["agreement"]["kappa"] == round(cohen_kappa_score(a["predicted"], b["predicted"]), 4)
    assert s["difference"]["accuracy"]["value"] == round(b["correct"].mean() - a["correct"].mean(), 4)


def test_bootstrap_is_the_naive_resampling_loop():
    # The vectorised pass against one resample at a time with sklearn, on the same seeded ticket indices.
    a, b = random_pair(120, TEAMS, seed=3)
    resamples, seed = 300, 11
    s = compare_tables(a, b, TEAMS, TEAMS, resamples=resamples, seed=seed)
    idx = np.random.default_rng(seed).integers(0, len(a), size=(resamples, len(a)))
    acc_a, f1_b, diff, rec_red = [], [], [], []
    for row in idx:
        ra, rb = a.iloc[row], b.iloc[row]
        acc_a.append(ra["correct"].mean())
        f1_b.append(f1_score(rb["team"], rb["predicted"], labels=list(TEAMS), average="macro", zero_division=0))
        diff.append(rb["correct"].mean() - ra["correct"].mean())
        rec_red.append(recall_score(ra["team"], ra["predicted"], labels=["red"], average="macro", zero_division=0))

    def interval(x):
        return [round(v, 4) for v in np.percentile(x, [2.5, 97.5])]

    assert [s["routers"]["a"]["accuracy"]["low"], s["routers"]["a"]["accuracy"]["high"]] == interval(acc_a)
    assert [s["routers"]["b"]["macro_f1"]["low"], s["routers"]["b"]["macro_f1"]["high"]] == interval(f1_b)
    assert [s["difference"]["accuracy"]["low"], s["difference"]["accuracy"]["high"]] == interval(diff)
    red = s["routers"]["a"]["per_team"]["red"]["recall"]
    assert [red["low"], red["high"]] == interval(rec_red)


def _intervals(s):
    for key in ("a", "b"):
        r = s["routers"][key]
        yield from (r["accuracy"], r["macro_f1"], r["ece"])
        for team in r["per_team"].values():
            yield from (team["precision"], team["recall"])
    yield from s["difference"].values()


def test_bootstrap_intervals_contain_the_estimate_and_shrink_with_n():
    a, b = random_pair(200, TEAMS, seed=5)
    big_a = pd.concat([a.assign(ticket_id=a["ticket_id"] + f"-{k}") for k in range(16)], ignore_index=True)
    big_b = pd.concat([b.assign(ticket_id=b["ticket_id"] + f"-{k}") for k in range(16)], ignore_index=True)
    small = compare_tables(a, b, TEAMS, TEAMS, resamples=1000, seed=2)
    large = compare_tables(big_a, big_b, TEAMS, TEAMS, resamples=1000, seed=2)
    assert small["n"] == 200 and large["n"] == 3200
    for s in (small, large):
        for iv in _intervals(s):
            assert iv["low"] <= iv["value"] <= iv["high"], iv
    for iv_small, iv_large in zip(_intervals(small), _intervals(large)):
        # same point estimates (the same tickets sixteen times), a quarter of the width give or take the sampling
        assert iv_small["value"] == iv_large["value"]
        assert iv_large["high"] - iv_large["low"] < 0.45 * (iv_small["high"] - iv_small["low"]), (iv_small, iv_large)


def test_seeded():
    a, b = random_pair(150, TEAMS, seed=9)
    assert compare_tables(a, b, TEAMS, TEAMS, resamples=100, seed=4) == compare_tables(a, b, TEAMS, TEAMS,
                                                                                       resamples=100, seed=4)
    assert compare_tables(a, b, TEAMS, TEAMS, resamples=100, seed=4) != compare_tables(a, b, TEAMS, TEAMS,
                                                                                       resamples=100, seed=5)


def test_identical_routers():
    a, _ = random_pair(300, TEAMS, seed=2)
    s = compare_tables(a, a.copy(), TEAMS, TEAMS, resamples=200)
    assert s["mcnemar"] == {"a_right_b_wrong": 0, "b_right_a_wrong": 0, "p": 1.0, "p_unrounded": 1.0}
    assert (s["flips"]["fixed"], s["flips"]["broken"], s["flips"]["both_wrong"]) == (0, 0, 0)
    assert s["agreement"]["kappa"] == 1.0 and s["agreement"]["same_team"] == 1.0
    assert s["difference"]["accuracy"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert s["agreement"]["confidence_shift"]["mean"] == 0.0
    assert flip_table(a, a).empty
    assert s["verdict"].startswith("No significant difference")


def test_a_significant_improvement_says_so():
    a, b = random_pair(1000, TEAMS, seed=4, accuracy_a=0.7, accuracy_b=0.9)
    s = compare_tables(a, b, TEAMS, TEAMS, resamples=200)
    assert s["mcnemar"]["p"] < 0.05 and s["verdict"].startswith("B routes significantly better than A")
    assert compare_tables(b, a, TEAMS, TEAMS, resamples=200)["verdict"].startswith("B routes significantly worse")


def test_different_team_sets_compare_on_the_shared_teams():
    ids = [f"D-{i}" for i in range(6)]
    team = ["red", "green", "blue", "gold", "red", "green"]
    teams_a, teams_b = ("red", "green", "blue"), ("green", "red", "gold")
    # A cannot know "gold", B cannot know "blue": tickets 2 and 3 leave; B's "gold" for ticket 4 counts as wrong.
    a = table(ids, team, ["red", "green", "blue", "red", "red", "blue"], [0.9] * 6, teams_a)
    b = table(ids, team, ["red", "green", "gold", "gold", "gold", "green"], [0.8] * 6, teams_b)
    s = compare_tables(a, b, teams_a, teams_b, resamples=100)
    assert s["teams"] == {"shared": ["red", "green"], "only_a": ["blue"], "only_b": ["gold"],
                          "tickets_outside_shared": 2}
    assert s["n"] == 4
    assert s["routers"]["a"]["accuracy"]["value"] == 0.75 and s["routers"]["b"]["accuracy"]["value"] == 0.75
    assert set(s["routers"]["a"]["per_team"]) == {"red", "green"}
    assert s["mcnemar"]["a_right_b_wrong"] == 1 and s["mcnemar"]["b_right_a_wrong"] == 1
    assert flip_table(a, b, teams_a, teams_b)["ticket_id"].tolist() == ["D-4", "D-5"]
    # B's precision for red: one right "red" and no other "red" prediction; A's: two "red", one right on shared
    assert s["routers"]["b"]["per_team"]["red"]["precision"]["value"] == 1.0
    assert s["routers"]["a"]["per_team"]["red"]["precision"]["value"] == 1.0


def test_no_shared_team_is_one_clear_line():
    a = table(["X-1"], ["red"], ["red"], [0.9], ("red", "blue"))
    b = table(["X-1"], ["red"], ["gold"], [0.9], ("gold", "grey"))
    with pytest.raises(ValueError, match="share no team") as info:
        compare_tables(a, b, ("red", "blue"), ("gold", "grey"))
    assert "\n" not in str(info.value)


def test_different_tickets_are_refused():
    a, b = random_pair(20, TEAMS, seed=0)
    with pytest.raises(ValueError, match="different tickets"):
        compare_tables(a, b.iloc[1:], TEAMS, TEAMS)
    with pytest.raises(ValueError, match="twice"):
        compare_tables(pd.concat([a, a.iloc[:1]]), b, TEAMS, TEAMS)


def test_the_differences_are_of_the_figures_shown():
    a, b = random_pair(500, TEAMS, seed=12)
    s = compare_tables(a, b, TEAMS, TEAMS, resamples=50)
    for m in ("accuracy", "macro_f1", "ece"):
        shown = s["routers"]["b"][m]["value"] - s["routers"]["a"][m]["value"]
        assert abs(s["difference"][m]["value"] - shown) <= 1e-4 + 1e-12, m
