"""The Label issues page's charts: built from cleanlab's tables, every team named, the matrix symmetric."""

from __future__ import annotations

import pandas as pd

from dashboard.charts import labels as charts

TEAMS = ["Billing & Refunds", "a:b", "team.with.dots", "<b>bold</b>"]


def test_the_overlap_matrix_is_symmetric_with_an_empty_diagonal():
    pairs = pd.DataFrame({"team_a": ["a:b", "<b>bold</b>"], "team_b": ["Billing & Refunds", "a:b"],
                          "tickets": [12, 3], "joint": [0.02, 0.005]})
    df = charts.overlap_frame(pairs, TEAMS)
    assert len(df) == len(TEAMS) * (len(TEAMS) - 1)
    cell = {(r.team, r._2): r.tickets for r in df.itertuples()}
    assert cell[("a:b", "Billing & Refunds")] == cell[("Billing & Refunds", "a:b")] == 12
    assert cell[("<b>bold</b>", "a:b")] == 3 and cell[("team.with.dots", "a:b")] == 0
    spec = charts.overlap_chart(pairs, TEAMS).to_dict()
    assert spec["layer"][0]["encoding"]["x"]["sort"] == TEAMS


def test_quality_is_sorted_worst_first():
    quality = pd.DataFrame({"team": TEAMS, "label_quality": [0.99, 0.9, 0.95, 0.97], "label_noise": [0.01, 0.1, 0.05, 0.03],
                            "label_issues": [1, 10, 5, 3], "tickets": [100] * 4})
    assert charts.quality_frame(quality)["team"].tolist() == ["a:b", "team.with.dots", "<b>bold</b>",
                                                             "Billing & Refunds"]
    spec = charts.quality_chart(quality).to_dict()
    assert spec["encoding"]["y"]["sort"][0] == "a:b"
    assert spec["encoding"]["x"]["field"] == "wrong_share" and spec["encoding"]["x"]["scale"]["domain"][0] == 0
