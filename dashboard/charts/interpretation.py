"""Interpretation charts: removal beside the signals, τ distributions, ERASER, head importance, highlighted text."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from ticketnet.interpret import signals as sig
from dashboard.charts.theme import _np, ACCURACY_NEGLIGIBLE, cell_text_color, COLUMN_PX, EFFECT_SCHEME, HALF_COLUMN_PX, RANDOM_SIGNAL, scale_peak, signal_scale, SIGNAL_SCHEME, support_scale, token_labels, value_format, when, Y_LABELS_PX


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


def eraser_chart(eraser: pd.DataFrame, signals: Sequence[str] | None = None, units: str = "tokens") -> alt.FacetChart:
    """ERASER curves: comprehensiveness (drop when the top-k tokens of a signal are removed; higher = the signal
    found what matters) and sufficiency (drop when only they are kept; lower = better) against the fraction kept.
    `units`: what k counts, "tokens" or (an encoder's) "words"."""
    df = eraser if signals is None else eraser[eraser["signal"].isin(signals)]
    long = _melt(df, [c for c in ("signal", "fraction", "k") if c in df.columns], list(sig.ERASER_METRICS),
                 "measure", "drop")
    width = (COLUMN_PX - 150) / 2
    # Axis titles on two lines within their panel: on one line each ran into the next panel's ("…signfraction…").
    return alt.Chart(long).mark_line(point=True).encode(
        x=alt.X("fraction:Q", title=[f"fraction of {units}", "(the signal's top k)"],
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
    # Sizes and title in the constructor: `.properties` would copy the whole layer again (docs/performance.md,
    # "Settings measured in the code").
    return alt.LayerChart(layer=[box, text], data=df, width=alt.Step(cell), height=alt.Step(26),
                          title=alt.Title(title, anchor="start", fontSize=12))
