"""Pure chart builders: tables, tensors and tokens in, `alt.Chart` out. Nothing here touches the model."""

# Conventions shared by every attention chart:
#
# * a token is labelled ``"position:token"`` (``"3:not"``) because tokens repeat in a ticket; axes keep the
#   reading order through an explicit sort list;
# * in an attention pattern the rows are the reading token (query) and the columns the token read (key);
# * colour is a square-root scale from 0 to the head's own largest weight, so weak but real structure stays
#   visible next to a head that puts nearly everything on one token;
# * every mark has a tooltip, and text from a ticket is only ever used as data (never as HTML, Markdown or
#   Vega expression).

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from ticketnet.interpret import signals as sig

HEATMAP_SCHEME = "blues"
FRAME_COLOR = "#d62728"
EFFECT_SCHEME = "redblue"            # diverging: red = removing the token lowers the target probability
SIGNAL_SCHEME = "purples"
RANDOM_SIGNAL = sig.RANDOM.name

# Widths are budgets for the narrowest layout the dashboard is laid out for: the main column of a 1000 px wide
# window with the sidebar open is 540 px (measured in Chromium), half of it (two st.columns) about 250 px. Charts sized in steps
# (one band per token) draw at their own size whatever the window, so their steps come from these budgets.
COLUMN_PX = 520
HALF_COLUMN_PX = 250
Y_LABELS_PX = 110                    # token labels (labelLimit 90) and the axis title beside them


def cell_text_color(dark_cell: str):
    """Text drawn on a coloured cell: white on a dark cell (the Vega expression `dark_cell`), near-black on a light
    one, in the light and the dark theme alike (the cell, not the page, is behind it). Text that is not on a
    cell sets no colour, so it takes the Streamlit theme's."""
    return when(dark_cell, "#ffffff", ON_LIGHT_CELL)


def when(test, if_true, if_false, channel: type = alt.ColorValue):
    """`alt.condition(test, alt.value(if_true), alt.value(if_false))` as a typed `channel` (alt.ColorValue,
    alt.OpacityValue...), which writes the same spec. Altair turns the plain dict that alt.condition returns into a
    channel with its from_dict, which first hashes every class of the Vega-Lite schema: about 5 ms a call, as a
    shorthand string ("team:N") costs where a typed channel (alt.Tooltip("team:N")) costs microseconds."""
    return channel(**alt.condition(test, alt.value(if_true), alt.value(if_false)))


ON_LIGHT_CELL = "#1b1b1b"
# Text on the page's own background (a bar's value label, a subtitle): Streamlit's chart theme colours axes, legends
# and titles but not text marks or subtitles, which stay near-black on the dark theme. This grey reads on both
# backgrounds (contrast about 4.3:1 on white and 4.4:1 on Streamlit's dark #0e1117).
THEME_NEUTRAL_TEXT = "#7a7a7a"
ACCURACY_NEGLIGIBLE = 0.01           # one ticket in a hundred: an accuracy change under it is drawn near white


def value_format(values, digits: int = 2, trim: bool = True) -> str:
    """A d3 format string for legends, axis labels and tooltips, with the decimals the values need: `digits`
    significant digits of the largest |value| (0.33 → ".2f", 0.0023 → ".4f"), exponent notation below 1e-4, so a
    legend over effects of 0.002 never reads 0.00 / 0.00 / 0.00. `trim` drops trailing zeros (axis labels stay short)."""
    v = _np(values).ravel()
    v = v[np.isfinite(v)]
    peak = float(np.abs(v).max()) if v.size else 0.0
    tilde = "~" if trim else ""
    if peak == 0:
        return f".2{tilde}f"
    if peak < 1e-4:
        return f".{digits}{tilde}e"
    decimals = max(0, digits - 1 - math.floor(math.log10(peak)))
    return f".{decimals}{tilde}f"


