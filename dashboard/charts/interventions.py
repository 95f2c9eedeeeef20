"""Chart builders for the route interventions (edge knockout, head ablation, patching, phrases): tables in, `alt.Chart` out."""

# Same conventions as dashboard/charts/attention.py: tokens labelled "position:token" in reading order, rows = reading token
# (query), columns = token read (key); effects on a diverging scale centred on 0 (red = the intervention lowers
# the target), with the unit named in every title and tooltip; ticket text is only ever data.

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from dashboard.charts.attention import COLUMN_PX, _cell_step, _np, cell_text_color, pattern_frame, token_labels
from ticketnet.interpret.interventions.units import format_effect


def _share_text(x: float) -> str:
    """A share recovered as grid text: two decimals, more for a small non-zero share (never "0.00"), "n/a" for nan."""
    from dashboard.narrative import fmt

    return "n/a" if not np.isfinite(x) else fmt(x)

EFFECT_SCHEME = "redblue"
_BOTTOM_LEGEND = alt.Legend(orient="bottom", gradientLength=120)     # under the chart: the width stays the grid's
UNIT_TITLES = {"logit_diff": "change in logit difference", "prob": "change in probability"}


def _unit_title(unit: str) -> str:
    if unit not in UNIT_TITLES:
        raise ValueError(f"unit must be one of {tuple(UNIT_TITLES)}, got {unit!r}")
    return UNIT_TITLES[unit]


def _diverging(values: np.ndarray) -> alt.Scale:
    peak = float(np.nanmax(np.abs(values))) if values.size and np.isfinite(values).any() else 1.0
    peak = max(peak, 1e-12)
    return alt.Scale(scheme=EFFECT_SCHEME, domain=[-peak, peak])


def knockout_frame(weights, change, tokens: Sequence[str]) -> pd.DataFrame:
    """One row per key of a query row: position, key label, weight, change (knocked-out − ticket)."""
    w, c = _np(weights), _np(change)
    if w.shape != (len(tokens),) or c.shape != w.shape:
        raise ValueError(f"need weights and change of shape ({len(tokens)},), got {w.shape} and {c.shape}")
    return pd.DataFrame({"position": range(len(tokens)), "key": token_labels(tokens), "weight": w, "change": c})


def knockout_row_chart(frame: pd.DataFrame, unit: str = "logit_diff") -> alt.HConcatChart:
    """Weight and knockout effect per key of one query row, side by side on the same token axis."""
    title = _unit_title(unit)
    labels = list(frame["key"])
    step = _cell_step(len(labels), room=420, hi=14)
    font, overlap = _label_style(step)
    y = alt.Y("key:N", sort=labels, title="token read (key)",
              axis=alt.Axis(labelFontSize=font, labelOverlap=overlap, labelLimit=90))
    weight = alt.Chart(frame).mark_bar(color="#4c78a8").encode(
        y=y, x=alt.X("weight:Q", title="attention weight"),
        tooltip=["key:N", alt.Tooltip("weight:Q", format=".4f"), alt.Tooltip("change:Q", title=title, format=".2e")])
    effect = alt.Chart(frame).mark_bar().encode(
        y=alt.Y("key:N", sort=labels, title=None, axis=alt.Axis(labels=False, ticks=False)),
        x=alt.X("change:Q", title=f"{title} when the edge is cut"),
        color=alt.Color("change:Q", scale=_diverging(frame["change"].to_numpy()), legend=None),
        tooltip=["key:N", alt.Tooltip("weight:Q", format=".4f"), alt.Tooltip("change:Q", title=title, format=".2e")])
    # 140 + 180 px of bars beside the token labels and axis titles: the pair fits a 520 px column (COLUMN_PX).
    return alt.hconcat(weight.properties(width=140, height=alt.Step(step)),
                       effect.properties(width=180, height=alt.Step(step)), spacing=8)


def _label_style(step: float) -> tuple[int, bool | str]:
    """Token label font size and overlap rule for cells of `step` px: every token labelled from 9 px up."""
    return (10 if step >= 11 else 9), (False if step >= 9 else "parity")


