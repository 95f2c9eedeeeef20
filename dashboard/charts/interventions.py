"""Chart builders for the route interventions (edge knockout, head ablation, patching, phrases): tables in, `alt.Chart` out."""

# Same conventions as dashboard/charts/attention.py: tokens labelled "position:token" in reading order, rows = reading token
# (query), columns = token read (key); support for the target (score with the part − without it) on a diverging
# scale centred on 0 (red = the part helps the target), titled by `support_title` with its team and unit in every
# title and tooltip; ticket text is only ever data.

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from dashboard.charts.theme import COLUMN_PX, THEME_NEUTRAL_TEXT, _cell_step, _np, cell_text_color, scale_peak, support_scale, token_labels, value_format
from dashboard.charts.attention import pattern_frame
from ticketnet.interpret.interventions.units import format_effect, share_title, support_column, support_title


def _share_text(x: float) -> str:
    """A share recovered as grid text: two decimals, more for a small non-zero share (never "0.00"), "n/a" for nan."""
    from dashboard.text import fmt

    return "n/a" if not np.isfinite(x) else fmt(x)


EFFECT_SCHEME = "redblue"
UNALIGNED_COLOR = "#9e9e9e"          # a mid grey: visible on white and on the dark theme's background alike
UNRELIABLE_NOTE = "the change is negligible: shares of it are unreliable"


def _bottom_legend(fmt: str | None = None) -> alt.Legend:
    """A legend under the chart (the width stays the grid's), its labels with the digits the domain needs."""
    return alt.Legend(orient="bottom", gradientLength=120, **({"format": fmt} if fmt else {}))



def knockout_frame(weights, support, tokens: Sequence[str]) -> pd.DataFrame:
    """One row per key of a query row: position, key label, weight, support (ticket − edge cut)."""
    w, c = _np(weights), _np(support)
    if w.shape != (len(tokens),) or c.shape != w.shape:
        raise ValueError(f"need weights and support of shape ({len(tokens)},), got {w.shape} and {c.shape}")
    return pd.DataFrame({"position": range(len(tokens)), "key": token_labels(tokens), "weight": w, "support": c})


def knockout_row_chart(frame: pd.DataFrame, unit: str = "logit_diff", team: str | None = None) -> alt.HConcatChart:
    """Weight and support per key of one query row (each edge's, from cutting it), side by side on one token axis."""
    title = support_title(unit, team)
    labels = list(frame["key"])
    step = _cell_step(len(labels), room=420, hi=14)
    scale = support_scale(frame["support"], unit)
    tip = value_format(frame["support"], 3, trim=False)
    font, overlap = _label_style(step)
    y = alt.Y("key:N", sort=labels, title="token read (key)",
              axis=alt.Axis(labelFontSize=font, labelOverlap=overlap, labelLimit=90))
    weight = alt.Chart().mark_bar(color="#4c78a8").encode(
        y=y, x=alt.X("weight:Q", title="attention weight"),
        tooltip=[alt.Tooltip("key:N"), alt.Tooltip("weight:Q", format=".4f"),
                 alt.Tooltip("support:Q", title=title, format=tip)])
    # The support axis spans at least the negligible effect either way, as the colours do: a row of 1e-4 effects
    # draws short pale bars, not bars stretched to the panel's edge in saturated colour.
    effect = alt.Chart().mark_bar().encode(
        y=alt.Y("key:N", sort=labels, title=None, axis=alt.Axis(labels=False, ticks=False)),
        x=alt.X("support:Q", title=title, scale=alt.Scale(domain=list(scale.domain)),
                axis=alt.Axis(format=value_format(scale.domain), tickCount=3)),
        color=alt.Color("support:Q", scale=scale, legend=None),
        tooltip=[alt.Tooltip("key:N"), alt.Tooltip("weight:Q", format=".4f"),
                 alt.Tooltip("support:Q", title=title, format=tip)])
    # 140 + 180 px of bars beside the token labels and axis titles: the pair fits a 520 px column (COLUMN_PX).
    return alt.hconcat(weight.properties(width=140, height=alt.Step(step)),
                       effect.properties(width=180, height=alt.Step(step)), data=frame, spacing=8)


def _label_style(step: float) -> tuple[int, bool | str]:
    """Token label font size and overlap rule for cells of `step` px: every token labelled from 9 px up."""
    return (10 if step >= 11 else 9), (False if step >= 9 else "parity")


def map_step(n: int) -> float:
    """Pixels per cell of an effect map and of the attention heatmap drawn beside it, so both share their axes."""
    return _cell_step(n)


