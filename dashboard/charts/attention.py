"""Attention charts: one head's heatmap, a block's heads, the query row's reading, the bands, the model view."""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from dashboard.charts.theme import _cell_step, _np, _sort_list, COLUMN_PX, FRAME_COLOR, HALF_COLUMN_PX, HEATMAP_SCHEME, THEME_NEUTRAL_TEXT, token_labels, Y_LABELS_PX


def pattern_frame(pattern, tokens: Sequence[str], head: int | None = None, block: int | None = None) -> pd.DataFrame:
    """Long table of one (n, n) attention pattern: one row per (query, key) cell."""
    w = _np(pattern)
    n = len(tokens)
    if w.shape != (n, n):
        raise ValueError(f"pattern must be ({n}, {n}) for {n} tokens, got {w.shape}")
    labels = token_labels(tokens)
    q, k = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    df = pd.DataFrame({
        "query_pos": q.ravel(), "key_pos": k.ravel(),
        "query": [labels[i] for i in q.ravel()], "key": [labels[j] for j in k.ravel()],
        "weight": w.ravel(),
    })
    if head is not None:
        df.insert(0, "head", head)
    if block is not None:
        df.insert(0, "block", block)
    return df


def head_heatmap(pattern, tokens: Sequence[str], head: int, query_row: int | None = None, *,
                 block: int | None = None, show_y_labels: bool = True, step: float | None = None,
                 title: str | None = None, subtitle: str | None = None) -> alt.LayerChart:
    """One head's (n, n) attention weights: rows = reading token (query), columns = token read (key).

    Colour: square-root scale from 0 to this head's largest weight. `query_row` (a position) is framed by a
    rectangle across the whole row. Tooltip: query, key, weight. `head` is 1-based, as people count heads.
    """
    n = len(tokens)
    df = pattern_frame(pattern, tokens)
    labels = _sort_list(tokens)
    peak = float(df["weight"].max()) if n else 1.0
    step = step or _cell_step(n, room=HALF_COLUMN_PX - Y_LABELS_PX, lo=2.0)
    font = 10 if step >= 11 else 9
    overlap = False if step >= 9 else "parity"            # every token labelled when the cells are tall enough
    x = alt.X("key:O", sort=labels, title="token read (key)",
              axis=alt.Axis(labelAngle=-60, labelLimit=90, labelFontSize=font, labelOverlap=overlap))
    y_axis = (alt.Axis(labelLimit=90, labelFontSize=font, labelOverlap=overlap) if show_y_labels
              else alt.Axis(labels=False, ticks=False))
    y = alt.Y("query:O", sort=labels, title="reading token (query)" if show_y_labels else None, axis=y_axis)
    heading = title or (f"block {block} · head {head}" if block is not None else f"head {head}")
    alone = query_row is None                  # one layer: its data on the layer itself (see `removal_chart`)
    cells = alt.Chart(alt.Undefined if alone else df).mark_rect().encode(
        x=x, y=y,
        color=alt.Color("weight:Q", scale=alt.Scale(type="sqrt", domain=[0, max(peak, 1e-9)], scheme=HEATMAP_SCHEME),
                        legend=alt.Legend(title="weight", gradientLength=120, orient="bottom", format=".2f")),
        tooltip=[alt.Tooltip("query:N", title="query"), alt.Tooltip("key:N", title="key"),
                 alt.Tooltip("weight:Q", title="weight", format=".3f")],
    )
    layers = [cells]
    if query_row is not None:
        layers.append(query_row_frame(tokens, query_row))
    subtitle_style = {"subtitle": subtitle, "subtitleColor": THEME_NEUTRAL_TEXT} if subtitle else {}
    # Sizes and title given to the layer itself: .properties() would check each against the schema and copy it.
    return alt.layer(*layers, **({"data": df} if alone else {}), width=alt.Step(step), height=alt.Step(step),
                     title=alt.Title(heading, anchor="start", **subtitle_style))


def query_row_frame(tokens: Sequence[str], query_row: int) -> alt.Chart:
    """The red rectangle framing one query row across a heatmap of these tokens (a layer of `head_heatmap`)."""
    n = len(tokens)
    if not 0 <= query_row < n:
        raise ValueError(f"query_row {query_row} outside 0..{n - 1}")
    labels = _sort_list(tokens)
    return alt.Chart(pd.DataFrame({"query": [labels[query_row]]})).mark_rect(
        filled=False, stroke=FRAME_COLOR, strokeWidth=2.5).encode(
        y=alt.Y("query:O", sort=labels), x=alt.XValue(0), x2=alt.X2Value("width"))