def map_step(n: int) -> float:
    """Pixels per cell of an effect map and of the attention heatmap drawn beside it, so both share their axes."""
    return _cell_step(n)


def effect_map_chart(change, tokens: Sequence[str], unit: str = "logit_diff", title: str | None = None,
                     step: float | None = None) -> alt.Chart:
    """A head's effect map (n, n) on the axes of its attention heatmap: cell (query, key) = effect of cutting it."""
    c = _np(change)
    n = len(tokens)
    # The same long (query, key) table as the attention heatmap's, so the two share their cells and labels.
    df = pattern_frame(c, tokens)[["query", "key", "weight"]].rename(columns={"weight": "change"})
    labels = token_labels(tokens)
    step = step or _cell_step(n)
    font, overlap = _label_style(step)                      # as charts.head_heatmap labels the same cells
    return alt.Chart(df).mark_rect().encode(
        x=alt.X("key:O", sort=labels, title="token read (key)",
                axis=alt.Axis(labelAngle=-60, labelLimit=90, labelFontSize=font, labelOverlap=overlap)),
        y=alt.Y("query:O", sort=labels, title="reading token (query)",
                axis=alt.Axis(labelLimit=90, labelFontSize=font, labelOverlap=overlap)),
        color=alt.Color("change:Q", scale=_diverging(c), title=_unit_title(unit),
                        legend=alt.Legend(orient="bottom", gradientLength=120, format=".2~g")),
        tooltip=["query:N", "key:N", alt.Tooltip("change:Q", title=_unit_title(unit), format=".2e")],
    ).properties(width=alt.Step(step), height=alt.Step(step),
                 title=alt.Title(title or f"effect of cutting each edge ({_unit_title(unit)})", anchor="start"))


def ablation_grid(table: pd.DataFrame, unit: str = "logit_diff") -> alt.LayerChart:
    """Block × head grid of the change when each head is switched off on this ticket (head_ablation's table)."""
    column = f"change_{unit}"
    _unit_title(unit)                                        # refuses an unknown unit before the column check
    if column not in table.columns:
        raise ValueError(f"the table needs a {column!r} column (from head_ablation)")
    df = table.assign(block_label=table["block"].map(lambda b: f"block {b}"),
                      head_label=table["head"].map(lambda h: f"head {h}"),
                      text=table[column].map(format_effect))
    base = alt.Chart(df).encode(x=alt.X("head_label:O", title=None), y=alt.Y("block_label:O", title=None))
    cells = base.mark_rect().encode(
        color=alt.Color(f"{column}:Q", scale=_diverging(df[column].to_numpy()), title=_unit_title(unit),
                        legend=_BOTTOM_LEGEND),
        tooltip=["block_label:N", "head_label:N", "mode:N", alt.Tooltip(f"{column}:Q", format=".3e")])
    peak = float(np.nanmax(np.abs(df[column].to_numpy()))) if len(df) else 0.0
    text = base.mark_text(fontSize=11).encode(
        text="text:N", color=cell_text_color(f"abs(datum['{column}']) > {0.6 * peak!r}"))   # white on dark cells
    return alt.layer(cells, text).properties(width=alt.Step(70), height=alt.Step(36))


def patching_heads_grid(heads: pd.DataFrame, direction: str, unit: str = "logit_diff") -> alt.LayerChart:
    """Block × head grid of the share of the prediction change each head's patch recovers, one direction."""
    column = f"share_{unit}"
    _unit_title(unit)
    df = heads[heads["direction"] == direction].copy()
    if df.empty:
        raise ValueError(f"no patches in direction {direction!r}")
    df["block_label"] = df["block"].map(lambda b: f"block {b}")
    df["head_label"] = df["head"].map(lambda h: f"head {h}")
    df["text"] = df[column].map(_share_text)
    base = alt.Chart(df).encode(x=alt.X("head_label:O", title=None), y=alt.Y("block_label:O", title=None))
    cells = base.mark_rect().encode(
        color=alt.Color(f"{column}:Q", scale=alt.Scale(scheme=EFFECT_SCHEME, domain=[-1, 1]), title="share recovered",
                        legend=_BOTTOM_LEGEND),
        tooltip=["block_label:N", "head_label:N", alt.Tooltip(f"{column}:Q", title="share recovered", format=".3f")])
    text = base.mark_text(fontSize=11).encode(text="text:N",
                                             color=cell_text_color(f"abs(datum['{column}']) > 0.6"))
    return alt.layer(cells, text).properties(width=alt.Step(70), height=alt.Step(36),
                                             title=alt.Title(f"heads, {direction}", anchor="start"))