def effect_map_chart(support, tokens: Sequence[str], unit: str = "logit_diff", title: str | None = None,
                     step: float | None = None, team: str | None = None) -> alt.Chart:
    """A head's effect map (n, n) on the axes of its attention heatmap: cell (query, key) = the edge's support
    (ticket − that edge cut)."""
    c = _np(support)
    n = len(tokens)
    legend = support_title(unit, team)
    # The same long (query, key) table as the attention heatmap's, so the two share their cells and labels.
    df = pattern_frame(c, tokens)[["query", "key", "weight"]].rename(columns={"weight": "support"})
    labels = token_labels(tokens)
    step = step or _cell_step(n)
    font, overlap = _label_style(step)                      # as charts.head_heatmap labels the same cells
    scale = support_scale(c, unit)
    return alt.Chart(df).mark_rect().encode(
        x=alt.X("key:O", sort=labels, title="token read (key)",
                axis=alt.Axis(labelAngle=-60, labelLimit=90, labelFontSize=font, labelOverlap=overlap)),
        y=alt.Y("query:O", sort=labels, title="reading token (query)",
                axis=alt.Axis(labelLimit=90, labelFontSize=font, labelOverlap=overlap)),
        color=alt.Color("support:Q", scale=scale, title=legend, legend=_bottom_legend(value_format(scale.domain))),
        tooltip=[alt.Tooltip("query:N"), alt.Tooltip("key:N"),
                 alt.Tooltip("support:Q", title=legend, format=value_format(c, 3, trim=False))],
    ).properties(width=alt.Step(step), height=alt.Step(step),
                 title=alt.Title(title or f"each edge's {legend}, from cutting it", anchor="start"))


def ablation_grid(table: pd.DataFrame, unit: str = "logit_diff", team: str | None = None) -> alt.LayerChart:
    """Block × head grid of each head's support on this ticket, from switching it off (head_ablation's table)."""
    column = support_column(unit)                            # refuses an unknown unit before the column check
    if column not in table.columns:
        raise ValueError(f"the table needs a {column!r} column (from head_ablation)")
    df = table.assign(block_label=table["block"].map(lambda b: f"block {b}"),
                      head_label=table["head"].map(lambda h: f"head {h}"),
                      text=table[column].map(format_effect))
    base = alt.Chart().encode(x=alt.X("head_label:O", title=None, axis=alt.Axis(labelAngle=0)),
                                y=alt.Y("block_label:O", title=None))
    scale = support_scale(df[column], unit)
    cells = base.mark_rect().encode(
        color=alt.Color(f"{column}:Q", scale=scale, title=support_title(unit, team),
                        legend=_bottom_legend(value_format(scale.domain))),
        tooltip=[alt.Tooltip("block_label:N"), alt.Tooltip("head_label:N"), alt.Tooltip("mode:N"),
                 alt.Tooltip(f"{column}:Q", title=support_title(unit, team),
                             format=value_format(df[column], 3, trim=False))])
    peak = scale_peak(scale)
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("text:N"),
        color=cell_text_color(f"abs(datum['{column}']) > {0.6 * peak!r}"))   # white on dark cells
    return alt.layer(cells, text, data=df).properties(width=alt.Step(70), height=alt.Step(36))


def _share_scale() -> alt.Scale:
    """Shares recovered on [−1, 1], red where the patch moves the score the way the edit did, as support is red."""
    return alt.Scale(scheme=EFFECT_SCHEME, domain=[-1, 1], reverse=True)


def _patch_title(text: str, unreliable: bool) -> alt.Title:
    if not unreliable:
        return alt.Title(text, anchor="start")
    return alt.Title(text, anchor="start", subtitle=UNRELIABLE_NOTE, subtitleColor=THEME_NEUTRAL_TEXT)


def patching_heads_grid(heads: pd.DataFrame, direction: str, unit: str = "logit_diff",
                        unreliable: bool = False) -> alt.LayerChart:
    """Block × head grid of the share of the prediction change each head's patch recovers, one direction;
    `unreliable` (the change is negligible, `dashboard.data.interventions.negligible_change`) says so under the title."""
    column = f"share_{unit}"
    share = share_title(unit)                                # refuses an unknown unit
    df = heads[heads["direction"] == direction].copy()
    if df.empty:
        raise ValueError(f"no patches in direction {direction!r}")
    df["block_label"] = df["block"].map(lambda b: f"block {b}")
    df["head_label"] = df["head"].map(lambda h: f"head {h}")
    df["text"] = df[column].map(_share_text)
    base = alt.Chart().encode(x=alt.X("head_label:O", title=None, axis=alt.Axis(labelAngle=0)),
                                y=alt.Y("block_label:O", title=None))
    cells = base.mark_rect().encode(
        color=alt.Color(f"{column}:Q", scale=_share_scale(), title=share, legend=_bottom_legend()),
        tooltip=[alt.Tooltip("block_label:N"), alt.Tooltip("head_label:N"),
                 alt.Tooltip(f"{column}:Q", title=share, format=".3f"),
                 alt.Tooltip(f"support_{unit}:Q", title=support_title(unit), format=".3e")])
    text = base.mark_text(fontSize=11).encode(text=alt.Text("text:N"),
                                             color=cell_text_color(f"abs(datum['{column}']) > 0.6"))
    return alt.layer(cells, text, data=df).properties(width=alt.Step(70), height=alt.Step(36),
                                             title=_patch_title(f"heads, {direction}", unreliable))