_TOP_LEVEL_ONLY = ("$schema", "datasets", "config", "autosize", "background", "padding", "usermeta")


def add_layer_to_views(spec: dict, layer: dict) -> dict:
    """A copy of the Vega-Lite dict `spec` with the top-level spec `layer` appended to every layered view in it.

    For specs already turned into dicts (and cached): `add_layer_to_views(heads_row(W, tokens).to_dict(),
    query_row_frame(tokens, r).to_dict())` equals `heads_row(W, tokens, r).to_dict()`, so a rerun that only moves
    the query row adds one small layer instead of rebuilding every heatmap. Named datasets are merged.
    """
    part = {k: v for k, v in layer.items() if k not in _TOP_LEVEL_ONLY}

    def walk(node):
        if isinstance(node, dict):
            out = {k: walk(v) for k, v in node.items() if k != "datasets"}
            if isinstance(node.get("layer"), list):
                # Altair puts the data of a one-layer chart on the view; with a second layer each layer holds its
                # own, as the builder would have written it.
                shared = out.pop("data", None)
                layers = [lay if shared is None or "data" in lay else {"data": shared, **lay} for lay in out["layer"]]
                out["layer"] = [*layers, part]
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out = walk(spec)
    datasets = {**spec.get("datasets", {}), **layer.get("datasets", {})}
    if datasets:
        out["datasets"] = datasets
    return out


HEADS_SPACING = 14


def heads_columns(h_count: int, n: int, width: float = COLUMN_PX) -> int:
    """Heads per row so that a row of n-token heatmaps fits `width` pixels: all of them while every token keeps a
    label (cells of 9 px or more), else two while cells stay 5 px or more, else one (long tickets stacked)."""
    for columns in (h_count, 2):
        if columns <= h_count and _row_room(columns, width) / max(n, 1) >= (9.0 if columns == h_count else 5.0):
            return columns
    return 1


def cell_step_for(columns: int, n: int, width: float = COLUMN_PX) -> float:
    """The cell size `heads_row` draws n-token heatmaps with, `columns` of them in `width` pixels."""
    return _cell_step(n, room=_row_room(columns, width), lo=2.0, hi=18.0)


def _row_room(columns: int, width: float) -> float:
    """Pixels for the cells of one heatmap when `columns` of them share `width` (labels on the first only)."""
    return (width - Y_LABELS_PX - HEADS_SPACING * (columns - 1)) / columns


def heads_row(patterns, tokens: Sequence[str], query_row: int | None = None, *, block: int | None = None,
              head_importance: pd.DataFrame | None = None, columns: int | None = None,
              width: float = COLUMN_PX) -> alt.TopLevelMixin:
    """The h heatmaps of one block, each on its own colour scale with its own legend, the query row framed in each.

    `columns` heads per row: by default as many as fit `width` pixels with readable cells (`heads_columns`):
    all four for short tickets, two, or one per row for long ones, so the grid never runs off the page; token
    labels on the y axis of the first column only. With `head_importance` (rows block, head, accuracy_drop,
    support_prob), each subtitle carries what masking that head costs and the head's support for the true team,
    so a pattern and whether it matters sit together.
    """
    w = _np(patterns)
    if w.ndim != 3:
        raise ValueError(f"patterns must be (h, n, n), got {w.shape}")
    h_count, n = w.shape[0], len(tokens)
    columns = columns or heads_columns(h_count, n, width)
    step = cell_step_for(columns, n, width)
    charts = [head_heatmap(w[h], tokens, h + 1, query_row, block=block, show_y_labels=(h % columns == 0),
                           step=step, subtitle=head_subtitle(head_importance, block, h + 1))
              for h in range(h_count)]
    # Every concatenation resolves colour itself: an hconcat inside a vconcat otherwise shares one scale and
    # one legend between its heads (Vega warns "Conflicting scale property domains" and takes the union).
    # The resolution and autosize go to each concatenation as it is made: .resolve_scale(), .resolve_legend() and
    # .properties() each copy the whole grid again (Altair copies deeply), most of building a 256-token ticket's row.
    pad = {"autosize": alt.AutoSizeParams(type="pad")}                 # drawn at its size, which fits `width`
    last = len(range(0, h_count, columns)) == 1
    rows = [alt.hconcat(*charts[i : i + columns], spacing=HEADS_SPACING, resolve=_independent_color(),
                        **(pad if last else {})) for i in range(0, h_count, columns)]
    return rows[0] if last else alt.vconcat(*rows, spacing=18, resolve=_independent_color(), **pad)


