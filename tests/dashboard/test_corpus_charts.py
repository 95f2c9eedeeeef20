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


def test_the_routing_mix_names_every_team():
    # The default overlap rule dropped every other label ("delivery", "product") in a 160 px tall chart.
    summary = {**SUMMARY, "teams": ["payments", "delivery", "returns", "product", "account"],
               "routing": {"payments": 584, "delivery": 617, "returns": 618, "product": 582, "account": 599}}
    spec = corpus_charts.routing_chart(summary).to_dict()
    y = spec["encoding"]["y"]
    assert y["axis"]["labelOverlap"] is False and y["axis"]["labelLimit"] >= 100
    assert spec["height"] == {"step": 26}                  # a band per team, however many teams


def test_ticket_counts_are_whole_on_every_axis_and_legend():
    # A 20-ticket scan drew ticks at 0.5, 1.5 … tickets.
    small = {**SUMMARY, "tickets": 3, "routing": {"payments": 2, "delivery": 1},
             "confidence_hist": {"edges": [0.0, 0.5, 1.0], "counts": [1, 2]}}
    for spec, channel in ((corpus_charts.routing_chart(small).to_dict(), "x"),
                          (corpus_charts.confidence_chart(small).to_dict(), "y")):
        axis = spec["encoding"][channel]["axis"]
        assert axis["format"] == ",d" and axis["tickMinStep"] == 1
    size = corpus_charts.reliance_chart(corpus_charts.reliance_frame(TOKENS, "payments"), "payments").to_dict()
    legend = size["layer"][1]["encoding"]["size"]["legend"]
    assert legend["values"] == [2, 4, 6, 8] and legend["format"] == ",d"
    assert corpus_charts.count_legend_values(1) == [1]
    assert corpus_charts.count_legend_values(3) == [1, 2, 3]
    assert corpus_charts.count_legend_values(20) == [5, 10, 15, 20]
    assert corpus_charts.count_legend_values(500) == [200, 400]
    assert all(0 < v <= 12_345 and isinstance(v, int) for v in corpus_charts.count_legend_values(12_345))
    assert len(corpus_charts.count_legend_values(12_345)) <= 4


def test_the_word_scatter_keeps_the_column_width_with_its_legends_below():
    # Beside the plot, the two legends left it about 80 px of a 310 px column at 1000 px, the size legend over
    # the x axis title.
    spec = corpus_charts.reliance_chart(corpus_charts.reliance_frame(TOKENS, "payments"), "payments").to_dict()
    assert spec["width"] == corpus_charts.RELIANCE_PX <= 520            # the main column at 1000 px is 540 px
    points = spec["layer"][1]["encoding"]
    assert points["size"]["legend"]["orient"] == "bottom" and points["color"]["legend"]["orient"] == "bottom"
    assert corpus_charts.SUMMARY_PX <= 520 and corpus_charts.RELIANCE_PX + 16 + corpus_charts.RELIANCE_TABLE_PX <= 906
    title = corpus_charts.confidence_chart(SUMMARY).to_dict()["encoding"]["x"]["title"]
    assert isinstance(title, list) and max(map(len, title)) <= 36     # two lines: no "onfidence (probability of…"


def test_an_empty_word_view_says_why_and_what_to_change():
    # 20 tickets: no word reaches the default 5 tickets, and the page drew an empty scatter with a "NaN" legend.
    assert corpus_charts.reliance_frame(TOKENS, "delivery", 5).empty
    why = corpus_charts.empty_reliance_reason(TOKENS, "delivery", 5, routed=4)
    assert why == ("No word of the 4 tickets routed to delivery is in 5 or more of them (the most seen is in 4): "
                   "set “Tokens seen in at least … tickets” to 4 or lower.")
    assert "\n" not in why
    assert not corpus_charts.reliance_frame(TOKENS, "delivery", 4).empty       # what it says to do works
    assert "pick another team" in corpus_charts.empty_reliance_reason(TOKENS, "returns", 5, routed=0)