def patching_resid_heatmap(resid: pd.DataFrame, direction: str, unit: str = "logit_diff",
                           unreliable: bool = False) -> alt.LayerChart:
    """Layer × position heatmap of the share recovered by patching the residual stream at one position;
    unaligned positions (no share: nothing to patch from) are drawn grey, in a layer of their own, and say so in
    the tooltip; `unreliable` as in `patching_heads_grid`."""
    column = f"share_{unit}"
    share = share_title(unit)                                # refuses an unknown unit
    df = resid[resid["direction"] == direction].copy()
    if df.empty:
        raise ValueError(f"no patches in direction {direction!r}")
    df["label"] = [f"{p}:{t}" for p, t in zip(df["position"], df["token"], strict=True)]
    df["status"] = np.where(df["aligned"], "aligned", "unaligned: no position in the other run")
    labels = list(dict.fromkeys(df["label"]))
    layers = list(dict.fromkeys(df["layer_name"]))
    x = alt.X("label:O", sort=labels, title="position (run patched)", axis=alt.Axis(labelAngle=-60, labelLimit=90))
    y = alt.Y("layer_name:O", sort=layers, title=None)
    tooltip = [alt.Tooltip("layer_name:N"), alt.Tooltip("label:N"), alt.Tooltip("status:N"),
               alt.Tooltip("source_token:N", title="taken from"),
               alt.Tooltip(f"{column}:Q", title=share, format=".3f"),
               alt.Tooltip(f"support_{unit}:Q", title=support_title(unit),
                           format=value_format(df.get(f"support_{unit}", []), 3, trim=False))]
    # Two layers: Vega-Lite drops a rect whose colour field is not a number, so a conditional grey on the one layer
    # never drew the unaligned cells (their share is undefined).
    aligned = alt.Chart(df[df["aligned"]]).mark_rect().encode(
        x=x, y=y, color=alt.Color(f"{column}:Q", scale=_share_scale(), title=share, legend=_bottom_legend()),
        tooltip=tooltip)
    unaligned = alt.Chart(df[~df["aligned"]].drop(columns=[column])).mark_rect(color=UNALIGNED_COLOR).encode(
        x=x, y=y, tooltip=[t for t in tooltip if not (isinstance(t, alt.Tooltip) and t.field == column)])
    return alt.layer(aligned, unaligned).properties(
        width=alt.Step(_cell_step(len(labels), room=COLUMN_PX - 120, lo=2.0, hi=18)), height=alt.Step(24),
        title=_patch_title(f"residual stream, {direction}", unreliable))


# Both measures are support, score with the phrase − without it: deleted alone (the ticket − the ticket without the
# phrase) and the Shapley value (that difference averaged over the coalitions of the other phrases).
PHRASE_MEASURES = {"deleted": "deleted alone: with − without", "shapley": "Shapley value: mean with − without"}


def phrase_frame(phrases: Sequence[str], deletion_support, shapley) -> pd.DataFrame:
    """One row per phrase: index, phrase text, its support from deleting it alone (ticket − deleted), Shapley value."""
    d, s = _np(deletion_support), _np(shapley)
    if d.shape != (len(phrases),) or s.shape != d.shape:
        raise ValueError(f"need one deletion support and one Shapley value per phrase ({len(phrases)})")
    return pd.DataFrame({"index": range(len(phrases)), "phrase": list(phrases), "deleted": d, "shapley": s})


def phrase_chart(frame: pd.DataFrame, unit: str = "logit_diff", team: str | None = None) -> alt.Chart:
    """Per phrase: its support when it alone is deleted and its Shapley value, as grouped bars on one axis (both
    are score with the phrase − score without it)."""
    title = support_title(unit, team)
    long = frame.melt(id_vars=["index", "phrase"], value_vars=list(PHRASE_MEASURES), var_name="measure")
    long["measure"] = long["measure"].map(PHRASE_MEASURES)
    long["label"] = [f"{i}: {p[:60]}" for i, p in zip(long["index"], long["phrase"], strict=True)]
    labels = list(dict.fromkeys(long["label"]))
    return alt.Chart(long).mark_bar().encode(
        y=alt.Y("label:N", sort=labels, title=None, axis=alt.Axis(labelLimit=170)),
        yOffset=alt.YOffset("measure:N"),
        x=alt.X("value:Q", title=title, axis=alt.Axis(format=value_format(long["value"]))),
        color=alt.Color("measure:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=0)),
        tooltip=[alt.Tooltip("phrase:N"), alt.Tooltip("measure:N"),
                 alt.Tooltip("value:Q", title=title, format=value_format(long["value"], 3, trim=False))],
    ).properties(width=240, height=alt.Step(14))       # labels clipped at 170 px; pages draw it width="stretch"
