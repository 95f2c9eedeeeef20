"""The Corpus page's charts, checked on their Vega-Lite specs."""

from __future__ import annotations

import pandas as pd

from dashboard.charts import corpus as corpus_charts

SUMMARY = {"teams": ["payments", "delivery"], "tickets": 10, "routing": {"payments": 6, "delivery": 4},
           "confidence_hist": {"edges": [0.0, 0.5, 1.0], "counts": [3, 7]},
           "tau": {"rollout": {"mean": 0.04, "count": 9}, "random": {"mean": 0.0, "count": 9},
                   "b1 h1": {"mean": None, "count": 0}}}
TOKENS = pd.DataFrame({"team": ["payments", "payments", "delivery"], "token": ["refund", "the", "parcel"],
                       "tickets": [5, 9, 4], "mean_effect": [0.3, 0.001, 0.2], "median_effect": [0.25, 0.0, 0.2],
                       "mean_rollout": [0.05, 0.09, 0.04], "top_effect_share": [0.6, 0.0, 0.5]})


def test_summary_charts_carry_the_counts():
    spec = corpus_charts.routing_chart(SUMMARY).to_dict()
    assert spec["mark"]["type"] == "bar" and spec["encoding"]["y"]["sort"] == ["payments", "delivery"]
    assert corpus_charts.routing_frame(SUMMARY)["share"].tolist() == [0.6, 0.4]
    conf = corpus_charts.confidence_chart(SUMMARY).to_dict()
    assert conf["encoding"]["x2"]["field"] == "end"
    assert corpus_charts.histogram_frame([0.0, 0.5, 1.0], [3, 7])["tickets"].tolist() == [3, 7]
    assert corpus_charts.tau_frame(SUMMARY)["signal"].tolist() == ["rollout", "random"]      # no τ: left out
    assert corpus_charts.tau_chart(SUMMARY).to_dict()["mark"]["type"] == "bar"


def test_the_reliance_chart_puts_attention_on_x_effect_on_y_and_draws_the_diagonal():
    df = corpus_charts.reliance_frame(TOKENS, "payments", min_tickets=5)
    assert df["token"].tolist() == ["refund", "the"]
    assert df["effect minus attention"].round(3).tolist() == [0.25, -0.089]
    spec = corpus_charts.reliance_chart(df, "payments").to_dict()
    diagonal, points = spec["layer"]
    assert diagonal["mark"]["type"] == "line" and points["mark"]["type"] == "circle"
    enc = points["encoding"]
    assert enc["x"]["field"] == "mean_rollout" and enc["y"]["field"] == "mean_effect" and enc["size"]["field"] == "tickets"
    assert {t["field"] for t in enc["tooltip"]} >= {"token", "tickets", "mean_effect", "median_effect", "mean_rollout"}
    assert corpus_charts.reliance_frame(TOKENS, "payments", min_tickets=6)["token"].tolist() == ["the"]
