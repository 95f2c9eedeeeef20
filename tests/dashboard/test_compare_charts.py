"""The Compare page's charts, checked on their Vega-Lite specs."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import pytest

from dashboard.charts import compare as cc

LA, LB = cc.labels_of("larkfield", "retrain")
DELTAS = pd.DataFrame({
    "team": ["billing", "billing", "网络", "网络", "a.b:c", "a.b:c"],
    "measure": ["precision", "recall"] * 3,
    "a": [0.9, 0.8, 0.7, 0.6, 0.5, 0.5], "b": [0.95, 0.7, 0.7, 0.65, 0.5, 0.4],
    "delta": [0.05, -0.1, 0.0, 0.05, 0.0, -0.1], "low": [0.01, -0.2, -0.05, -0.02, 0.0, -0.3],
    "high": [0.09, -0.02, 0.05, 0.12, 0.0, 0.1], "support": [10, 10, 8, 8, 3, 3]})


def _valid(chart: alt.TopLevelMixin) -> dict:
    return chart.to_dict()                      # validates against the Vega-Lite schema


def test_the_delta_chart_colours_by_where_the_interval_lies():
    df = cc.delta_frame(DELTAS)
    assert df["verdict"].tolist() == ["B higher", "B lower", "no clear change", "no clear change",
                                      "no clear change", "no clear change"]
    spec = _valid(cc.team_deltas_chart(DELTAS))
    precision, recall = spec["hconcat"]
    zero, interval, point = precision["layer"]
    assert interval["mark"]["type"] == "rule" and interval["encoding"]["x"]["field"] == "low"
    assert interval["encoding"]["x2"]["field"] == "high" and point["encoding"]["x"]["field"] == "delta"
    assert point["encoding"]["y"]["sort"] == ["billing", "网络", "a.b:c"]          # team names as values, any text
    assert point["encoding"]["color"]["scale"]["domain"] == ["B higher", "no clear change", "B lower"]
    assert recall["layer"][2]["encoding"]["y"]["axis"]["labels"] is False       # one set of team labels
    # both panels on one symmetric scale that holds every interval
    lo, hi = point["encoding"]["x"]["scale"]["domain"]
    assert lo == -hi and hi >= 0.3
    titles = {precision["title"]["text"], recall["title"]["text"]}
    assert titles == {"precision", "recall"}


def test_the_deletion_chart_puts_both_routers_bars_on_each_token():
    effects = pd.DataFrame({"position": [0, 1, 2], "token": ["refund", ".", "not"],
                            "support_a": [0.5, -0.1, 0.0], "support_b": [0.2, 0.3, -0.4]})
    long = cc.deletion_frame(effects, LA, LB)
    assert long["label"].tolist() == ["0:refund", "0:refund", "1:.", "1:.", "2:not", "2:not"]
    assert long["router"].tolist() == [LA, LB] * 3
    assert long["support"].tolist() == [0.5, 0.2, -0.1, 0.3, 0.0, -0.4]
    scaled = cc.deletion_frame(effects, LA, LB, own_scale=True)
    assert scaled["support"].tolist() == pytest.approx([1.0, 0.5, -0.2, 0.75, 0.0, -1.0])   # each by its largest |effect|
    flat = cc.deletion_frame(effects.assign(support_a=0.0), LA, LB, own_scale=True)
    assert flat.loc[flat["router"] == LA, "support"].tolist() == [0.0, 0.0, 0.0]
    spec = _valid(cc.deletion_chart(effects, LA, LB, "support for its predicted team (logit difference)"))
    enc = spec["encoding"]
    assert spec["mark"]["type"] == "bar"
    assert enc["y"]["sort"] == ["0:refund", "1:.", "2:not"] and enc["yOffset"]["field"] == "router"
    assert enc["color"]["scale"] == {"domain": [LA, LB], "range": [cc.COLOR_A, cc.COLOR_B]}


def test_the_head_chart_draws_divergence_and_the_importance_known():
    changes = pd.DataFrame({"block": [1, 1, 2, 2], "head": [1, 2, 1, 2], "jsd": [0.1, 0.02, 0.3, 0.0],
                            "tickets": 40, "accuracy_drop_a": [0.05, 0.0, 0.2, 0.01]})
    df, imp = cc.head_frame(changes, LA, LB)
    assert df["head_label"].tolist() == ["b1 h1", "b1 h2", "b2 h1", "b2 h2"]
    assert imp["router"].unique().tolist() == [LA]                              # B's importance not computed
    spec = _valid(cc.head_change_chart(changes, LA, LB))
    jsd, importance = spec["hconcat"]
    assert jsd["encoding"]["x"]["field"] == "jsd" and jsd["encoding"]["y"]["sort"] == list(df["head_label"])
    assert importance["encoding"]["x"]["field"] == "accuracy_drop"
    alone = _valid(cc.head_change_chart(changes.drop(columns="accuracy_drop_a"), LA, LB))
    assert "hconcat" not in alone and alone["encoding"]["x"]["field"] == "jsd"


def test_the_page_charts_convert_as_streamlit_sends_them():
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec as to_spec

    effects = pd.DataFrame({"position": np.arange(3), "token": ["a", "b", "c"], "support_a": [1.0, 0, 0],
                            "support_b": [0.0, 1, 0]})
    for chart in (cc.team_deltas_chart(DELTAS), cc.deletion_chart(effects, LA, LB, "support"),
                  cc.head_change_chart(pd.DataFrame({"block": [1], "head": [1], "jsd": [0.2], "tickets": [3]}), LA, LB)):
        assert isinstance(to_spec(chart), dict)


@pytest.mark.parametrize("name_a,name_b", [("same", "same"), ("helpdesk", "helpdesk/seed-3")])
def test_the_legend_labels_stay_distinct(name_a, name_b):
    a, b = cc.labels_of(name_a, name_b)
    assert a != b and a.startswith("A · ") and b.startswith("B · ")
