"""Drawing charts: each built and converted to Vega-Lite once per input, heatmaps as images past n² cells."""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Sequence

import altair as alt
import pandas as pd
import streamlit as st

from dashboard.charts import attention as charts
from dashboard.data import model

try:
    # What `st.altair_chart` runs on every call: Altair's to_dict with each DataFrame turned into Arrow bytes
    # under a content-hash name. Private in Streamlit (pinned in constraints.txt); without
    # it the charts fall back to `st.altair_chart`, uncached.
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec as _altair_to_spec
except ImportError:                                             # pragma: no cover - another Streamlit
    _altair_to_spec = None


# -- charts: built and converted once per input, drawn from the cached Vega-Lite dict on every rerun ---------------
def _plain(value):
    """A torch tensor as a numpy array, so `st.cache_data` hashes its values (sequences and dicts looked into)."""
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


class _Unvalidated:
    """A built chart as `_altair_to_spec` reads it (it calls only `to_dict()`), its schema check left out: the
    check returns nothing and changes nothing, and it was half the conversion of a 256-token ticket's heatmaps
    (a jsonschema walk over every token of every axis's sort list). Every builder's output is validated by the
    chart tests instead (tests/dashboard/test_chart_specs.py holds the two conversions equal)."""

    def __init__(self, chart: alt.TopLevelMixin):
        self.chart = chart

    def to_dict(self) -> dict:
        return self.chart.to_dict(validate=False)


def _frame_digest(df: pd.DataFrame) -> bytes:
    """A chart's table as its cache key: the MD5 of its pickle, far cheaper than Streamlit's own hashing of a DataFrame,
    which every rerun of every chart drawn from one pays (docs/research-log.md, "Cutting the server's cost per
    action"). Equal tables laid out differently in memory may hash apart (a miss, never a wrong chart)."""
    return hashlib.md5(pickle.dumps(df, protocol=pickle.HIGHEST_PROTOCOL)).digest()


@st.cache_data(show_spinner=False, max_entries=512, ttl=model.TICKET_TTL_S, hash_funcs={pd.DataFrame: _frame_digest})
def _spec(name: str, _builder: Callable, args: tuple, kwargs: dict) -> dict:
    return _altair_to_spec(_Unvalidated(_builder(*args, **kwargs)))


def chart_spec(builder: Callable[..., alt.TopLevelMixin], *args, **kwargs) -> dict | alt.TopLevelMixin:
    """`builder(*args, **kwargs)` as the Vega-Lite dict `st.altair_chart` would send, computed once per input.

    Building an Altair chart and validating it is slow (docs/research-log.md, "What made the difference"); a rerun
    that shows the same chart again (another widget changed) reuses the dict. Arguments are hashed by value (tensors
    as arrays)."""
    args, kwargs = _plain(args), {k: _plain(v) for k, v in kwargs.items()}
    if _altair_to_spec is None:
        return builder(*args, **kwargs)
    return _spec(name=f"{builder.__module__}.{builder.__qualname__}", _builder=builder, args=args, kwargs=kwargs)


def show_chart(spec: dict | alt.TopLevelMixin, width: str | int = "content", **element):
    """Draw a spec from `chart_spec` (`element`: key, on_select, selection_mode, as st.altair_chart takes them);
    returns what the element returns (a selection event with on_select="rerun")."""
    if isinstance(spec, dict):
        return st.vega_lite_chart(spec, width=width, **element)
    return st.altair_chart(spec, width=width, **element)


def chart(builder: Callable[..., alt.TopLevelMixin], *args, width: str | int = "content", **kwargs) -> None:
    """Draw `builder(*args, **kwargs)` (a pure chart builder), its spec cached per input."""
    show_chart(chart_spec(builder, *args, **kwargs), width=width)


def selectable_chart(builder: Callable[..., alt.TopLevelMixin], *args, key: str, selection_mode: str,
                     width: str | int = "content", **kwargs):
    """`chart` for a chart with a selection: drawn with on_select="rerun" under `key`, its event returned. The
    spec is the cached one (st.altair_chart would build and check the chart again on every rerun)."""
    return show_chart(chart_spec(builder, *args, **kwargs), width=width, key=key, on_select="rerun",
                      selection_mode=selection_mode)


def heads_row(patterns, tokens: Sequence[str], query_row: int, *, block: int,
              head_importance: pd.DataFrame | None) -> None:
    """`charts.heads_row` with the query row framed: the heatmaps cached per block, the frame added per rerun,
    so moving the query row redraws no heatmap on the server."""
    n_heads = patterns.shape[0]
    if n_heads > 1 and charts.heads_columns(n_heads, len(tokens)) == 1:
        # One head a row in a laptop's column: as charts of their own in a row that wraps, two side by side in a
        # wide window instead of four stacked at half its width.
        step = charts.cell_step_for(1, len(tokens))
        frame = chart_spec(charts.query_row_frame, tokens, query_row)
        row = st.container(horizontal=True, gap="medium")
        for h in range(n_heads):
            spec = chart_spec(charts.head_heatmap, patterns[h], tokens, h + 1, None, block=block, step=step,
                              subtitle=charts.head_subtitle(head_importance, block, h + 1))
            with row.container(width="content"):
                if isinstance(spec, dict) and isinstance(frame, dict):
                    show_chart(charts.add_layer_to_views(spec, frame))
                else:
                    st.altair_chart(charts.head_heatmap(patterns[h], tokens, h + 1, query_row, block=block,
                                                        step=step), width="content")
        return
    base = chart_spec(charts.heads_row, patterns, tokens, None, block=block, head_importance=head_importance)
    if not isinstance(base, dict):
        st.altair_chart(charts.heads_row(patterns, tokens, query_row, block=block, head_importance=head_importance),
                        width="content")
        return
    frame = chart_spec(charts.query_row_frame, tokens, query_row)
    show_chart(charts.add_layer_to_views(base, frame))


def heads_images(patterns, tokens: Sequence[str], query_row: int, *, block: int, unit: str = "token",
                 below: str = "The bars below give the query row's weights by {unit}.") -> None:
    """The heads of one block as images (`charts.raster`), for tickets too long for a chart of n² cells, with a
    caption that says what is lost (the per-cell tooltips) and where the numbers are (`below`); `unit` names a row
    (token, piece or word)."""
    from dashboard.charts import raster

    n = len(tokens)
    st.caption(f"{n} {unit}s: each head is drawn as an image of its {n}×{n} weights (as a chart, {n * n:,} cells a "
               f"head take the browser seconds to draw). Row = the reading {unit}, top to bottom in ticket order; "
               f"column = the {unit} read, left to right; the query row is framed in red. " + below.format(unit=unit))
    row = st.container(horizontal=True, gap="small")
    for h in range(patterns.shape[0]):
        with row.container(width="content"):
            st.image(raster.heatmap_pixels(patterns[h], query_row), width=min(raster.IMAGE_PX, 260),
                     caption=f"block {block} · head {h + 1} · largest weight {float(patterns[h].max()):.2f}")
