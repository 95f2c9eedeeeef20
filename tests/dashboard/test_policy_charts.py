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
                          "ranking": ["oracle"] * 4 + ["random ranking"] * 4})
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
    assert df["ranking"].tolist() == ["this router"] * 4 + ["oracle"] * 4 + ["random ranking"] * 4
    mine = df[df["ranking"] == "this router"]
    assert mine["risk"].tolist() == pytest.approx([0.0, 0.0, 1 / 3, 0.25])


def test_a_long_curve_is_thinned_with_both_ends_kept():
    n = 1500
    long = pd.DataFrame({"coverage": np.arange(1, n + 1) / n, "risk": np.linspace(0, 0.06, n)})
    df = policy_charts.curves_frame(long, REFERENCE.iloc[:0])
    assert len(df) == policy_charts.CURVE_POINTS
    assert df["coverage"].iloc[0] == pytest.approx(1 / n) and df["coverage"].iloc[-1] == pytest.approx(1.0)
    assert df["risk"].is_monotonic_increasing


def _data_names(node) -> list[str]:
    """Every dataset name a spec's views refer to."""
    if isinstance(node, dict):
        own = [node["data"]["name"]] if isinstance(node.get("data"), dict) and "name" in node["data"] else []
        return own + [n for k, v in node.items() if k not in ("data", "datasets") for n in _data_names(v)]
    if isinstance(node, list):
        return [n for v in node for n in _data_names(v)]
    return []


def _named(spec: dict, name: str) -> list[dict]:
    return spec["datasets"][name]


def test_the_risk_coverage_chart_colours_each_ranking_and_marks_the_operating_point():
    spec = policy_charts.risk_coverage_chart(CURVE, REFERENCE, {"coverage": 0.5, "risk": 0.02}).to_dict()
    lines, dot, right, left = spec["layer"]
    color = lines["encoding"]["color"]
    assert color["field"] == "ranking"
    assert color["scale"]["domain"] == ["this router", "oracle", "random ranking"]
    assert color["scale"]["range"][2] == RANDOM.color                   # the registry's grey of the random baseline
    assert lines["encoding"]["x"]["field"] == "coverage" and lines["encoding"]["y"]["field"] == "risk"
    assert dot["mark"]["type"] == "point" and dot["mark"]["color"] == policy_charts.POINT_COLOR
    assert dot["data"] == {"name": policy_charts.POINT_DATA}
    assert _named(spec, policy_charts.POINT_DATA) == [{"coverage": 0.5, "risk": 0.02, "label": "operating point"}]
    assert right["mark"]["align"] == "left" and left["mark"]["align"] == "right"
    # the y axis reaches the highest risk drawn (the router's 1/3), however low the point, on a half-percent step
    top = lines["encoding"]["y"]["scale"]["domain"][1]
    assert 1 / 3 < top <= 1 / 3 * 1.05 + 0.005 and round(top * 200, 6) == int(round(top * 200))


def test_the_risk_axis_reaches_a_point_above_every_curve():
    assert policy_charts.risk_top(policy_charts.curves_frame(CURVE, REFERENCE), {"coverage": 0.3, "risk": 0.5}) >= 0.5


def test_without_an_operating_point_the_point_table_is_empty():
    spec = policy_charts.risk_coverage_chart(CURVE, REFERENCE).to_dict()
    assert _named(spec, policy_charts.POINT_DATA) == []


def test_fill_points_a_cached_template_at_this_runs_tables_under_names_that_change_with_them():
    curves = policy_charts.curves_frame(CURVE, REFERENCE)
    template = policy_charts.risk_coverage_template(curves, 0.4).to_dict()
    frozen = repr(template)
    one = policy_charts.fill(template, {policy_charts.POINT_DATA: policy_charts.point_frame({"coverage": 0.5,
                                                                                              "risk": 0.02})})
    two = policy_charts.fill(template, {policy_charts.POINT_DATA: policy_charts.point_frame({"coverage": 0.6,
                                                                                              "risk": 0.03})})
    again = policy_charts.fill(template, {policy_charts.POINT_DATA: policy_charts.point_frame({"coverage": 0.5,
                                                                                                "risk": 0.02})})
    assert repr(template) == frozen                                     # the cached template is left as it was
    name_one = one["layer"][1]["data"]["name"]
    assert name_one.startswith(policy_charts.POINT_DATA + "_") and name_one != two["layer"][1]["data"]["name"]
    assert again["layer"][1]["data"]["name"] == name_one
    assert one["datasets"][name_one]["coverage"].tolist() == [0.5]
    assert all(layer["data"]["name"] == name_one for layer in one["layer"][1:])
    assert len(one["datasets"]) == len(template["datasets"]) + 1         # the curves stay as the template had them


