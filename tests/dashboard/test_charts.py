"""Chart builders, tested on their Vega-Lite specs (`chart.to_dict()`): marks, encodings, scales, data, tooltips."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd
import pytest
import torch

from dashboard import narrative
from dashboard.charts import attention as charts
from dashboard.charts import interpretation as interp_charts
from dashboard.charts import quality
from dashboard.charts import theme
TOKENS = ["it", "'", "s", "not", "a", "delivery", "problem", ".", "my", "card", "not"]   # "not" repeats
N = len(TOKENS)
TEAMS = ("payments", "delivery", "returns", "product", "account")


def _patterns(blocks=2, heads=4, n=N, seed=0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(blocks, heads, n, n, generator=g) * 2, dim=-1)


def _data(spec: dict, layer: dict | None = None) -> list[dict]:
    """Rows of the dataset a (sub)spec reads: inline `datasets` referenced by name."""
    ref = (layer or spec).get("data") or spec.get("data")
    return spec["datasets"][ref["name"]]


def _marks(spec: dict) -> list[str]:
    out = []

    def walk(node):
        if isinstance(node, dict):
            if "mark" in node:
                m = node["mark"]
                out.append(m["type"] if isinstance(m, dict) else m)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(spec)
    return out


def _find(spec: dict, key: str) -> list:
    found = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == key:
                    found.append(v)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(spec)
    return found


# -- head heatmap ----------------------------------------------------------------------------------------------
def test_head_heatmap_cells_scale_labels_and_tooltip():
    P = _patterns()[1, 2]
    spec = charts.head_heatmap(P, TOKENS, head=3, query_row=3, block=2).to_dict()
    cells, frame = spec["layer"]
    assert cells["mark"]["type"] == "rect"
    enc = cells["encoding"]
    # rows = reading token (query), columns = token read (key)
    assert enc["y"]["field"] == "query" and enc["x"]["field"] == "key"
    labels = theme.token_labels(TOKENS)
    assert enc["x"]["sort"] == labels and enc["y"]["sort"] == labels
    assert len(set(labels)) == N, "repeated tokens still get unique labels"
    assert "3:not" in labels and "10:not" in labels
    # square-root colour scale from 0 to this head's largest weight
    scale = enc["color"]["scale"]
    assert scale["type"] == "sqrt"
    assert scale["domain"][0] == 0 and scale["domain"][1] == pytest.approx(float(P.max()))
    assert {t["field"] for t in enc["tooltip"]} == {"query", "key", "weight"}
    rows = _data(spec, cells)
    assert len(rows) == N * N
    cell = next(r for r in rows if r["query_pos"] == 3 and r["key_pos"] == 5)
    assert cell["weight"] == pytest.approx(float(P[3, 5]))
    assert cell["query"] == "3:not" and cell["key"] == "5:delivery"
    assert spec["title"]["text"] == "block 2 · head 3"


def test_head_heatmap_frames_the_query_row_across_the_whole_row():
    spec = charts.head_heatmap(_patterns()[0, 0], TOKENS, head=1, query_row=3).to_dict()
    frame = spec["layer"][1]
    assert frame["mark"]["type"] == "rect" and frame["mark"]["filled"] is False
    assert frame["mark"]["stroke"] == theme.FRAME_COLOR
    assert frame["encoding"]["y"]["field"] == "query"
    assert frame["encoding"]["x"] == {"value": 0} and frame["encoding"]["x2"] == {"value": "width"}
    assert _data(spec, frame) == [{"query": "3:not"}]


def test_head_heatmap_without_query_row_has_no_frame_and_rejects_bad_input():
    spec = charts.head_heatmap(_patterns()[0, 0], TOKENS, head=1).to_dict()
    assert _marks(spec) == ["rect"]
    with pytest.raises(ValueError):
        charts.head_heatmap(_patterns()[0, 0], TOKENS[:-1], head=1)
    with pytest.raises(ValueError):
        charts.head_heatmap(_patterns()[0, 0], TOKENS, head=1, query_row=N)


def test_ticket_text_is_data_never_markup_or_expression():
    tokens = ["<", "script", ">", "alert", "(", "1", ")", "</b>", "'", '"', "{", "datum", "}"]
    n = len(tokens)
    P = torch.full((n, n), 1.0 / n)
    text = json.dumps(charts.head_heatmap(P, tokens, 1, 0).to_dict())
    spec = charts.head_heatmap(P, tokens, 1, 0).to_dict()
    # tokens appear only as data values and sort lists, never inside an expression string
    exprs = [e for e in _find(spec, "expr") + _find(spec, "labelExpr") + _find(spec, "test") if isinstance(e, str)]
    assert not any("script" in e or "datum}" in e for e in exprs)
    assert "0:<" in text


# -- heads row, query bars, bands, model view -----------------------------------------------------------------
def test_heads_row_has_one_framed_heatmap_per_head_with_independent_colour():
    W = _patterns()[0]
    chart = charts.heads_row(W, TOKENS, query_row=3, block=1, columns=4)
    spec = chart.to_dict()
    assert len(spec["hconcat"]) == 4
    assert spec["resolve"]["scale"]["color"] == "independent"
    for h, sub in enumerate(spec["hconcat"]):
        cells, frame = sub["layer"]
        assert cells["encoding"]["color"]["scale"]["domain"][1] == pytest.approx(float(W[h].max()))
        assert _data(spec, frame) == [{"query": "3:not"}]
        assert sub["title"]["text"] == f"block 1 · head {h + 1}"
    # token labels only on the first heatmap's y axis
    assert spec["hconcat"][1]["layer"][0]["encoding"]["y"]["axis"]["labels"] is False


def test_heads_row_wraps_long_tickets_into_rows_and_titles_head_importance():
    tokens = [f"w{i}" for i in range(30)]
    W = _patterns(n=30)[1]
    imp = pd.DataFrame({"block": [2] * 4, "head": [1, 2, 3, 4], "accuracy": [0.9] * 4,
                        "accuracy_drop": [0.01, 0.2, 0.0, -0.001], "support_prob": [0.02, 0.3, 0.0, 0.05]})
    spec = charts.heads_row(W, tokens, query_row=0, block=2, head_importance=imp).to_dict()
    assert [len(r["hconcat"]) for r in spec["vconcat"]] == [2, 2]
    titles = [sub["title"] for r in spec["vconcat"] for sub in r["hconcat"]]
    assert titles[1]["text"] == "block 2 · head 2"
    # Issue 23 item 6: one convention (with the head − masked), the sign of the number and no other. The subtitle read
    # "accuracy −0.200" for a head that adds 0.200, and "accuracy −-0.001" for one whose masking helps.
    assert titles[1]["subtitle"] == ["with − masked: accuracy +0.200",
                                     "support for the true team +0.300 (probability)"]
    assert titles[3]["subtitle"][0] == "with − masked: accuracy -0.0010"


def _concats(spec: dict) -> list[dict]:
    found = []
    if isinstance(spec, dict):
        if "hconcat" in spec or "vconcat" in spec:
            found.append(spec)
        for v in spec.values():
            found += _concats(v)
    elif isinstance(spec, list):
        for v in spec:
            found += _concats(v)
    return found


@pytest.mark.parametrize("n", [11, 30, 178])
def test_heads_row_gives_every_head_its_own_colour_scale_and_legend(n):
    # Issue 10 item 6: in a grid (a vconcat of hconcat rows) the heads of a row shared one scale and legend.
    tokens = [f"w{i}" for i in range(n)]
    with alt.data_transformers.disable_max_rows():          # as in Streamlit, which sends the data as Arrow
        spec = charts.heads_row(_patterns(n=n)[0], tokens, query_row=0, block=1).to_dict()
    concats = _concats(spec)
    assert concats
    for c in concats:
        assert c["resolve"]["scale"]["color"] == "independent"
        assert c["resolve"]["legend"]["color"] == "independent"


@pytest.mark.parametrize("n, columns", [(8, 4), (30, 2), (39, 2), (60, 1), (178, 1)])
def test_heads_row_fits_a_laptop_column_however_long_the_ticket(n, columns):
    # Issue 10 item 8: a 178-token ticket's row of heads was 1,546 px wide, two heads off-screen.
    tokens = [f"w{i}" for i in range(n)]
    with alt.data_transformers.disable_max_rows():
        spec = charts.heads_row(_patterns(n=n)[0], tokens, query_row=n - 1, block=1).to_dict()
    rows = spec["vconcat"] if "vconcat" in spec else [spec]
    assert {len(r["hconcat"]) for r in rows} <= {columns, 4 % columns or columns}
    assert len(rows[0]["hconcat"]) == columns
    step = rows[0]["hconcat"][0]["width"]["step"]
    width = columns * step * n + theme.Y_LABELS_PX + charts.HEADS_SPACING * (columns - 1)
    assert width <= theme.COLUMN_PX
    assert spec["autosize"] == {"type": "pad"}


def test_the_query_frame_added_to_cached_heatmaps_equals_the_framed_heads_row():
    # The Heads page caches the heatmaps of a block once and adds the frame of each query row to the dict.
    tokens = [f"w{i}" for i in range(30)]
    W = _patterns(n=30)[0]
    for toks, w, cols in ((TOKENS, _patterns()[1], None), (tokens, W, None), (TOKENS, _patterns()[0], 4)):
        base = charts.heads_row(w, toks, None, block=1, columns=cols).to_dict()
        for row in (0, 3, len(toks) - 1):
            framed = charts.add_layer_to_views(base, charts.query_row_frame(toks, row).to_dict())
            assert framed == charts.heads_row(w, toks, row, block=1, columns=cols).to_dict()
    assert "datasets" in base and all(len(v["layer"]) == 1 for v in base["hconcat"])     # base left as it was
    with pytest.raises(ValueError):
        charts.query_row_frame(TOKENS, N)


def test_query_bars_one_panel_per_head_top_two_labelled():
    W = _patterns()[0]
    spec = charts.query_bars(W, TOKENS, query_row=3).to_dict()
    assert spec["facet"]["row"]["field"] == "head"
    rows = spec["datasets"][spec["data"]["name"]]
    assert len(rows) == 4 * N
    h1 = [r for r in rows if r["head"] == "head 1"]
    assert sum(r["weight"] for r in h1) == pytest.approx(1.0, abs=1e-5)
    top = max(h1, key=lambda r: r["weight"])
    assert top["rank"] == 1 and top["weight"] == pytest.approx(float(W[0, 3].max()))
    bars, text = spec["spec"]["layer"]
    assert bars["mark"]["type"] == "bar" and text["mark"]["type"] == "text"
    assert text["transform"] == [{"filter": "datum.rank <= 2"}]
    assert {t["field"] for t in bars["encoding"]["tooltip"]} >= {"head", "key", "weight"}


def test_query_bars_axis_rises_to_the_rows_largest_weight_with_flush_labels():
    # A long ticket's row spreads thin: a 0-1 axis drew weights of 0.03-0.2 as slivers.
    n = 256
    W = torch.full((4, n, n), 1.0 / n)
    W[:, 5, :] = torch.softmax(torch.linspace(0, 3, n), 0)            # the largest weight of row 5 is about 0.05
    spec = charts.query_bars(W, [f"t{i}" for i in range(n)], query_row=5).to_dict()
    y = spec["spec"]["layer"][0]["encoding"]["y"]
    peak = float(W[:, 5].max())
    assert y["scale"]["domain"] == [0, charts.row_top(peak)] and peak < charts.row_top(peak) <= 0.1
    assert y["axis"]["values"] == [0, charts.row_top(peak)] and y["axis"]["labelFlush"] is True
    assert charts.row_top(0.97) == 1.0 and charts.row_top(0.2) == pytest.approx(0.25)


def test_bands_chart_is_mean_received_weight_per_head():
    W = _patterns()[1]
    spec = charts.bands_chart(W, TOKENS).to_dict()
    assert spec["mark"]["type"] == "rect"
    assert spec["encoding"]["y"]["field"] == "head" and spec["encoding"]["x"]["field"] == "key"
    rows = spec["datasets"][spec["data"]["name"]]
    assert len(rows) == 4 * N
    expected = W.mean(dim=1)                                  # mean over query rows, as interpret.received_attention
    got = {(r["head"], r["key_pos"]): r["received"] for r in rows}
    assert got[("head 2", 5)] == pytest.approx(float(expected[1, 5]))
    assert sum(v for (h, _), v in got.items() if h == "head 3") == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("n", [30, 185, 195, 256])
def test_bands_chart_leaves_room_for_its_legend_at_every_length(n):
    # A 195-token ticket's bands ran 20 px past a 1000 px wide page's column: the cells had a 2 px floor.
    tokens = [f"w{i}" for i in range(n)]
    with alt.data_transformers.disable_max_rows():
        spec = charts.bands_chart(_patterns(n=n)[0], tokens).to_dict()
    assert spec["width"]["step"] * n <= theme.COLUMN_PX - 170


def test_bands_chart_lists_twelve_heads_in_numeric_order():
    # A nominal axis sorts its names as text: head 1, head 10, head 11, head 12, head 2, ...
    spec = charts.bands_chart(_patterns(blocks=1, heads=12)[0], TOKENS).to_dict()
    assert spec["encoding"]["y"]["sort"] == [f"head {h}" for h in range(1, 13)]


@pytest.mark.parametrize("n", [11, 30, 35, 60, 256])
def test_bands_chart_token_labels_never_run_into_each_other(n):
    # At 1000 px a 30-token ticket's slanted labels touched ("6:delivery7:problem"): drawn all at once, the labels
    # stand upright, so neighbours lie one band apart, and that band is wider than the label's font.
    tokens = [f"w{i}" for i in range(n)]
    with alt.data_transformers.disable_max_rows():
        spec = charts.bands_chart(_patterns(n=n)[0], tokens).to_dict()
    axis, step = spec["encoding"]["x"]["axis"], spec["width"]["step"]
    assert axis["labelAngle"] == -90 and axis["labelLimit"] == 90
    if axis["labelOverlap"] is False:
        assert step >= axis["labelFontSize"] + 1
    else:
        assert axis["labelOverlap"] == "parity" and step < axis["labelFontSize"] + 1
    assert (axis["labelOverlap"] is False) == (n <= 30)


def test_model_view_small_multiples_every_block_and_head():
    P = _patterns()
    spec = charts.model_view(P, TOKENS).to_dict()
    assert spec["facet"]["row"]["field"] == "block" and spec["facet"]["column"]["field"] == "head"
    rows = spec["datasets"][spec["data"]["name"]]
    assert len(rows) == 2 * 4 * N * N
    assert {(r["block"], r["head"]) for r in rows} == {(b, h) for b in (1, 2) for h in (1, 2, 3, 4)}
    assert max(r["relative"] for r in rows) == pytest.approx(1.0)
    assert spec["spec"]["encoding"]["color"]["scale"]["type"] == "sqrt"
    with pytest.raises(ValueError):
        charts.model_view(P[0], TOKENS)


# -- confusion ------------------------------------------------------------------------------------------------------
def test_confusion_chart_has_a_click_selection_on_true_and_predicted():
    conf = np.array([[50, 2, 0, 1, 0], [3, 40, 1, 0, 0], [0, 0, 45, 2, 0], [1, 0, 0, 38, 4], [0, 0, 0, 1, 47]])
    spec = quality.confusion_chart(conf, TEAMS).to_dict()
    params = _find(spec, "params")[0]
    assert params[0]["name"] == quality.CONFUSION_PARAM
    assert params[0]["select"]["type"] == "point"
    assert params[0]["select"]["fields"] == ["true", "predicted"]
    cells, text = spec["layer"]
    assert cells["mark"]["type"] == "rect" and text["mark"]["type"] == "text"
    assert cells["encoding"]["x"]["field"] == "predicted" and cells["encoding"]["y"]["field"] == "true"
    rows = spec["datasets"][spec["data"]["name"]]
    assert len(rows) == 25
    cell = next(r for r in rows if r["true"] == "delivery" and r["predicted"] == "payments")
    assert cell["count"] == 3 and cell["share_of_true"] == pytest.approx(3 / 44)
    assert {t["field"] for t in cells["encoding"]["tooltip"]} >= {"true", "predicted", "count"}


# -- interpretation charts ------------------------------------------------------------------------------------------
def _per_token() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"position": range(N), "token": TOKENS})
    df["removal"] = rng.normal(0, 0.1, N)
    df["unk replacement"] = rng.normal(0, 0.1, N)
    df["removal TV"] = np.abs(rng.normal(0, 0.1, N))
    df["rollout"] = rng.dirichlet(np.ones(N))
    df["integrated gradients"] = rng.normal(0, 0.1, N)
    return df


def test_removal_chart_effects_beside_signals_on_a_shared_token_axis():
    df = _per_token()
    spec = interp_charts.removal_chart(df, ["removal", "unk replacement", "removal TV"], ["rollout", "integrated gradients"]).to_dict()
    panels = spec["hconcat"]
    assert [p["encoding"]["x"]["field"] for p in panels] == ["removal", "unk replacement", "removal TV", "rollout",
                                                              "integrated gradients"]
    labels = [f"{i}:{t}" for i, t in enumerate(TOKENS)]
    for p in panels:
        assert p["mark"]["type"] == "bar"
        assert p["encoding"]["y"]["field"] == "label" and p["encoding"]["y"]["sort"] == labels
    # signed effects red/blue by sign, magnitudes and attention in single colours
    assert "condition" in panels[0]["encoding"]["color"]
    assert panels[2]["encoding"]["color"] == {"value": "#e67e22"}
    assert panels[3]["encoding"]["color"] == {"value": "#7d3c98"}
    assert panels[1]["encoding"]["y"]["axis"]["labels"] is False
    rows = spec["datasets"][panels[0]["data"]["name"] if "data" in panels[0] else spec["data"]["name"]]
    assert len(rows) == N
    assert rows[2]["removal"] == pytest.approx(df["removal"][2]) and rows[2]["label"] == labels[2]
    with pytest.raises(ValueError, match="lacks"):
        interp_charts.removal_chart(df, ["deletion"], [])


def test_removal_chart_sends_only_the_columns_it_draws():
    # The chart's data goes to the browser and into the spec cache: a per-token table of 21 columns drawn in 4
    # panels sent all 21.
    df = _per_token().assign(**{f"b1 h{i}": 0.25 for i in range(1, 5)}, evidence=False)
    spec = interp_charts.removal_chart(df, ["removal", "removal TV"], ["rollout", "removal"]).to_dict()
    rows = spec["datasets"][spec["data"]["name"]]
    assert set(rows[0]) == {"position", "token", "label", "removal", "removal TV", "rollout"}
    assert [p["encoding"]["x"]["field"] for p in spec["hconcat"]] == ["removal", "removal TV", "rollout", "removal"]


def test_token_highlight_lays_tokens_out_as_coloured_cells():
    values = np.linspace(-0.3, 0.2, N)
    spec = interp_charts.token_highlight(TOKENS, values, title="removal", diverging=True).to_dict()
    box, text = spec["layer"]
    assert box["mark"]["type"] == "rect" and text["mark"]["type"] == "text"
    assert text["encoding"]["text"]["field"] == "token"
    assert box["encoding"]["color"]["scale"]["domain"] == [pytest.approx(0.3), pytest.approx(-0.3)]
    rows = spec["datasets"][spec["data"]["name"]]
    assert [r["token"] for r in rows] == TOKENS
    assert rows[3]["value"] == pytest.approx(values[3])
    assert spec["width"] == {"step": pytest.approx(spec["width"]["step"])} and "step" in spec["height"]
    seq = interp_charts.token_highlight(TOKENS, np.abs(values), title="rollout").to_dict()
    assert seq["layer"][0]["encoding"]["color"]["scale"]["domain"][0] == 0
    with pytest.raises(ValueError):
        interp_charts.token_highlight(TOKENS, values[:-1], title="x")


def _split_table() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    n = 40
    parts = []
    for s in ("rollout", "mean attention b1", "b1 h1", "random"):
        values = np.clip(rng.normal(0.2 if s != "random" else 0.0, 0.2, n), -1, 1)
        if s == "rollout":
            values[0] = np.nan                                # a one-token ticket
        parts.append(pd.DataFrame({"ticket_id": [f"T-{i}" for i in range(n)], "signal": s, "metric": "tau",
                                   "value": values}))
    return pd.concat(parts, ignore_index=True)


def test_tau_distribution_box_per_signal_with_random_baseline():
    spec = interp_charts.tau_distribution(_split_table()).to_dict()
    marks = _marks(spec)
    assert "boxplot" in marks and marks.count("rule") == 2          # zero line and random median
    long = interp_charts.tau_long(_split_table())
    assert set(long["signal"]) == {"rollout", "mean attention b1", "b1 h1", theme.RANDOM_SIGNAL}
    assert len(long) == 4 * 40 - 1                                    # the nan dropped
    box = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "boxplot")
    assert box["encoding"]["x"]["field"] == "tau" and box["encoding"]["y"]["field"] == "signal"
    assert box["encoding"]["x"]["scale"]["domain"] == [-1, 1]


def test_eraser_chart_curves_per_signal_for_both_measures():
    rows = [{"signal": s, "fraction": f, "k": max(1, round(f * 20)), "comprehensiveness": f * (2 if s == "removal" else 1),
             "sufficiency": 0.5 - f} for s in ("removal", "rollout", "random") for f in (0.01, 0.05, 0.1, 0.2, 0.5)]
    eraser = pd.DataFrame(rows)
    spec = interp_charts.eraser_chart(eraser, ["removal", "rollout"]).to_dict()
    assert spec["facet"]["column"]["field"] == "measure"
    assert spec["spec"]["mark"]["type"] == "line"
    enc = spec["spec"]["encoding"]
    assert enc["x"]["field"] == "fraction" and enc["y"]["field"] == "drop" and enc["color"]["field"] == "signal"
    data = spec["datasets"][spec["data"]["name"]]
    assert {d["signal"] for d in data} == {"removal", "rollout"}
    assert {d["measure"] for d in data} == {"comprehensiveness", "sufficiency"} and len(data) == 2 * 2 * 5
    # Issue 10 item 7: the legend sat right of the two panels, under the AOPC table beside them. Below the
    # panels, and both panels with their axes within a laptop's column.
    assert enc["color"]["legend"]["orient"] == "bottom"
    assert 2 * spec["spec"]["width"] + spec["spacing"] + 130 <= theme.COLUMN_PX


@pytest.mark.parametrize("n", [15, 0])
def test_the_charts_melt_gives_pandas_melt_s_table(n):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"signal": [f"s{i % 3}" for i in range(n)], "fraction": rng.random(n), "k": np.arange(n),
                       "comprehensiveness": rng.random(n), "sufficiency": rng.random(n)})
    args = (["signal", "fraction", "k"], ["comprehensiveness", "sufficiency"], "measure", "drop")
    expected = df.melt(id_vars=args[0], value_vars=args[1], var_name=args[2], value_name=args[3])
    pd.testing.assert_frame_equal(interp_charts._melt(df, *args), expected)


def test_mean_eraser_chart_bars_per_signal():
    table = pd.DataFrame({"signal": ["rollout", "random"], "comprehensiveness": [0.3, 0.1], "sufficiency": [0.1, 0.4]})
    spec = interp_charts.mean_eraser_chart(table, ["comprehensiveness", "sufficiency"]).to_dict()
    assert spec["spec"]["mark"]["type"] == "bar"
    assert len(spec["datasets"][spec["data"]["name"]]) == 4


def test_removal_chart_panel_titles_wrap_whole_words_instead_of_being_cut():
    # 1366 px: "unk replac…", "integrated …" were cut to an ellipsis in panels of 60 px.
    spec = interp_charts.removal_chart(_per_token(), ["removal", "unk replacement", "removal TV"], []).to_dict()
    for panel in spec["hconcat"]:
        lines = panel["title"]["text"]
        assert " ".join(lines) == panel["encoding"]["x"]["field"]
        assert all(len(line) * interp_charts.TITLE_CHAR_PX <= panel["title"]["limit"] or " " not in line for line in lines)
    assert interp_charts.wrap_words("integrated gradients", 70) == ["integrated", "gradients"]
    assert interp_charts.wrap_words("rollout", 70) == ["rollout"] and interp_charts.wrap_words("b1 h2", 200) == ["b1 h2"]


def test_removal_chart_titles_the_signed_effects_with_their_support():
    spec = interp_charts.removal_chart(_per_token(), ["removal", "removal TV"], ["rollout"],
                                support="support for payments (logit difference)").to_dict()
    removal, tv, rollout = spec["hconcat"]
    assert removal["encoding"]["x"]["title"] == ["support for", "payments", "(logit difference)"]
    assert tv["encoding"]["x"]["title"] is None and rollout["encoding"]["x"]["title"] is None
    # A long team name is cut inside the panel, so the chart keeps its width (the browser test measures it).
    assert removal["encoding"]["x"]["axis"]["titleLimit"] == removal["width"]


def test_head_importance_chart_grids_of_block_by_head():
    imp = pd.DataFrame({"block": [1, 1, 1, 1, 2, 2, 2, 2], "head": [1, 2, 3, 4] * 2, "accuracy": np.linspace(0.8, 0.9, 8),
                        "accuracy_drop": np.linspace(0.0, 0.1, 8), "support_prob": np.linspace(0.0, 0.2, 8),
                        "support_logit_diff": np.linspace(0.0, 0.9, 8)})
    spec = interp_charts.head_importance_chart(imp, "prob").to_dict()
    left, right = spec["vconcat"]
    assert left["layer"][0]["encoding"]["color"]["field"] == "accuracy_drop"
    assert right["layer"][0]["encoding"]["color"]["field"] == "support_prob"
    assert right["title"]["text"] == "support for the true team (probability)"
    for side in (left, right):
        rect, text = side["layer"]
        assert rect["mark"]["type"] == "rect" and text["mark"]["type"] == "text"
        assert {t["field"] for t in rect["encoding"]["tooltip"]} >= {"block", "head", "accuracy_drop", "support_prob"}
    logit = interp_charts.head_importance_chart(imp).to_dict()["vconcat"][1]
    assert logit["layer"][0]["encoding"]["color"]["field"] == "support_logit_diff"
    assert logit["title"]["text"] == "support for the true team (logit difference)"


def test_every_builder_returns_an_altair_chart():
    P = _patterns()
    built = [charts.head_heatmap(P[0, 0], TOKENS, 1, 0), charts.heads_row(P[0], TOKENS, 0),
             charts.query_bars(P[0], TOKENS, 0), charts.bands_chart(P[0], TOKENS), charts.model_view(P, TOKENS),
             quality.confusion_chart(np.eye(5), TEAMS),
             interp_charts.removal_chart(_per_token(), ["removal"], ["rollout"]),
             interp_charts.tau_distribution(_split_table()),
             interp_charts.token_highlight(TOKENS, np.ones(N), title="x")]
    for chart in built:
        assert isinstance(chart, alt.TopLevelMixin)
        assert chart.to_dict()["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


# -- both themes -----------------------------------------------------------------------------------------------------
def _layers(spec) -> list[list[dict]]:
    """Every group of sibling layers (a layered view's `layer` list; a single view counts as its own group)."""
    groups = []
    if isinstance(spec, dict):
        if isinstance(spec.get("layer"), list):
            groups.append(spec["layer"])
        elif "mark" in spec:
            groups.append([spec])
        for k, v in spec.items():
            if k not in ("datasets", "layer"):
                groups += _layers(v)
        for lay in spec.get("layer") or []:
            groups += [g for g in _layers(lay) if g != [lay]]
    elif isinstance(spec, list):
        for v in spec:
            groups += _layers(v)
    return groups


def _mark_type(layer: dict) -> str:
    return layer["mark"]["type"] if isinstance(layer.get("mark"), dict) else layer.get("mark", "")


def _luminance(hex_color: str) -> float:
    r, g, b = (int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two #rrggbb colours."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


STREAMLIT_BACKGROUNDS = ("#ffffff", "#0e1117")            # the light and the dark theme's page


def test_the_theme_neutral_text_colour_reads_on_both_backgrounds():
    assert all(contrast(theme.THEME_NEUTRAL_TEXT, bg) >= 4.2 for bg in STREAMLIT_BACKGROUNDS)


def assert_readable_in_both_themes(spec: dict) -> None:
    """Text on a coloured cell picks white or dark by the cell (a condition); any other text (on the page's own
    background) is the theme-neutral grey, which reads on the light and the dark page alike. Issue 23 item 11: text
    with no colour of its own does not take Streamlit's theme, it stays near-black on the dark page; so do
    subtitles."""
    for group in _layers(spec):
        on_cells = any(_mark_type(layer) == "rect" and (layer.get("mark", {}) if isinstance(layer.get("mark"), dict)
                                                        else {}).get("filled", True) is not False for layer in group)
        for layer in group:
            if _mark_type(layer) != "text":
                continue
            mark = layer["mark"] if isinstance(layer["mark"], dict) else {}
            color = layer.get("encoding", {}).get("color")
            if on_cells:
                assert "color" not in mark and "fill" not in mark, mark
                assert color and "condition" in color, f"text on cells without a cell-dependent colour: {layer}"
            else:
                assert color is None and mark.get("color") == theme.THEME_NEUTRAL_TEXT, layer
    for title in _find(spec, "title"):
        if isinstance(title, dict) and "subtitle" in title:
            assert title.get("subtitleColor") == theme.THEME_NEUTRAL_TEXT, title


def test_charts_read_in_the_dark_theme_as_in_the_light_one():
    # Issue 10 item 15: the dashboard follows the OS theme; no chart may hard-code text colours for one of them.
    P = _patterns()
    imp = pd.DataFrame({"block": [1, 1, 1, 1, 2, 2, 2, 2], "head": [1, 2, 3, 4] * 2, "accuracy": np.linspace(0.8, 0.9, 8),
                        "accuracy_drop": np.linspace(0.0, 0.1, 8), "support_prob": np.linspace(0.0, 0.2, 8),
                        "support_logit_diff": np.linspace(0.0, 0.9, 8)})
    built = [charts.heads_row(P[0], TOKENS, 0), charts.query_bars(P[0], TOKENS, 0), charts.bands_chart(P[0], TOKENS),
             charts.model_view(P, TOKENS), quality.confusion_chart(np.eye(5), TEAMS),
             interp_charts.removal_chart(_per_token(), ["removal"], ["rollout"]), interp_charts.head_importance_chart(imp),
             interp_charts.tau_distribution(_split_table()),
             interp_charts.token_highlight(TOKENS, np.ones(N), title="x")]
    for chart in built:
        assert_readable_in_both_themes(chart.to_dict())
    text = interp_charts.head_importance_chart(imp).to_dict()["vconcat"][0]["layer"][1]
    assert text["encoding"]["color"]["value"] == theme.ON_LIGHT_CELL


def test_streamlit_config_follows_the_os_theme():
    import tomllib

    from tests.conftest import ROOT

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    theme = config.get("theme", {})
    # A base, or any colour set directly under [theme], makes one custom theme (light) and the OS setting is ignored.
    assert set(theme) <= {"light", "dark"}, theme
    assert "base" not in theme.get("light", {}) and "base" not in theme.get("dark", {})
    assert config.get("client", {}).get("toolbarMode") != "minimal"      # the menu keeps its theme switch


# -- plain statements ------------------------------------------------------------------------------------------------
def test_statements_tie_the_strongest_link_to_its_deletion_effect():
    n = 5
    tokens = ["not", "a", "charge", "twice", "."]
    P = torch.full((2, 4, n, n), 0.01)
    P[1, 0, 0, 3] = 0.5                                       # block 2, head 1: 'not' reads 'twice' with 0.5
    per_token = pd.DataFrame({"position": range(n), "token": tokens, "removal": [0.1, 0.0, 0.4, 0.03, -0.02],
                              "rollout": [0.1, 0.1, 0.2, 0.5, 0.1]})
    agreement = pd.DataFrame({"signal": ["rollout"], "kendall_tau": [0.1], "spearman": [0.1], "top3_overlap": [0.3]})
    lines = narrative.statements(per_token, P, tokens, "payments", 0, agreement, torch.linspace(-0.6, 0.6, 101))
    assert lines[0] == ("Head 1 of block 2 puts 0.50 of the weight of “not” on “twice”, yet deleting “twice” barely "
                        "moves p(payments): it lowers p(payments) by 0.03 (rank 3 of 5 by effect).")
    assert "Deleting “charge” moves the prediction most" in lines[1]
    assert any("within chance" in s for s in lines)
    assert lines[-1].startswith("What these numbers do not show")


def test_statements_for_a_one_token_ticket_say_there_is_nothing_to_compare():
    per_token = pd.DataFrame({"position": [0], "token": ["refund"], "rollout": [1.0]})
    lines = narrative.statements(per_token, torch.ones(2, 4, 1, 1), ["refund"], "payments", 0)
    assert len(lines) == 1 and "single token" in lines[0]


# -- issue 23: charts that draw, digits that show, one sign and one colour per signal --------------------------------
def _streamlit_autosize(spec: dict, stretch: bool = False) -> dict:
    """The autosize Streamlit gives a spec (its own when the spec has one), as `st.vega_lite_chart` prepares it."""
    from streamlit.elements.vega_charts import _prepare_vega_lite_spec

    return _prepare_vega_lite_spec(spec, use_container_width=stretch)["autosize"]


@pytest.mark.parametrize("stretch", [False, True])
def test_tau_distribution_keeps_room_for_its_boxes_beside_the_signal_names(stretch):
    # Issue 23 item 1: the spec was 110 px wide (HALF_COLUMN_PX − 140, meant for the plot alone); Streamlit fits a
    # layered chart's whole width, labels included, into it, so the plot was 0 px wide and no box was drawn.
    spec = interp_charts.tau_distribution(_split_table()).to_dict()
    autosize = _streamlit_autosize(spec, stretch)
    assert autosize["contains"] == "padding"
    box = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "boxplot")
    labels = box["encoding"]["y"]["axis"]["labelLimit"]
    if autosize["type"] in ("fit", "fit-x"):           # the width is the whole chart's: names, then the plot
        plot = spec["width"] - labels - 20            # the axis' label padding and the chart's own
    else:
        plot = spec["width"]
    assert plot >= 100, f"{plot} px left for the boxes beside {labels} px of names ({autosize})"
    assert autosize["type"] == "fit-x" and labels >= 100     # "mean attention b2" whole, no "rollou", "b1 h"


def _d3_fixed(value: float, fmt: str) -> str:
    """What a d3 format ".Nf" / ".N~f" prints for `value`, in Python (d3's rules for these two forms)."""
    places = int(fmt.strip(".~f"))
    text = f"{value:.{places}f}"
    if "~" in fmt and "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def test_value_format_gives_the_digits_the_values_need():
    # Issue 23 item 5: a legend over effects near 0.002 read 0.00 / 0.00 / 0.00.
    assert theme.value_format([0.0023, -0.0011]) == ".4~f"
    assert theme.value_format([0.33, 0.1]) == ".2~f"
    assert theme.value_format([12.0]) == ".0~f"
    assert theme.value_format([3e-6]) == ".2~e"
    assert theme.value_format([np.nan, 0.0]) == ".2~f"
    assert theme.value_format([0.0023], 3, trim=False) == ".5f"
    for peak in (0.0023, 0.021, 0.4, 3.0):
        fmt = theme.value_format([peak, -peak / 2])
        labels = {_d3_fixed(v, fmt) for v in (peak, peak / 2, 0.0, -peak / 2)}
        assert len(labels) == 4, (peak, fmt, labels)


def test_small_removal_effects_get_legends_labels_and_tooltips_with_their_digits():
    # Issue 23 item 5: on a misrouted ticket p(true team) is about 0.007 and every deletion moves it by about 0.002.
    effects = np.array([0.0021, -0.0013, 0.0004, 0.0017, -0.0002, 0.0, 0.0009, 0.0011, -0.0006, 0.0015, 0.0003])
    spec = interp_charts.token_highlight(TOKENS, effects, title="x", diverging=True).to_dict()
    box = spec["layer"][0]
    fmt = box["encoding"]["color"]["legend"]["format"]
    low, high = box["encoding"]["color"]["scale"]["domain"]
    assert len({_d3_fixed(v, fmt) for v in (low, 0.0, high)}) == 3, fmt        # not 0.00 / 0.00 / 0.00
    tip = next(t for t in box["encoding"]["tooltip"] if t["field"] == "value")
    assert _d3_fixed(0.0013, tip["format"]) == "0.00130"
    per_token = _per_token().assign(removal=effects)
    panel = interp_charts.removal_chart(per_token, ["removal"], ["rollout"]).to_dict()["hconcat"][0]
    axis_fmt = panel["encoding"]["x"]["axis"]["format"]
    assert _d3_fixed(0.002, axis_fmt) == "0.002" and _d3_fixed(-0.001, axis_fmt) == "-0.001"


def _positive_end_is_red(scale: dict) -> bool:
    """Whether a `redblue` scale draws its largest values red (Vega's redblue runs red → blue over the range)."""
    assert scale["scheme"] == "redblue"
    low, high = scale["domain"][0], scale["domain"][-1]
    return (low > high) != bool(scale.get("reverse"))


def test_head_importance_reads_with_minus_masked_red_where_the_head_helps():
    # Issue 23 items 6 and 11: "accuracy drop when masked" on Interpretation beside "accuracy −0.001" on Heads; the
    # one convention is with the head − masked, red where positive as every support, labels with their digits.
    imp = pd.DataFrame({"block": [1, 1, 1, 1, 2, 2, 2, 2], "head": [1, 2, 3, 4] * 2, "accuracy": np.linspace(0.8, 0.9, 8),
                        "accuracy_drop": [0.00067, 0.009, 0.0, -0.001, 0.003, 0.001, 0.002, -0.003],
                        "support_prob": np.linspace(-0.01, 0.02, 8), "support_logit_diff": np.linspace(-0.1, 0.9, 8)})
    spec = interp_charts.head_importance_chart(imp).to_dict()
    left, right = spec["vconcat"]
    assert left["title"]["text"] == "accuracy with the head − masked"
    assert spec["resolve"]["scale"]["color"] == "independent"        # a concat shares colour scales by default
    for side in (left, right):
        rect, text = side["layer"]
        assert _positive_end_is_red(rect["encoding"]["color"]["scale"])
        lo, hi = rect["encoding"]["color"]["scale"]["domain"]
        assert lo == -hi                                            # centred on 0: a negative head is blue, not pale red
    fmt = left["layer"][1]["encoding"]["text"]["format"]
    assert _d3_fixed(0.00067, fmt) == "0.0007" and _d3_fixed(0.009, fmt) == "0.009"


def test_every_support_scale_draws_a_helping_part_red():
    # Issue 23 item 6: the token views drew support red, the intervention views (edge cuts, head switch-off) blue.
    per_text = interp_charts.token_highlight(TOKENS, np.linspace(-1, 1, N), title="x", diverging=True).to_dict()
    assert _positive_end_is_red(per_text["layer"][0]["encoding"]["color"]["scale"])
    assert _positive_end_is_red(theme.support_scale([0.2, -0.1], "logit_diff").to_dict())


def test_support_scales_never_end_below_the_negligible_effect():
    # Issue 23 item 8: edge effects of 1e-4 logit were drawn in saturated colours.
    from ticketnet.interpret import signals

    for unit in ("logit_diff", "prob"):
        tiny = theme.support_scale([1e-4, -3e-5], unit).to_dict()["domain"]
        assert tiny == [-signals.NEGLIGIBLE_EFFECT[unit], signals.NEGLIGIBLE_EFFECT[unit]]
    assert theme.support_scale([0.7, -0.2], "logit_diff").to_dict()["domain"] == [-0.7, 0.7]


def _color_of(spec: dict, signal: str) -> str:
    scale = next(c["scale"] for c in _find(spec, "color") if isinstance(c, dict) and c.get("field") == "signal")
    return scale["range"][scale["domain"].index(signal)]


def test_one_colour_per_signal_from_the_registry_on_every_chart():
    # Issue 10 item 10 of issue 23: 'random' was pink on the per-ticket ERASER chart and red on the split-wide one.
    from ticketnet.interpret import signals

    rows = [{"signal": s, "fraction": f, "k": 1, "comprehensiveness": f, "sufficiency": 0.5 - f}
            for s in ("removal", "rollout", "random", "b1 h2") for f in (0.01, 0.5)]
    per_ticket = interp_charts.eraser_chart(pd.DataFrame(rows)).to_dict()
    table = pd.DataFrame({"signal": ["removal", "random", "rollout"], "comprehensiveness": [0.3, 0.1, 0.2],
                          "sufficiency": [0.1, 0.4, 0.2]})
    split_wide = interp_charts.mean_eraser_chart(table, ["comprehensiveness", "sufficiency"]).to_dict()
    taus = interp_charts.tau_distribution(_split_table()).to_dict()
    for name in ("random", "rollout"):
        colours = {_color_of(per_ticket, name), _color_of(split_wide, name), _color_of(taus, name)}
        assert colours == {signals.signal_color(name)}, (name, colours)
    assert signals.signal_color("random") != signals.signal_color("removal")
    named = [signals.signal_color(s) for s in ("removal", "rollout", "random", "mean attention b1", "mean attention b2",
                                               "integrated gradients", "phrase deletion", "phrase shapley", "b1 h1")]
    assert len(set(named)) == len(named)


def test_eraser_titles_stay_within_their_panels():
    # Issue 23 item 10: the x titles ran into each other ("…signfraction…") and the split-wide facet titles too
    # ("comprehensivenesufficiency"). About 6 px per character of an 11 px title.
    rows = [{"signal": "removal", "fraction": f, "k": 1, "comprehensiveness": f, "sufficiency": 0.5 - f}
            for f in (0.01, 0.5)]
    spec = interp_charts.eraser_chart(pd.DataFrame(rows)).to_dict()
    title = spec["spec"]["encoding"]["x"]["title"]
    lines = title if isinstance(title, list) else [title]
    assert all(6 * len(line) <= spec["spec"]["width"] + spec["spacing"] for line in lines), lines
    table = pd.DataFrame({"signal": ["removal", "random"], "comprehensiveness": [0.3, 0.1], "sufficiency": [0.1, 0.4]})
    split_wide = interp_charts.mean_eraser_chart(table, ["comprehensiveness", "sufficiency"]).to_dict()
    assert "row" in split_wide["facet"] and "column" not in split_wide["facet"]   # one measure above the other
    assert split_wide["facet"]["row"]["header"]["labelOrient"] == "top"
    assert 6 * len("comprehensiveness") <= split_wide["spec"]["width"] + 120


def test_dark_theme_text_on_the_page_is_theme_neutral():
    # Issue 23 item 11: the per-head bar labels were black on the dark page, the head-importance subtitles too.
    P = _patterns()
    imp = pd.DataFrame({"block": [1] * 4, "head": [1, 2, 3, 4], "accuracy": [0.9] * 4,
                        "accuracy_drop": [0.01, 0.0, -0.001, 0.02], "support_prob": [0.01, 0.0, 0.0, 0.02]})
    bars = charts.query_bars(P[0], TOKENS, 0).to_dict()
    labels = [lay for lay in bars["spec"]["layer"] if _mark_type(lay) == "text"]
    assert labels and all(lay["mark"]["color"] == theme.THEME_NEUTRAL_TEXT for lay in labels)
    row = charts.heads_row(P[0], TOKENS, 0, block=1, head_importance=imp).to_dict()
    subtitles = [t for t in _find(row, "title") if isinstance(t, dict) and "subtitle" in t]
    assert len(subtitles) == 4 and all(t["subtitleColor"] == theme.THEME_NEUTRAL_TEXT for t in subtitles)
    assert_readable_in_both_themes(row)


def test_the_confusion_matrix_stays_readable_at_12_teams_and_groups_the_rest_beyond_20():
    twelve = [f"team {i}" for i in range(12)]
    spec = quality.confusion_chart(np.eye(12, dtype=int) * 7 + 1, twelve).to_dict()
    assert spec["width"]["step"] == 31 and spec["height"]["step"] == 31           # 12 cells in about 380 px
    assert spec["layer"][1]["mark"]["fontSize"] == 10
    assert quality.confusion_step(5) == 56 and quality.confusion_step(20) == 26

    rng = np.random.default_rng(0)
    thirty = [f"t{i}" for i in range(30)]
    conf = rng.integers(0, 9, (30, 30))
    conf[3] += 100                                                                 # t3 has the most tickets
    merged, names = quality.confusion_teams(conf, thirty)
    assert merged.shape == (20, 20) and names[-1] == "other teams (11)"
    assert merged.sum() == conf.sum() and "t3" in names
    kept = [thirty.index(n) for n in names[:-1]]
    assert kept == sorted(kept)                                                    # in the router's order
    assert merged[names.index("t3"), names.index("t3")] == conf[3, 3]
    rest = [i for i in range(30) if i not in kept]
    assert merged[-1, -1] == conf[np.ix_(rest, rest)].sum()
    df = quality.confusion_frame(conf, thirty)
    assert len(df) == 400 and df["count"].sum() == conf.sum()


def test_the_probability_bars_show_the_most_probable_teams_and_the_true_one_beyond_twelve():
    from dashboard.ui import probability_chart

    teams = [f"team {i:02d}" for i in range(30)]
    probs = np.linspace(0.001, 0.06, 30)
    spec = probability_chart(probs, teams, true_team="team 00").to_dict()
    shown = [r["team"] for r in next(iter(spec["datasets"].values()))]
    assert len(shown) == 12 and shown[0] == "team 00" and shown[1:] == teams[-11:]
    assert spec["title"]["text"][0] == "the 12 most probable of 30 teams"
    assert spec["encoding"]["y"]["axis"]["labelLimit"] == 110
    five = probability_chart([0.2] * 5, teams[:5]).to_dict()
    assert len(next(iter(five["datasets"].values()))) == 5 and five["title"]["text"] == ["team probabilities"]


def test_the_probability_axis_has_three_labels_kept_inside_the_plot():
    from dashboard.ui import probability_chart

    spec = probability_chart([0.7, 0.2, 0.1], ["Billing", "Delivery", "Accounts"], true_team="Billing").to_dict()
    axis = spec["encoding"]["x"]["axis"]
    # Vega-Lite's own ticks crowd a narrow column into "0%100%"; three values, the outer ones flush with the plot.
    assert axis["values"] == [0, 0.5, 1] and axis["labelFlush"] is True and axis["format"] == ".0%"
    assert spec["encoding"]["x"]["scale"]["domain"] == [0, 1]
    assert spec["height"] == {"step": 20} and spec["title"]["text"] == ["team probabilities", "green: true team"]