def head_subtitle(head_importance: pd.DataFrame | None, block: int | None, head: int) -> list[str] | None:
    """The importance subtitle of one head (1-based), where `head_importance` has its row; else None."""
    if head_importance is None or block is None:
        return None
    hit = head_importance[(head_importance["block"] == block) & (head_importance["head"] == head)]
    if not len(hit):
        return None
    r = hit.iloc[0]
    return importance_subtitle(float(r["accuracy_drop"]), float(r["support_prob"]))


def importance_subtitle(accuracy_support: float, support_prob: float) -> list[str]:
    """A head's importance over the valid split, in the one sign convention (with the head − masked), as two lines:
    the accuracy it adds and its support for the true team in probability."""
    from ticketnet.interpret.interventions.units import format_effect

    return [f"with − masked: accuracy {format_effect(accuracy_support)}",
            f"support for the true team {format_effect(support_prob)} (probability)"]


def _independent_color() -> alt.Resolve:
    return alt.Resolve(scale=alt.ScaleResolveMap(color="independent"), legend=alt.LegendResolveMap(color="independent"))


def query_frame(patterns, tokens: Sequence[str], query_row: int) -> pd.DataFrame:
    """What the query token reads in each head: rows head, key_pos, key, token, weight, rank (1 = most read)."""
    w = _np(patterns)
    labels = token_labels(tokens)
    rows = []
    for h in range(w.shape[0]):
        ws = w[h, query_row]
        order = np.argsort(-ws, kind="stable")
        rank = np.empty(len(ws), dtype=int)
        rank[order] = np.arange(1, len(ws) + 1)
        for j, v in enumerate(ws):
            rows.append({"head": f"head {h + 1}", "key_pos": j, "key": labels[j], "token": tokens[j],
                         "weight": float(v), "rank": int(rank[j])})
    return pd.DataFrame(rows)


def row_top(peak: float) -> float:
    """The top of a weight axis: `peak` rounded up to the next 0.05 (0.1 at least, 1 at most), room for the labels."""
    return float(min(1.0, max(0.1, math.ceil(float(peak) * 1.1 * 20) / 20)))


def query_bars(patterns, tokens: Sequence[str], query_row: int) -> alt.FacetChart:
    """One bar chart per head (stacked, sharing the token axis): how the query token's weight (one row of each
    pattern) spreads over the tokens it reads. The two tokens it reads most are labelled with their weight."""
    df = query_frame(patterns, tokens, query_row)
    labels = token_labels(tokens)
    n = len(tokens)
    step = _cell_step(n, room=COLUMN_PX - 110, lo=2.0, hi=22.0)     # head names and the weight axis beside
    # One scale for every head (they stay comparable), up to the row's largest weight: weights of 0.03-0.2 on a
    # long ticket filled a tenth of a 0-1 axis.
    top_of_row = row_top(df["weight"].max() if len(df) else 1.0)
    base = alt.Chart().encode(
        x=alt.X("key:O", sort=labels, title="token read (key)",
                axis=alt.Axis(labelAngle=-60, labelLimit=90, labelFontSize=10,
                              labelOverlap=False if step >= 10 else "parity")),
        y=alt.Y("weight:Q", title="weight", scale=alt.Scale(domain=[0, top_of_row]),
                # Only the base and the top, each kept inside its own head's strip (flush), so the 0 of one head
                # and the top of the next never overlap.
                axis=alt.Axis(values=[0, top_of_row], labelFlush=True, format=".2~f")),
    )
    bars = base.mark_bar(color="#4c78a8").encode(
        tooltip=[alt.Tooltip("head:N"), alt.Tooltip("key:N", title="key"), alt.Tooltip("weight:Q", format=".3f"),
                 alt.Tooltip("rank:Q")])
    top = base.mark_text(dy=-7, fontSize=10, color=THEME_NEUTRAL_TEXT).encode(
        text=alt.Text("weight:Q", format=".2f")).transform_filter(
        "datum.rank <= 2")
    return alt.layer(bars, top, data=df).properties(width=alt.Step(step), height=70).facet(
        row=alt.Row("head:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")), spacing=6)


