"""The cached chart conversion (dashboard.render.chart_spec) gives the dict Streamlit's own, validated one gives."""

from __future__ import annotations

import pytest
import torch

from dashboard import render
from dashboard.charts import attention as charts
from dashboard.charts import theme

vega_charts = pytest.importorskip("streamlit.elements.vega_charts")


def _tokens(n: int) -> list[str]:
    return [f"w{i % 7}" for i in range(n)]


@pytest.mark.parametrize("builder, args, kwargs", [
    (charts.heads_row, (torch.softmax(torch.randn(4, 40, 40, generator=torch.Generator().manual_seed(0)), -1),
                        _tokens(40), None), {"block": 1, "head_importance": None}),
    (charts.query_bars, (torch.softmax(torch.randn(4, 12, 12, generator=torch.Generator().manual_seed(1)), -1),
                         _tokens(12), 3), {}),
    (charts.bands_chart, (torch.softmax(torch.randn(4, 12, 12, generator=torch.Generator().manual_seed(2)), -1),
                          _tokens(12)), {}),
])
def test_unvalidated_conversion_equals_streamlits(builder, args, kwargs):
    render._spec.clear()
    plain = render._plain(args)
    assert render.chart_spec(builder, *args, **kwargs) == vega_charts._convert_altair_to_vega_lite_spec(
        builder(*plain, **kwargs))


def test_conversion_skips_the_schema_check(monkeypatch):
    """The check of the finished spec was half of a 256-token ticket's chart conversion on the Heads page: the
    conversion must not run it (building the chart checks its parts as before)."""
    import altair as alt

    built = charts.bands_chart(torch.full((2, 3, 3), 1 / 3), ["a", "b", "c"])
    checked = []
    real = alt.utils.schemapi.SchemaBase.validate.__func__

    def spy(cls, instance, schema=None):
        checked.append(cls.__name__)
        return real(cls, instance, schema)

    monkeypatch.setattr(alt.utils.schemapi.SchemaBase, "validate", classmethod(spy))
    vega_charts._convert_altair_to_vega_lite_spec(built)
    assert checked                                 # the spy sees Streamlit's own conversion check the spec
    checked.clear()
    render._spec.clear()
    spec = render.chart_spec(lambda: built)
    assert checked == [] and spec["mark"]["type"] == "rect"


def test_heatmap_sort_orders_are_kept_by_reference_and_written_as_lists():
    """Altair copies a list item by item at every layer, concat and resolve (a third of building a 256-token
    ticket's heatmaps); a tuple it keeps by reference, and writes the same JSON list."""
    tokens = _tokens(30)
    grid = charts.heads_row(torch.full((2, 30, 30), 1 / 30), tokens, 4, block=1, head_importance=None, columns=2)
    cells, frame = grid.hconcat[0].layer
    assert isinstance(cells.encoding.x["sort"], tuple) and isinstance(frame.encoding.y["sort"], tuple)
    spec = grid.to_dict()
    assert spec["hconcat"][0]["layer"][0]["encoding"]["x"]["sort"] == theme.token_labels(tokens)


def test_a_chart_drawn_from_a_table_is_cached_by_the_table_s_content():
    import pandas as pd

    built = []

    def bars(df):
        built.append(len(df))
        return charts.alt.Chart(df).mark_bar().encode(x="v:Q", y="k:N")

    render._spec.clear()
    table = pd.DataFrame({"k": ["a", "b"], "v": [0.5, 0.25]})
    first = render.chart_spec(bars, table)
    assert render.chart_spec(bars, table.copy()) == first and built == [2], "an equal table: the cached spec"
    changed = table.assign(v=[0.5, 0.26])
    assert render.chart_spec(bars, changed) != first and built == [2, 2], "one value changed: built again"
    assert render._frame_digest(table) == render._frame_digest(table.copy()) != render._frame_digest(changed)
