"""The Formula and Cost pages' chart builders, checked on their Vega-Lite specs."""

import json
import math

import pandas as pd
import pytest

from dashboard.charts import lesson as lc
from tests.dashboard.test_charts import assert_readable_in_both_themes
from ticketnet.lesson import explorers as lesson


def spec(chart):
    d = chart.to_dict()
    json.dumps(d, allow_nan=False)            # must be valid JSON: no NaN / Infinity leaks into the spec
    return d


def datasets(d):
    return list(d.get("datasets", {}).values())


def test_two_vectors_chart_places_o_on_the_segment():
    r = lesson.two_vectors(1, 0)
    df = lc.two_vectors_frame(*lesson.TWO_VALUES, r.output, r.weights)
    assert df.loc[df["point"] == "O", ["x", "y"]].round(3).values.tolist() == [[1.34, 1.321]]
    d = spec(lc.two_vectors_chart(df))
    marks = [layer["mark"]["type"] for layer in d["layer"]]
    assert marks == ["line", "point", "text"]
    assert d["layer"][1]["encoding"]["x"]["scale"]["domain"] == [-0.5, 4.5]


def test_matrix_frame_keeps_minus_infinity_as_text():
    M = lesson.matrix_steps("causal")[4].matrices[0].values
    df = lc.matrix_frame(M, lesson.TOKENS, lesson.TOKENS)
    assert df["label"].tolist().count("−∞") == 3
    assert df["value"].isna().sum() == 3
    d = spec(lc.matrix_chart(df, "M", "damaged"))
    assert d["title"]["text"] == "M  (3, 3)"
    assert len(d["layer"]) == 3                                  # cells, numbers, frame on 'damaged'
    assert_readable_in_both_themes(d)                            # numbers dark or white by the cell, either theme
    frame = d["layer"][2]
    assert frame["mark"]["stroke"] == lc.FRAME_COLOR and frame["mark"]["filled"] is False


def test_matrix_chart_labels_and_shape():
    Q = lesson.matrix_steps()[1].matrices[0]
    df = lc.matrix_frame(Q.values, Q.rows, Q.cols)
    assert df["label"].tolist() == ["0.5", "1.5", "0", "0", "1", "0"]
    d = spec(lc.matrix_chart(df, "Q"))
    assert d["title"]["text"] == "Q  (3, 2)" and len(d["layer"]) == 2
    with pytest.raises(ValueError):
        lc.matrix_chart(df, "Q", marked_row="nobody")
    with pytest.raises(ValueError):
        lc.matrix_frame(Q.values, Q.rows, ("1",))


def test_weight_bars_two_rows_of_32():
    r = lesson.scaling_table()[0]
    df = lc.weight_bars_frame(r.example_unscaled, r.example_scaled, r.d_k)
    assert len(df) == 64 and df.groupby("kind")["weight"].sum().round(6).tolist() == [1.0, 1.0]
    d = spec(lc.weight_bars(df))
    assert d["facet"]["row"]["field"] == "row"
    assert d["spec"]["encoding"]["y"]["scale"]["domain"] == [0, 1]


def test_variance_chart_is_log_log():
    df = lc.variance_frame(lesson.scaling_table())
    assert len(df) == 10
    d = spec(lc.variance_chart(df, selected=64))
    enc = d["layer"][0]["encoding"]
    assert enc["x"]["scale"]["type"] == "log" and enc["y"]["scale"]["type"] == "log"
    assert enc["x"]["axis"]["values"] == [4, 16, 64, 256, 1024]
    assert d["layer"][1]["mark"]["type"] == "rule"


def test_mask_rows_chart_one_panel_per_method():
    df = lc.mask_rows_frame(lesson.mask_choices(), lesson.TOKENS)
    assert df["method"].nunique() == 3 and len(df) == 9
    d = spec(lc.mask_rows_chart(df))
    assert d["facet"]["column"]["field"] == "method"


def test_saturation_chart_rule_at_current_factor():
    fs = [1.0, 2.0, 4.0]
    df = lc.saturation_frame(fs, [lesson.bigger_embeddings(f).weights[0].tolist() for f in fs], lesson.TOKENS)
    d = spec(lc.saturation_chart(df, current=4.0))
    rule_data = d["datasets"][d["layer"][1]["data"]["name"]]
    assert rule_data == [{"factor": 4.0}]