def received_frame(patterns, tokens: Sequence[str]) -> pd.DataFrame:
    """Mean weight each token receives per head (the mean of each pattern column over the queries)."""
    w = _np(patterns)
    labels = token_labels(tokens)
    mean = w.mean(axis=1)                                               # (h, n)
    return pd.DataFrame([{"head": f"head {h + 1}", "key_pos": j, "key": labels[j], "received": float(mean[h, j])}
                         for h in range(w.shape[0]) for j in range(w.shape[2])])


BAND_FONT = 10                     # px, the bands' token labels


def bands_chart(patterns, tokens: Sequence[str]) -> alt.Chart:
    """Per head, the vertical bands of its heatmap: mean received weight per token (one strip per head)."""
    df = received_frame(patterns, tokens)
    labels = token_labels(tokens)
    heads = tuple(dict.fromkeys(df["head"]))        # head 1, 2, …, 12 as drawn: a plain :N axis sorts head 10 first
    n = len(tokens)
    return alt.Chart(df).mark_rect().encode(
        # Upright labels sit one band apart, so neighbours clear each other while a band is taller than the font;
        # slanted at -60° they ran into each other on 10-12 px bands ("6:delivery7:problem").
        x=alt.X("key:O", sort=labels, title="token read (key)",
                axis=alt.Axis(labelAngle=-90, labelLimit=90, labelFontSize=BAND_FONT,
                              labelOverlap=False if _band_step(n) >= BAND_FONT + 1 else "parity")),
        y=alt.Y("head:N", sort=heads, title=None, axis=alt.Axis(labelOverlap=False)),
        color=alt.Color("received:Q", scale=alt.Scale(type="sqrt", scheme="oranges"),
                        legend=alt.Legend(title="mean received", orient="right", format=".2f")),
        tooltip=[alt.Tooltip("head:N"), alt.Tooltip("key:N", title="key"),
                 alt.Tooltip("received:Q", title="mean received", format=".3f")],
    ).properties(width=alt.Step(_band_step(n)), height=alt.Step(18),
                 title=alt.Title("mean weight each token receives, per head (the vertical bands)", anchor="start"))


def _band_step(n: int) -> float:
    # Head names left, the legend and its title right (about 170 px); no floor above what the longest ticket
    # (max_len = 256 tokens) can have, or a ticket of 185 tokens or more pushed the legend past the column.
    return _cell_step(n, room=COLUMN_PX - 170, lo=1.0, hi=24.0)


def model_view(patterns, tokens: Sequence[str]) -> alt.FacetChart:
    """Every block × head pattern as small multiples, each coloured relative to its own largest weight."""
    w = _np(patterns)
    if w.ndim != 4:
        raise ValueError(f"patterns must be (blocks, h, n, n), got {w.shape}")
    frames = []
    for b in range(w.shape[0]):
        for h in range(w.shape[1]):
            df = pattern_frame(w[b, h], tokens, head=h + 1, block=b + 1)
            df["relative"] = df["weight"] / max(float(df["weight"].max()), 1e-12)
            frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    n = len(tokens)
    side = float(min((COLUMN_PX - 80) / 4, max(60, 2.5 * n)))        # four heads and the block header
    return alt.Chart(df).mark_rect().encode(
        x=alt.X("key_pos:O", axis=None), y=alt.Y("query_pos:O", axis=None),
        color=alt.Color("relative:Q", scale=alt.Scale(type="sqrt", domain=[0, 1], scheme=HEATMAP_SCHEME),
                        legend=alt.Legend(title="weight / head max", orient="bottom")),
        tooltip=[alt.Tooltip("block:O"), alt.Tooltip("head:O"), alt.Tooltip("query:N"), alt.Tooltip("key:N"),
                 alt.Tooltip("weight:Q", format=".3f")],
    ).properties(width=side, height=side).facet(
        row=alt.Row("block:O", title="block"), column=alt.Column("head:O", title="head"), spacing=8)