def patching_resid_heatmap(resid: pd.DataFrame, direction: str, unit: str = "logit_diff") -> alt.Chart:
    """Layer × position heatmap of the share recovered by patching the residual stream at one position;
    unaligned positions are grey and say so in the tooltip."""
    column = f"share_{unit}"
    _unit_title(unit)
    df = resid[resid["direction"] == direction].copy()
    if df.empty:
        raise ValueError(f"no patches in direction {direction!r}")
    df["label"] = [f"{p}:{t}" for p, t in zip(df["position"], df["token"], strict=True)]
    df["status"] = np.where(df["aligned"], "aligned", "unaligned: no position in the other run")
    labels = list(dict.fromkeys(df["label"]))
    layers = list(dict.fromkeys(df["layer_name"]))
    return alt.Chart(df).mark_rect().encode(
        x=alt.X("label:O", sort=labels, title="position (run patched)", axis=alt.Axis(labelAngle=-60, labelLimit=90)),
        y=alt.Y("layer_name:O", sort=layers, title=None),
        color=alt.condition("datum.aligned", alt.Color(f"{column}:Q", scale=alt.Scale(
            scheme=EFFECT_SCHEME, domain=[-1, 1]), title="share recovered", legend=_BOTTOM_LEGEND), alt.value("#dddddd")),
        tooltip=["layer_name:N", "label:N", "status:N", alt.Tooltip("source_token:N", title="taken from"),
                 alt.Tooltip(f"{column}:Q", title="share recovered", format=".3f")],
    ).properties(width=alt.Step(_cell_step(len(labels), room=COLUMN_PX - 120, lo=2.0, hi=18)), height=alt.Step(24),
                 title=alt.Title(f"residual stream, {direction}", anchor="start"))


def phrase_frame(phrases: Sequence[str], deletion_change, shapley) -> pd.DataFrame:
    """One row per phrase: index, phrase text, change when deleted, Shapley value."""
    d, s = _np(deletion_change), _np(shapley)
    if d.shape != (len(phrases),) or s.shape != d.shape:
        raise ValueError(f"need one deletion change and one Shapley value per phrase ({len(phrases)})")
    return pd.DataFrame({"index": range(len(phrases)), "phrase": list(phrases), "deleted": d, "shapley": s})


def phrase_chart(frame: pd.DataFrame, unit: str = "logit_diff") -> alt.Chart:
    """Per phrase: the change when it alone is deleted and its Shapley value, as grouped bars."""
    title = _unit_title(unit)
    long = frame.melt(id_vars=["index", "phrase"], value_vars=["deleted", "shapley"], var_name="measure")
    long["label"] = [f"{i}: {p[:60]}" for i, p in zip(long["index"], long["phrase"], strict=True)]
    labels = list(dict.fromkeys(long["label"]))
    return alt.Chart(long).mark_bar().encode(
        y=alt.Y("label:N", sort=labels, title=None, axis=alt.Axis(labelLimit=170)),
        yOffset="measure:N",
        x=alt.X("value:Q", title=f"{title} (deleted) / Shapley value"),
        color=alt.Color("measure:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["phrase:N", "measure:N", alt.Tooltip("value:Q", title=title, format=".3e")],
    ).properties(width=240, height=alt.Step(14))       # labels clipped at 170 px; pages draw it width="stretch"