def support_scale(values, unit: str | None = None, floor: float | None = None) -> alt.Scale:
    """The diverging colour scale of support (score with the part − without it), red where positive (the part helps
    the target), blue where negative, white at 0, as the per-token bars and text. Symmetric, and never narrower than
    the negligible effect of `unit` (or `floor`), so a 1e-4 logit effect is drawn near white, not saturated."""
    v = _np(values).ravel()
    v = v[np.isfinite(v)]
    peak = float(np.abs(v).max()) if v.size else 0.0
    least = floor if floor is not None else (sig.NEGLIGIBLE_EFFECT[unit] if unit is not None else 1e-12)
    peak = max(peak, least)
    return alt.Scale(scheme=EFFECT_SCHEME, domain=[-peak, peak], reverse=True)


def scale_peak(scale: alt.Scale) -> float:
    """The upper end of a symmetric scale made by `support_scale`."""
    return float(scale.domain[1])


def signal_scale(names: Sequence[str]) -> alt.Scale:
    """Colours of these signals from the registry (`signals.signal_color`): one colour per signal on every chart."""
    names = list(dict.fromkeys(names))
    return alt.Scale(domain=names, range=[sig.signal_color(n) for n in names])


def _np(x) -> np.ndarray:
    """A torch tensor, list or array as a float64 numpy array (no torch import needed here)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Unique axis labels for possibly repeated tokens: ``["0:it", "1:'", "2:s", ...]``."""
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


def _sort_list(tokens: Sequence[str]) -> tuple[str, ...]:
    """`token_labels` as an axis's sort order: a tuple, which Altair keeps by reference where it copies a chart
    (it copies a list item by item at every layer, concat and resolve: a third of building a 256-token
    ticket's heatmaps) and writes as the same JSON list."""
    return tuple(token_labels(tokens))


def _cell_step(n: int, room: float = 300.0, lo: float = 4.0, hi: float = 16.0) -> float:
    """Pixels per heatmap cell so that an n×n map fits about `room` pixels."""
    return float(min(hi, max(lo, room / max(n, 1))))


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


