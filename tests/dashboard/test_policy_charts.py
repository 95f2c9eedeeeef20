"""The Routing policy page's charts, checked on their Vega-Lite specs (small tables written by hand)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dashboard.charts import policy as policy_charts
from ticketnet.interpret.signals import RANDOM

# Four tickets, confidence 0.9, 0.8, 0.7, 0.6, the third misrouted: the curve of `risk_coverage`'s shape.
CURVE = pd.DataFrame({"threshold": [0.9, 0.8, 0.7, 0.6], "auto_routed": [1, 2, 3, 4],
                      "coverage": [0.25, 0.5, 0.75, 1.0], "errors": [0, 0, 1, 1], "risk": [0.0, 0.0, 1 / 3, 0.25]})
REFERENCE = pd.DataFrame({"coverage": [0.25, 0.5, 0.75, 1.0, 0.25, 0.5, 0.75, 1.0],
                          "risk": [0.0, 0.0, 0.0, 0.25, 0.25, 0.25, 0.25, 0.25],
                          "ranking": ["oracle"] * 4 + ["random"] * 4})
PER_TEAM = {
    "Billing & Refunds": {"threshold": 0.71, "coverage": {"value": 0.8, "low": 0.7, "high": 0.9},
                          "precision": {"value": 0.99, "low": 0.97, "high": 1.0}, "auto_routed": 80, "misroutes": 1,
                          "predicted": 100},
    "a:b": {"threshold": float("inf"), "coverage": {"value": 0.0, "low": 0.0, "high": 0.0},
            "precision": {"value": None, "low": None, "high": None}, "auto_routed": 0, "misroutes": 0,
            "predicted": 7},
}


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def test_the_curves_frame_holds_the_router_and_both_references_by_name():
    df = policy_charts.curves_frame(CURVE, REFERENCE)
    assert list(df.columns) == ["coverage", "risk", "ranking"]
    assert df["ranking"].tolist() == ["this router"] * 4 + ["oracle"] * 4 + ["random"] * 4
    mine = df[df["ranking"] == "this router"]
    assert mine["risk"].tolist() == pytest.approx([0.0, 0.0, 1 / 3, 0.25])


def test_a_long_curve_is_thinned_with_both_ends_kept():
    n = 1500
    long = pd.DataFrame({"coverage": np.arange(1, n + 1) / n, "risk": np.linspace(0, 0.06, n)})
    df = policy_charts.curves_frame(long, REFERENCE.iloc[:0])
    assert len(df) == policy_charts.CURVE_POINTS
    assert df["coverage"].iloc[0] == pytest.approx(1 / n) and df["coverage"].iloc[-1] == pytest.approx(1.0)
    assert df["risk"].is_monotonic_increasing


def test_the_risk_coverage_chart_colours_each_ranking_and_marks_the_operating_point():
    spec = policy_charts.risk_coverage_chart(CURVE, REFERENCE, {"coverage": 0.5, "risk": 0.02}).to_dict()
    lines, dot, label = spec["layer"]
    color = lines["encoding"]["color"]
    assert color["field"] == "ranking"
    assert color["scale"]["domain"] == ["this router", "oracle", "random"]
    assert color["scale"]["range"][2] == RANDOM.color                   # the registry's grey of the random baseline
    assert lines["encoding"]["x"]["field"] == "coverage" and lines["encoding"]["y"]["field"] == "risk"
    assert dot["mark"]["type"] == "point" and dot["mark"]["color"] == policy_charts.POINT_COLOR
    data = spec["datasets"]
    points = [rows for rows in data.values() if rows and "label" in rows[0]]
    assert points == [[{"coverage": 0.5, "risk": 0.02, "label": "operating point"}]]
    assert label["mark"]["type"] == "text" and label["mark"]["align"] == "left"
    # the y axis reaches the highest risk drawn (the router's 1/3), however low the point
    assert spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1] == pytest.approx(1 / 3 * 1.08)


def test_without_an_operating_point_only_the_curves_are_drawn():
    spec = policy_charts.risk_coverage_chart(CURVE, REFERENCE).to_dict()
    assert len(_layers(spec)) == 1


def test_a_point_near_the_right_edge_is_labelled_on_its_left():
    spec = policy_charts.risk_coverage_chart(CURVE, REFERENCE, {"coverage": 0.95, "risk": 0.01}).to_dict()
    assert spec["layer"][2]["mark"]["align"] == "right"


def test_the_per_team_frame_keeps_the_team_order_and_names_a_never_threshold():
    df = policy_charts.per_team_frame(PER_TEAM, ["a:b", "Billing & Refunds", "absent"])
    assert df["team"].tolist() == ["a:b", "Billing & Refunds"]
    never = df.iloc[0]
    assert math.isnan(never["threshold"]) and never["threshold_label"] == "never"
    assert math.isnan(never["precision"]) and never["predicted"] == 7
    billing = df.iloc[1]
    assert billing["threshold_label"] == "0.710" and billing["coverage_low"] == 0.7 and billing["misroutes"] == 1


def test_the_per_team_chart_draws_threshold_coverage_and_precision_with_intervals_on_one_team_axis():
    df = policy_charts.per_team_frame(PER_TEAM, list(PER_TEAM))
    spec = policy_charts.team_thresholds_chart(df, target_precision=0.98).to_dict()
    threshold, coverage, precision = spec["hconcat"]
    assert threshold["layer"][0]["encoding"]["y"]["sort"] == list(PER_TEAM)
    assert threshold["layer"][0]["encoding"]["y"]["field"] == "team"   # a name with ":" stays data, never a field
    never = threshold["layer"][1]
    assert never["mark"]["type"] == "text" and never["encoding"]["text"]["field"] == "threshold_label"
    rule, dot = coverage["layer"]
    assert rule["encoding"]["x"]["field"] == "coverage_low" and rule["encoding"]["x2"]["field"] == "coverage_high"
    assert dot["encoding"]["x"]["field"] == "coverage"
    bars, target = precision["layer"]
    assert bars["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0.9, 1]   # 0.97, the target 0.98: 90 % floor
    assert target["mark"]["type"] == "rule" and target["encoding"]["x"]["field"] == "target"
    assert spec["resolve"]["scale"]["y"] == "shared"


def test_the_precision_axis_reaches_down_to_a_low_target_or_interval():
    df = policy_charts.per_team_frame(PER_TEAM, list(PER_TEAM))
    spec = policy_charts.team_thresholds_chart(df, target_precision=0.83).to_dict()
    assert spec["hconcat"][2]["layer"][0]["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0.8, 1]
    spec = policy_charts.team_thresholds_chart(df).to_dict()
    assert "layer" not in spec["hconcat"][2]["layer"][0]                 # no target: no target line


def test_the_set_size_frame_shares_by_split_with_every_size_filled():
    reports = {"test": {"size_counts": {1: 6, 2: 4}, "n": 10},
               "handwritten": {"size_counts": {0: 1, 1: 2, 3: 1}, "n": 4}}
    df = policy_charts.set_size_frame(reports)
    test = df[df["split"] == "test"]
    assert test["size"].tolist() == [0, 1, 2, 3] and test["tickets"].tolist() == [0, 6, 4, 0]
    hand = df[df["split"] == "handwritten"]
    assert hand["share"].tolist() == pytest.approx([0.25, 0.5, 0.0, 0.25])
    assert policy_charts.set_size_frame({"test": {"size_counts": {}, "n": 0}}).empty


def test_the_set_size_chart_puts_the_splits_side_by_side_in_their_order():
    df = policy_charts.set_size_frame({"test": {"size_counts": {1: 9, 2: 1}, "n": 10},
                                       "handwritten": {"size_counts": {1: 1}, "n": 1}})
    spec = policy_charts.set_size_chart(df).to_dict()
    assert spec["mark"]["type"] == "bar"
    enc = spec["encoding"]
    assert enc["x"]["field"] == "size" and enc["xOffset"]["field"] == "split"
    assert enc["color"]["scale"]["domain"] == ["test", "handwritten"]
    assert enc["y"]["field"] == "share" and enc["y"]["axis"]["format"] == ".0%"


def test_every_mark_colour_is_fixed_so_it_reads_on_both_themes():
    # The Streamlit theme recolours axes and legends, not marks: a mark left to Vega's default would be near-black
    # text on the dark theme. Every text mark names its colour.
    specs = [policy_charts.risk_coverage_chart(CURVE, REFERENCE, {"coverage": 0.5, "risk": 0.02}).to_dict(),
             policy_charts.team_thresholds_chart(policy_charts.per_team_frame(PER_TEAM, list(PER_TEAM)), 0.98).to_dict()]

    def marks(node):
        if isinstance(node, dict):
            if "mark" in node:
                yield node["mark"]
            for v in node.values():
                yield from marks(v)
        elif isinstance(node, list):
            for v in node:
                yield from marks(v)

    texts = [m for s in specs for m in marks(s) if isinstance(m, dict) and m.get("type") == "text"]
    assert texts and all("color" in m for m in texts)
    # the specs validate against the Vega-Lite schema (building them checked the parts; this checks the whole)
    for chart in (policy_charts.risk_coverage_chart(CURVE, REFERENCE, {"coverage": 0.5, "risk": 0.02}),
                  policy_charts.team_thresholds_chart(policy_charts.per_team_frame(PER_TEAM, list(PER_TEAM)), 0.98),
                  policy_charts.set_size_chart(policy_charts.set_size_frame({"t": {"size_counts": {1: 1}, "n": 1}}))):
        assert isinstance(chart.to_dict(validate=True), dict)