def test_a_point_near_the_right_edge_is_labelled_on_its_left():
    spec = policy_charts.risk_coverage_chart(CURVE, REFERENCE, {"coverage": 0.95, "risk": 0.01}).to_dict()
    left = spec["layer"][3]
    assert left["transform"] == [{"filter": f"datum.coverage > {policy_charts.LABEL_LEFT_FROM}"}]


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
    assert threshold["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0.5, 1]      # 0.71 → from 0.5
    assert never["encoding"]["x"] == {"datum": 0.5}                                   # "never" at the axis start
    rule, dot = coverage["layer"]
    assert rule["encoding"]["x"]["field"] == "coverage_low" and rule["encoding"]["x2"]["field"] == "coverage_high"
    assert dot["encoding"]["x"]["field"] == "coverage"
    rule, dot, target = precision["layer"]
    assert rule["encoding"]["x"]["scale"]["domain"] == [0.9, 1]          # 0.97, the target 0.98: the 90 % floor
    assert target["mark"]["type"] == "rule" and target["encoding"]["x"]["field"] == "target"
    assert spec["resolve"]["scale"]["y"] == "shared"
    rows = _named(spec, policy_charts.PER_TEAM_DATA)
    assert [r["team"] for r in rows] == list(PER_TEAM) and rows[1]["precision"] is None   # NaN sent as null
    assert _named(spec, policy_charts.TARGET_DATA) == [{"target": 0.98}]


def test_the_threshold_axis_starts_below_the_lowest_threshold():
    df = policy_charts.per_team_frame(PER_TEAM, list(PER_TEAM))
    assert policy_charts.threshold_low(df) == 0.5
    assert policy_charts.threshold_low(df.assign(threshold=[0.34, math.nan])) == 0.3
    assert policy_charts.threshold_low(df.assign(threshold=[math.nan, math.nan])) == 0.5


def test_the_precision_axis_reaches_down_to_a_low_target_or_interval():
    df = policy_charts.per_team_frame(PER_TEAM, list(PER_TEAM))
    assert policy_charts.precision_low(df, 0.83) == 0.8
    low = df.assign(precision_low=[0.62, math.nan])
    assert policy_charts.precision_low(low, 0.98) == 0.6
    spec = policy_charts.team_thresholds_chart(df).to_dict()
    assert len(spec["hconcat"][2]["layer"]) == 2                           # no target: no target line
    assert policy_charts.TARGET_DATA not in spec["datasets"]


def test_the_filled_per_team_template_carries_the_same_rows_as_the_chart():
    df = policy_charts.per_team_frame(PER_TEAM, list(PER_TEAM))
    template = policy_charts.team_thresholds_template(list(df["team"]), policy_charts.precision_low(df, 0.98),
                                                      True, policy_charts.threshold_low(df)).to_dict()
    filled = policy_charts.fill(template, policy_charts.team_thresholds_data(df, 0.98))
    used = set(_data_names(filled))
    assert used == set(filled["datasets"]) and len(used) == 2             # every reference renamed, none left over
    name = next(n for n in used if n.startswith(policy_charts.PER_TEAM_DATA + "_"))
    assert filled["datasets"][name]["team"].tolist() == list(PER_TEAM)
    direct = policy_charts.team_thresholds_chart(df, 0.98).to_dict()
    assert direct["hconcat"][2]["layer"][0]["encoding"] == filled["hconcat"][2]["layer"][0]["encoding"]


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
             policy_charts.team_thresholds_chart(policy_charts.per_team_frame(PER_TEAM, list(PER_TEAM)),
                                                 0.98).to_dict()]

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


def test_the_fixed_size_charts_are_drawn_at_their_size_not_fitted():
    # Under Streamlit's default autosize "fit", the legend and axes came out of the height: plots 93 and 0 px tall.
    risk = policy_charts.risk_coverage_chart(CURVE, REFERENCE, {"coverage": 0.5, "risk": 0.02}).to_dict()
    sizes = policy_charts.set_size_chart(policy_charts.set_size_frame({"t": {"size_counts": {1: 1}, "n": 1}})).to_dict()
    for spec in (risk, sizes):
        assert spec["autosize"] == {"type": "pad", "contains": "padding"}