def bands_chart(patterns, tokens: Sequence[str]) -> alt.Chart:
    """Per head, the vertical bands of its heatmap: mean received weight per token (one strip per head)."""
    df = received_frame(patterns, tokens)
    labels = token_labels(tokens)
    n = len(tokens)
    return alt.Chart(df).mark_rect().encode(
        x=alt.X("key:O", sort=labels, title="token read (key)",
                axis=alt.Axis(labelAngle=-60, labelLimit=90, labelFontSize=10,
                              labelOverlap=False if _band_step(n) >= 10 else "parity")),
        y=alt.Y("head:N", title=None, axis=alt.Axis(labelOverlap=False)),
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


MAX_CONFUSION_TEAMS = 20            # beyond this, the teams with the most tickets and one row/column for the rest


def confusion_teams(confusion, teams: Sequence[str], top: int = MAX_CONFUSION_TEAMS) -> tuple[np.ndarray, list[str]]:
    """The matrix and its team names as drawn: all teams up to `top`, else the `top` − 1 with the most true tickets
    (in the router's order) and "other teams (k)" summing the rest, in rows and columns alike."""
    c = _np(confusion).astype(np.int64)
    if len(teams) <= top:
        return c, list(teams)
    kept = sorted(np.argsort(-c.sum(axis=1), kind="stable")[: top - 1])
    rest = [i for i in range(len(teams)) if i not in set(kept)]
    groups = [[i] for i in kept] + [rest]
    merged = np.array([[c[np.ix_(g, h)].sum() for h in groups] for g in groups])
    return merged, [teams[i] for i in kept] + [f"other teams ({len(rest)})"]


def confusion_frame(confusion, teams: Sequence[str]) -> pd.DataFrame:
    c, names = confusion_teams(confusion, teams)
    rows = []
    for i, t in enumerate(names):
        total = c[i].sum()
        for j, p in enumerate(names):
            rows.append({"true": t, "predicted": p, "count": int(c[i, j]),
                         "share_of_true": float(c[i, j] / total) if total else 0.0, "correct": i == j})
    return pd.DataFrame(rows)


CONFUSION_PARAM = "cell"
CONFUSION_STEP = 56                  # five teams and their labels in about 380 px
CONFUSION_WIDTH_PX = 380             # more teams share this width, down to MIN_CONFUSION_STEP a cell
MIN_CONFUSION_STEP = 26              # a four-digit count in 10 px type still fits


def confusion_step(n_teams: int) -> int:
    return max(MIN_CONFUSION_STEP, min(CONFUSION_STEP, CONFUSION_WIDTH_PX // max(1, n_teams)))


def confusion_chart(confusion, teams: Sequence[str]) -> alt.LayerChart:
    """Confusion matrix (rows true team, columns predicted team) with a click selection named ``cell``.

    In Streamlit, `st.altair_chart(chart, on_select="rerun")` returns the clicked cell as
    ``event.selection.cell == [{"true": ..., "predicted": ...}]``; double-click clears it.
    """
    df = confusion_frame(confusion, teams)
    names = list(dict.fromkeys(df["true"]))
    step = confusion_step(len(names))
    pick = alt.selection_point(name=CONFUSION_PARAM, fields=["true", "predicted"], on="click", clear="dblclick")
    base = alt.Chart().encode(                   # the data on the layer: see `removal_chart`
        x=alt.X("predicted:N", sort=names, title="predicted team",
                  axis=alt.Axis(labelAngle=-35, labelAlign="left", orient="top", labelOverlap=False, labelLimit=90)),
        y=alt.Y("true:N", sort=names, title="true team", axis=alt.Axis(labelOverlap=False, labelLimit=140)),
    )
    cells = base.mark_rect(stroke="white", strokeWidth=1, cursor="pointer").encode(
        color=alt.Color("share_of_true:Q", scale=alt.Scale(scheme="greens", domain=[0, 1]),
                        legend=alt.Legend(title="share of true team", format=".0%", gradientLength=150,
                                          orient="bottom")),
        opacity=when(pick, 1.0, 0.35, alt.OpacityValue),
        tooltip=[alt.Tooltip("true:N"), alt.Tooltip("predicted:N"), alt.Tooltip("count:Q"),
                 alt.Tooltip("share_of_true:Q", format=".1%")],
    ).add_params(pick)
    text = base.mark_text(fontSize=13 if step >= 40 else 10).encode(
        text=alt.Text("count:Q"),
        color=cell_text_color("datum.share_of_true > 0.5"),
    )
    return alt.layer(cells, text, data=df, width=alt.Step(step), height=alt.Step(min(36, step)),
                     title=alt.Title("click a cell to filter the table; double-click to clear", anchor="start",
                                     fontSize=11, fontWeight="normal"))


SIGNED_EFFECTS = sig.names(sig.EFFECTS)
REMOVAL_SPACING = 8


def _title_lines(title: str) -> list[str]:
    """ "support for payments (logit difference)" as ["support for", "payments", "(logit difference)"]."""
    head, _, unit = title.partition(" (")
    lead = "support for "
    lines = [lead.strip(), head[len(lead):]] if head.startswith(lead) else [head]
    return lines + ([f"({unit}"] if unit else [])


TITLE_CHAR_PX = 6.6                  # about one character of a 12 px panel title


def wrap_words(text: str, width_px: float, char_px: float = TITLE_CHAR_PX) -> list[str]:
    """`text` in lines of whole words that each fit `width_px` ("integrated gradients" over a 70 px panel: two
    lines), so a narrow panel's title is never cut to "integrated …"."""
    room = max(1, int(width_px / char_px))
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= room:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [text]


def _hbars(df: pd.DataFrame, column: str, labels: list[str], *, show_labels: bool, kind: str,
           width: float = 130, x_title: str | None = None) -> alt.Chart:
    """Horizontal bars of one per-token column of `df`, without data of their own (the concatenation holds `df`);
    kind: "signed" (red > 0 > blue), "magnitude" or "signal".
    `x_title` "support for X (unit)" is drawn on three lines, "support for", "X" and "(unit)", so a narrow panel
    keeps the team's name."""
    title = None if x_title is None else _title_lines(x_title)
    y_axis = (alt.Axis(labelLimit=110, labelOverlap=False, labelFontSize=11) if show_labels
              else alt.Axis(labels=False, ticks=False, title=None))
    if kind == "signed":
        color = when(f"datum[{column!r}] >= 0", "#c0392b", "#2874a6")
    else:
        color = alt.ColorValue("#e67e22" if kind == "magnitude" else "#7d3c98")
    # titleLimit: a long team name ends in an ellipsis inside the panel rather than widening the chart past its column.
    # Labels and tooltips with the digits the values need: effects of 0.002 read 0.002, not 0.00.
    return alt.Chart(width=width, height=alt.Step(16),
                     title=alt.Title(wrap_words(column, width + 10), anchor="start", fontSize=12,
                                     limit=width + 10)).mark_bar().encode(
        y=alt.Y("label:O", sort=labels, title=None, axis=y_axis),
        x=alt.X(f"{column}:Q", title=title, axis=alt.Axis(tickCount=4 if width >= 100 else 2, labelFontSize=10,
                                                          labelOverlap=True, titleFontSize=10, titleLimit=width,
                                                          format=value_format(df[column]))),
        color=color,
        tooltip=[alt.Tooltip("label:N", title="token"),
                 alt.Tooltip(f"{column}:Q", title=x_title, format=value_format(df[column], 3, trim=False))],
    )


def removal_chart(per_token: pd.DataFrame, effects: Sequence[str], signals: Sequence[str],
                  support: str | None = None) -> alt.HConcatChart:
    """Per-token removal effects (signed support red/blue, TV orange) beside attention/gradient signals (purple),
    one panel per column, tokens down a shared axis in reading order.

    `per_token` needs ``position`` and ``token`` columns and every name in `effects` and `signals`; `support`, the
    `support_title` of the signed effects ("support for Billing (logit difference)"), titles their x axes.
    """
    missing = [c for c in ("position", "token", *effects, *signals) if c not in per_token.columns]
    if missing:
        raise ValueError(f"per_token lacks column(s) {', '.join(missing)}")
    if not effects and not signals:
        raise ValueError("removal_chart needs at least one effect or signal column")
    shown = list(dict.fromkeys([*effects, *signals]))
    # The columns drawn and no others: the chart's data goes to the browser (and into the spec cache) whole.
    df = pd.DataFrame({"position": per_token["position"].to_numpy(), "token": per_token["token"].to_numpy(),
                       **{c: per_token[c].to_numpy() for c in shown}})
    df["label"] = [f"{int(p)}:{t}" for p, t in zip(df["position"], df["token"])]
    labels = tuple(df["label"])                  # a tuple: Altair copies a list item by item in every panel
    count = len(effects) + len(signals)
    # All panels share the column: about 130 px each for three, narrower (not below 60) for more.
    width = float(max(60, min(130, (COLUMN_PX - Y_LABELS_PX) / count - REMOVAL_SPACING - 12)))
    panels = []
    for c in effects:
        kind = "signed" if c in SIGNED_EFFECTS else "magnitude"
        panels.append(_hbars(df, c, labels, show_labels=not panels, kind=kind, width=width,
                             x_title=support if kind == "signed" else None))
    for c in signals:
        kind = "signed" if float(df[c].min()) < 0 else "signal"
        panels.append(_hbars(df, c, labels, show_labels=not panels, kind=kind, width=width))
    # The data given to the concatenation once, not to each panel: Altair moves panels' shared data up itself, but
    # first names each panel by a hash of its spec with the DataFrame printed as text (pandas' repr, tens of ms).
    return alt.hconcat(*panels, data=df, spacing=REMOVAL_SPACING, autosize=alt.AutoSizeParams(type="pad"),
                       resolve=alt.Resolve(scale=alt.ScaleResolveMap(x="independent")))


TAU_LABELS_PX = 120                  # signal names beside the τ boxes ("mean attention b2" in about 100 px)
FIT_X = alt.AutoSizeParams(type="fit-x", contains="padding")


def tau_distribution(split: pd.DataFrame, chosen: Sequence[str] | None = None) -> alt.LayerChart:
    """Box plots of per-ticket Kendall τ (signal vs removal effect) per signal, the random baseline included.

    `split` is a long table (signal, metric, value), as `interpret_split` gives; `chosen` limits the signals.
    """
    tau = sig.TAU
    long = tau_long(split, chosen)
    order = list(dict.fromkeys(long[sig.SIGNAL]))
    box = alt.Chart(long).mark_boxplot(extent=1.5, size=14).encode(
        y=alt.Y(f"{sig.SIGNAL}:N", sort=order, title=None,
                axis=alt.Axis(labelOverlap=False, labelLimit=TAU_LABELS_PX - 10)),
        x=alt.X(f"{tau}:Q", title=["Kendall τ with the removal effect", "(per ticket)"],
                scale=alt.Scale(domain=[-1, 1])),
        color=alt.Color(f"{sig.SIGNAL}:N", scale=signal_scale(order), legend=None),     # random: the registry's grey
        tooltip=[alt.Tooltip(f"{sig.SIGNAL}:N")],
    )
    medians = long.groupby(sig.SIGNAL, sort=False)[tau].median()
    zero = alt.Chart(pd.DataFrame({tau: [0.0]})).mark_rule(strokeDash=[4, 3], color="#888").encode(x=alt.X(f"{tau}:Q"))
    rnd = medians.get(RANDOM_SIGNAL)
    layers = [zero, box]
    if rnd is not None and np.isfinite(rnd):
        layers.append(alt.Chart(pd.DataFrame({tau: [float(rnd)]})).mark_rule(color="#aaaaaa").encode(
            x=alt.X(f"{tau}:Q"), tooltip=[alt.Tooltip(f"{tau}:Q", title="random baseline median", format=".3f")]))
    # The width is the whole chart's, signal names included (fit-x): without it Streamlit fits the layered chart into
    # its `width` with the labels inside, and a width meant for the plot alone left it 0 px wide, no box drawn.
    # Pages draw it width="stretch", so the plot takes the column; HALF_COLUMN_PX is the narrowest it gets.
    return alt.LayerChart(layer=list(layers), width=HALF_COLUMN_PX, height=alt.Step(22), autosize=FIT_X)



def tau_long(split: pd.DataFrame, chosen: Sequence[str] | None = None) -> pd.DataFrame:
    """(signal, tau) rows of a long split table's τ values, missing ones (one-token tickets) left out."""
    rows = split[split[sig.METRIC] == sig.TAU]
    if chosen is not None:
        rows = rows[rows[sig.SIGNAL].isin(set(chosen))]
    long = rows[[sig.SIGNAL, sig.VALUE]].rename(columns={sig.VALUE: sig.TAU})
    return long.dropna(subset=[sig.TAU]).reset_index(drop=True)


def _melt(df: pd.DataFrame, id_vars: Sequence[str], value_vars: Sequence[str], var_name: str,
          value_name: str) -> pd.DataFrame:
    """`df.melt(...)` built column by column from arrays: the same table, in a fifth of melt's time on a
    table of tens of rows."""
    if not len(df):                              # melt's own column types for an empty table
        return df.melt(id_vars=list(id_vars), value_vars=list(value_vars), var_name=var_name, value_name=value_name)
    return pd.DataFrame({**{c: np.concatenate([df[c].to_numpy()] * len(value_vars)) for c in id_vars},
                         var_name: np.repeat(np.asarray(value_vars, dtype=object), len(df)),
                         value_name: np.concatenate([df[v].to_numpy() for v in value_vars])})


def eraser_chart(eraser: pd.DataFrame, signals: Sequence[str] | None = None) -> alt.FacetChart:
    """ERASER curves: comprehensiveness (drop when the top-k tokens of a signal are removed; higher = the signal
    found what matters) and sufficiency (drop when only they are kept; lower = better) against the fraction kept."""
    df = eraser if signals is None else eraser[eraser["signal"].isin(signals)]
    long = _melt(df, [c for c in ("signal", "fraction", "k") if c in df.columns], list(sig.ERASER_METRICS),
                 "measure", "drop")
    width = (COLUMN_PX - 150) / 2
    # Axis titles on two lines within their panel: on one line each ran into the next panel's ("…signfraction…").
    return alt.Chart(long).mark_line(point=True).encode(
        x=alt.X("fraction:Q", title=["fraction of tokens", "(the signal's top k)"],
                axis=alt.Axis(format=".0%", titleLimit=width)),
        y=alt.Y("drop:Q", title=["drop in p(target):", "ticket − reduced ticket"], axis=alt.Axis(titleLimit=200)),
        color=alt.Color("signal:N", scale=signal_scale(sorted(set(long["signal"]))),
                        legend=alt.Legend(title="signal", orient="bottom", columns=3, labelLimit=130)),
        tooltip=[alt.Tooltip("signal:N"), alt.Tooltip("measure:N"), alt.Tooltip("fraction:Q", format=".0%"),
                 *([alt.Tooltip("k:Q")] if "k" in long.columns else []),
                 alt.Tooltip("drop:Q", format=".3f")],
    ).properties(width=width, height=200).facet(
        column=alt.Column("measure:N", title=None, header=alt.Header(labelLimit=width)), spacing=12)


def mean_eraser_chart(table: pd.DataFrame, value_columns: Sequence[str]) -> alt.Chart:
    """Mean per signal of split-wide scores (e.g. AOPC comprehensiveness / sufficiency) as grouped bars."""
    long = table.melt(id_vars=["signal"], value_vars=list(value_columns), var_name="measure", value_name="value")
    order = list(dict.fromkeys(table["signal"]))
    # One measure above the other, each titled above its bars: side by side in half a column the two panels were
    # 50 px wide and their titles ran together ("comprehensivenesufficiency").
    return alt.Chart(long).mark_bar().encode(
        y=alt.Y("signal:N", title=None, sort=order, axis=alt.Axis(labelOverlap=False, labelLimit=TAU_LABELS_PX - 10)),
        x=alt.X("value:Q", title="mean over the split", axis=alt.Axis(tickCount=4)),
        color=alt.Color("signal:N", scale=signal_scale(order), legend=None),
        tooltip=[alt.Tooltip("signal:N"), alt.Tooltip("measure:N"), alt.Tooltip("value:Q", format=".3f")],
    ).properties(width=HALF_COLUMN_PX - TAU_LABELS_PX - 10, height=alt.Step(16)).facet(
        row=alt.Row("measure:N", title=None, header=alt.Header(labelOrient="top", labelAnchor="start", labelAngle=0,
                                                               labelFontSize=12)), spacing=14)


ACCURACY_TITLE = "accuracy with the head − masked"


def head_importance_chart(importance: pd.DataFrame, unit: str = "logit_diff") -> alt.VConcatChart:
    """Block × head grid of what masking each head costs, in the one sign convention (with the head − masked, positive
    where the head helps): the accuracy it adds, and its mean support for the true team in `unit`. Red positive,
    blue negative, as every support on the dashboard; the labels carry the digits their values need."""
    from ticketnet.interpret.interventions.units import support_column, support_title

    support = support_column(unit)
    df = importance.copy()
    df["block"] = df["block"].astype(int)
    df["head"] = df["head"].astype(int)

    def grid(column: str, title: str, scale: alt.Scale) -> alt.LayerChart:
        base = alt.Chart().encode(x=alt.X("head:O", title="head", axis=alt.Axis(labelAngle=0)),
                                    y=alt.Y("block:O", title="block"))
        rect = base.mark_rect().encode(
            color=alt.Color(f"{column}:Q", scale=scale, legend=None),
            tooltip=[alt.Tooltip("block:O"), alt.Tooltip("head:O"), alt.Tooltip("accuracy:Q", format=".3f"),
                     alt.Tooltip("accuracy_drop:Q", title=ACCURACY_TITLE,
                                 format=value_format(df["accuracy_drop"], 3, trim=False)),
                     alt.Tooltip(f"{support}:Q", title=support_title(unit, "the true team"),
                                 format=value_format(df[support], 3, trim=False))])
        top = scale_peak(scale)
        text = base.mark_text(fontSize=12).encode(text=alt.Text(f"{column}:Q", format=value_format(df[column])),
                                                  color=cell_text_color(f"abs(datum[{column!r}]) > {0.6 * top!r}"))
        return alt.layer(rect, text, data=df).properties(width=alt.Step(44), height=alt.Step(34),
                                                title=alt.Title(title, anchor="start", fontSize=12))

    # One above the other: side by side they need about 470 px, more than half a laptop's main column.
    return alt.vconcat(grid("accuracy_drop", ACCURACY_TITLE,
                            support_scale(df["accuracy_drop"], floor=ACCURACY_NEGLIGIBLE)),
                       grid(support, support_title(unit, "the true team"), support_scale(df[support], unit)),
                       spacing=16).resolve_scale(color="independent")     # shared, accuracy took the support's domain


def token_highlight(tokens: Sequence[str], values, *, title: str, diverging: bool = False,
                    width: int = COLUMN_PX - 90) -> alt.LayerChart:      # the colour legend beside
    """The ticket's tokens laid out as lines of equal cells, each coloured by `values` (one per token).

    A chart, not HTML: a ticket's text can never act as markup. Diverging colours (red positive, blue
    negative, centred on 0) suit signed removal effects; sequential purples suit attention. Cells have one
    width (the longest token's, within limits) so the layout does not depend on the browser's font; a token
    longer than its cell is cut with an ellipsis. Rows and columns are bands (`alt.Step`), so Streamlit
    sizes the chart from its content.
    """
    v = _np(values)
    if len(v) != len(tokens):
        raise ValueError(f"{len(tokens)} tokens but {len(v)} values")
    longest = max((len(t) for t in tokens), default=1)
    cell = float(min(110, max(34, 8 * longest + 14)))
    per_line = max(1, int(width // cell))
    df = pd.DataFrame({
        "position": range(len(tokens)), "token": list(tokens),
        "label": token_labels(tokens),
        "slot": [i % per_line for i in range(len(tokens))],
        "line": [i // per_line for i in range(len(tokens))],
        "value": v,
    })
    m = float(np.nanmax(np.abs(v))) if len(v) else 0.0
    m = m if np.isfinite(m) and m > 0 else 1.0
    if diverging:
        scale = alt.Scale(scheme=EFFECT_SCHEME, domain=[m, -m])
        dark = f"abs(datum.value) > {0.6 * m!r}"
    else:
        scale = alt.Scale(scheme=SIGNAL_SCHEME, domain=[0, m])
        dark = f"datum.value > {0.6 * m!r}"
    x = alt.X("slot:O", axis=None, scale=alt.Scale(paddingInner=0.06))
    y = alt.Y("line:O", axis=None, scale=alt.Scale(paddingInner=0.12))
    tooltip = [alt.Tooltip("label:N", title="token"),
               alt.Tooltip("value:Q", title="value", format=value_format(v, 3, trim=False))]
    box = alt.Chart().mark_rect(cornerRadius=3).encode(
        x=x, y=y,
        color=alt.Color("value:Q", scale=scale, legend=alt.Legend(title=None, orient="right", format=value_format(v),
                                                                  gradientLength=50)),
        tooltip=tooltip,
    )
    text = alt.Chart().mark_text(fontSize=12, limit=cell - 6).encode(
        x=x, y=y, text=alt.Text("token:N"),
        color=cell_text_color(dark),
        tooltip=tooltip,
    )
    # Sizes and title in the constructor: `.properties` would copy the whole layer again (a tenth of the chart's cost).
    return alt.LayerChart(layer=[box, text], data=df, width=alt.Step(cell), height=alt.Step(26),
                          title=alt.Title(title, anchor="start", fontSize=12))
