"""The corpus scan carries each labelled ticket's label confidence (the router's probability of its given team), and
the ticket query filters the labels the router doubts."""

from __future__ import annotations

import math

import pytest


@pytest.mark.parametrize("level", ["route", "effects"])
def test_the_scan_carries_the_given_team_s_probability(router, valid_rows, level):
    from ticketnet.corpus.scan import scan_rows

    rows = [dict(r) for r in valid_rows[:12]]
    rows[3]["team"] = None                                     # an unlabelled ticket
    rows[5]["team"] = router.teams[(router.teams.index(rows[5]["team"]) + 1) % len(router.teams)]   # a wrong one
    got = scan_rows(router, rows, 0, level).tickets
    probs = router.predict_texts([r["text"] for r in rows])
    for i, r in enumerate(rows):
        value = got["label_confidence"].iloc[i]
        if r["team"] is None:
            assert math.isnan(value)
        else:
            assert value == pytest.approx(float(probs[i, router.teams.index(r["team"])]), abs=1e-5)
    assert got["label_confidence"].iloc[5] < 0.5


def test_the_query_filters_labels_the_router_doubts(artifacts, valid_rows, tmp_path):
    import csv

    from ticketnet.corpus.engine import run_scan
    from ticketnet.corpus.query import Filters, has_label_confidence, open_scan, tickets

    src = tmp_path / "in.csv"
    with src.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ticket_id", "text", "team"])
        for r in valid_rows[:80]:
            w.writerow([r["ticket_id"], r["text"], r["team"]])
    run_scan(src, tmp_path / "scan", level="route", scheduler="synchronous", weights=artifacts.weights)
    scan = open_scan(tmp_path / "scan")
    assert has_label_confidence(scan)
    everything, n = tickets(scan, Filters())
    assert n == 80 and "label_confidence" in everything.columns
    doubted, m = tickets(scan, Filters(label_confidence_below=0.5))
    assert m == int((everything["label_confidence"] < 0.5).sum()) and (doubted["label_confidence"] < 0.5).all()
    assert m < n