def _cost_frame():
    rows = []
    for n in (128, 256, 512, 1024):
        rows += [{"n": n, "variant": "readable attention()", "ms": 1e-6 * n * n, "peak_mb": 8e-6 * n * n},
                 {"n": n, "variant": "F.scaled_dot_product_attention", "ms": 5e-7 * n * n, "peak_mb": 0.0},
                 {"n": n, "variant": "blocked_attention (ticketnet)", "ms": 4e-7 * n * n, "peak_mb": 1e-3 * n}]
    return pd.DataFrame(rows)


def _dashed(d: dict) -> dict:
    return next(layer for layer in d["layer"] if layer["mark"].get("strokeDash"))


def test_cost_charts_have_the_n2_reference_in_the_legend_and_machine_subtitle():
    df = _cost_frame()
    d = spec(lc.cost_time_chart(df, machine="2 cores · torch 2.13.0"))
    assert d["title"]["subtitle"] == "2 cores · torch 2.13.0"
    ref_layer = _dashed(d)
    ref = d["datasets"][ref_layer["data"]["name"]]
    assert [r["n"] for r in ref] == [128, 256, 512, 1024]
    assert ref[-1]["shown"] == pytest.approx(1e-6 * 1024 ** 2)   # through the readable time at 1024
    assert ref[0]["shown"] == pytest.approx(1e-6 * 1024 ** 2 / 64)  # and falling as n²
    assert ref_layer["mark"]["strokeDash"] == [5, 4]
    legend = d["layer"][0]["encoding"]["color"]["scale"]
    assert legend["domain"][-1] == lc.REFERENCE and legend["range"][-1] == "#888888"    # the dashed line is named


def test_a_zero_peak_is_drawn_on_the_log_axis_floor_not_dropped():
    m = spec(lc.cost_memory_chart(_cost_frame()))
    rows = m["datasets"][m["layer"][0]["data"]["name"]]
    assert len(rows) == 12                                      # every variant at every n
    zeros = [r for r in rows if r["peak_mb"] == 0]
    floor = min(r["peak_mb"] for r in rows if r["peak_mb"] > 0) / 2
    assert len(zeros) == 4 and all(r["shown"] == pytest.approx(floor) for r in zeros)
    assert {r["measured"] for r in zeros} == {"below what can be measured"}
    assert m["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"
    hollow = m["layer"][1]
    assert hollow["mark"]["filled"] is False and len(m["datasets"][hollow["data"]["name"]]) == 4


def test_fmt():
    assert lc._fmt(float("-inf")) == "−∞" and lc._fmt(-0.0) == "0" and lc._fmt(0.35355) == "0.354"
    assert lc._fmt(-1.5) == "−1.5" and lc._fmt(math.nan) == "NaN"


@pytest.mark.parametrize("build, field", [(lc.cost_time_chart, "ms"), (lc.cost_memory_chart, "peak_mb")])
def test_cost_charts_draw_in_their_own_height_with_readable_axes_and_legend(build, field):
    # Issue 10 item 5: in the browser the lines were flat, the y labels stacked ("1000/10000") and the legend cut,
    # because Streamlit's default autosize "fit" took title, axes and legend out of the 280 px height.
    d = spec(build(_cost_frame(), machine="2 cores"))
    assert d["autosize"] == {"type": "fit-x", "contains": "padding"}       # width follows the column, not height
    assert d["height"] == 280
    lines = d["layer"][0]
    y_axis = lines["encoding"]["y"]["axis"]
    assert lines["encoding"]["y"]["scale"]["type"] == "log"
    assert y_axis["labelOverlap"] and y_axis["tickCount"] <= 8 and y_axis["format"] == ",~g"   # not SI ("100m" for 0.1 ms)
    assert lines["encoding"]["x"]["axis"]["labelOverlap"]
    legend = lines["encoding"]["color"]["legend"]
    assert legend["orient"] == "bottom" and legend["labelLimit"] == 0           # whole variant names
    rows = d["datasets"][lines["data"]["name"]]
    assert rows and len({r["shown"] for r in rows}) > 3 and len({r["variant"] for r in rows}) >= 2


def test_formula_line_charts_with_a_legend_keep_their_plot_height():
    table = lesson.scaling_table()
    d = spec(lc.variance_chart(lc.variance_frame(table), selected=16))
    assert d["autosize"]["type"] == "fit-x" and d["layer"][0]["encoding"]["color"]["legend"]["orient"] == "bottom"
    fs = [1.0, 2.0]
    df = lc.saturation_frame(fs, [lesson.bigger_embeddings(f).weights[0].tolist() for f in fs], lesson.TOKENS)
    assert spec(lc.saturation_chart(df))["autosize"]["type"] == "fit-x"
