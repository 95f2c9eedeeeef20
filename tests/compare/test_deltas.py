"""Per-team B − A precision and recall with paired bootstrap intervals, against compare_tables and by hand."""

from __future__ import annotations

import numpy as np
import pytest

from tests.compare.helpers import random_pair, table

TEAMS = ("billing", "network", "access", "hardware")


def test_point_deltas_equal_compare_tables_per_team_figures():
    from ticketnet.compare import compare_tables, team_deltas

    a, b = random_pair(400, TEAMS, seed=1)
    found = team_deltas(a, b, TEAMS, TEAMS, resamples=500)
    summary = compare_tables(a, b, TEAMS, TEAMS, resamples=200)
    for row in found.itertuples():
        per_a = summary["routers"]["a"]["per_team"][row.team][row.measure]["value"]
        per_b = summary["routers"]["b"]["per_team"][row.team][row.measure]["value"]
        assert row.a == pytest.approx(per_a, abs=1e-4) and row.b == pytest.approx(per_b, abs=1e-4)
        assert row.delta == pytest.approx(per_b - per_a, abs=2e-4)
        assert row.low <= row.delta <= row.high
        assert row.support == summary["routers"]["a"]["per_team"][row.team]["support"]


def test_intervals_are_paired_shrink_with_n_and_vanish_for_one_router_against_itself():
    from ticketnet.compare import team_deltas

    a, _ = random_pair(300, TEAMS, seed=2)
    same = team_deltas(a, a.copy(), TEAMS, TEAMS, resamples=300)
    assert (same[["delta", "low", "high"]] == 0).all().all()        # paired: every resample's difference is 0
    small = team_deltas(*random_pair(200, TEAMS, seed=3), TEAMS, TEAMS, resamples=400)
    large = team_deltas(*random_pair(5000, TEAMS, seed=3), TEAMS, TEAMS, resamples=400)
    assert (large["high"] - large["low"]).mean() < 0.5 * (small["high"] - small["low"]).mean()


def test_by_hand_on_a_small_split_with_a_team_only_b_knows():
    from ticketnet.compare import team_deltas

    ids = [f"T-{i}" for i in range(6)]
    truth = ["x", "x", "y", "y", "y", "z"]
    a = table(ids, truth, ["x", "y", "y", "y", "x", "x"], [0.9] * 6, ("x", "y"))
    b = table(ids, truth, ["x", "x", "y", "z", "y", "z"], [0.8] * 6, ("x", "y", "z"))
    found = team_deltas(a, b.iloc[::-1], ("x", "y"), ("x", "y", "z"), resamples=50).set_index(["team", "measure"])
    # shared teams x, y; ticket T-5 (true z) is left out; B's "z" on T-3 counts as wrong
    assert found.loc[("x", "recall"), ["a", "b"]].tolist() == [0.5, 1.0]
    assert found.loc[("y", "recall"), ["a", "b"]].tolist() == pytest.approx([2 / 3, 2 / 3], abs=1e-4)
    assert found.loc[("x", "precision"), ["a", "b"]].tolist() == [0.5, 1.0]          # T-5 is not counted
    assert found.loc[("y", "precision"), ["a", "b"]].tolist() == pytest.approx([2 / 3, 1.0], abs=1e-4)
    assert found.loc[("y", "recall"), "support"] == 3


def test_different_tickets_or_no_shared_team_are_refused():
    from ticketnet.compare import team_deltas

    a, b = random_pair(20, TEAMS, seed=4)
    with pytest.raises(ValueError, match="same tickets"):
        team_deltas(a, b.iloc[1:], TEAMS, TEAMS)
    with pytest.raises(ValueError, match="share no team"):
        team_deltas(a, b, TEAMS, ("other",))
    assert np.isfinite(team_deltas(a, b, TEAMS, TEAMS, resamples=10)["low"]).all()
