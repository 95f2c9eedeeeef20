"""The baseline beside every router: chosen on valid, reported per split in the router's team order, bounded."""

from __future__ import annotations

import pytest

from ticketnet import baseline

TEAMS = ("billing", "network")
WORDS = {"billing": "invoice charge refund bill payment", "network": "outage router signal wifi slow"}


def rows(n: int, offset: int = 0) -> list[dict]:
    out = []
    for i in range(n):
        team = TEAMS[i % 2]
        words = WORDS[team].split()
        out.append({"ticket_id": f"{offset + i}", "team": team,
                    "text": f"{words[i % 5]} {words[(i + 2) % 5]} please help number {i}"})
    return out


def test_the_baseline_routes_separable_tickets_and_reports_every_split():
    base = baseline.fit_baseline(rows(60), rows(20, 100), TEAMS, {"valid": rows(20, 100), "test": rows(20, 200)})
    assert base["C"] in baseline.C_GRID and set(base["valid_accuracy_by_C"]) == {str(c) for c in baseline.C_GRID}
    assert base["metrics"]["test"]["accuracy"] == 1.0 and base["metrics"]["test"]["n"] == 20
    assert list(base["metrics"]["test"]["recall"]) == list(TEAMS)
    assert base["train_tickets"] == base["train_tickets_available"] == 60


def test_a_team_absent_from_train_gets_probability_zero_in_its_column():
    three = ("billing", "network", "moving")
    base = baseline.fit_baseline(rows(40), rows(10, 100), three,
                                 {"test": rows(10, 200) + [{"ticket_id": "m", "team": "moving", "text": "moving house"}]})
    assert base["metrics"]["test"]["recall"]["moving"] == 0.0


def test_a_large_train_split_is_sampled_to_the_bound(monkeypatch):
    monkeypatch.setattr(baseline, "MAX_TRAIN", 30)
    base = baseline.fit_baseline(rows(100), rows(20, 1000), TEAMS, {"test": rows(20, 2000)})
    assert (base["train_tickets"], base["train_tickets_available"]) == (30, 100)
    assert base["metrics"]["test"]["accuracy"] == pytest.approx(1.0)
