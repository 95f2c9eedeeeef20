"""Chart builders for the pages under "The formula": DataFrames in, `alt.Chart` out (no streamlit, no model)."""

# Each `*_frame` function turns results from `ticketnet.lesson.explorers` / `ticketnet.lesson.cost` into a tidy table and each
# chart function draws one such table; the tests check the Vega-Lite specs. Values that JSON cannot carry
# (−∞ in a mask) travel as text labels, never as numbers.

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from dashboard.charts.theme import THEME_NEUTRAL_TEXT, cell_text_color

FRAME_COLOR = "#d62728"
MATRIX_SCHEME = "blues"
SERIES_COLORS = {"unscaled": "#e45756", "scaled": "#4c78a8"}

# Layered line charts with a legend below: the width follows the page column, the height stays the plot's own.
# Without it Streamlit sizes a layered chart with autosize "fit": title, axes and a three-row legend are taken
# out of the fixed height and the plot itself collapses to a flat line with its y labels stacked.
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "−∞" if x < 0 else "∞"
    if math.isnan(x):
        return "NaN"
    s = f"{x:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s.replace("-", "−")


# -- two vectors ---------------------------------------------------------------------------------------------
def two_vectors_frame(v1: Sequence[float], v2: Sequence[float], output: Sequence[float],
                      weights: Sequence[float]) -> pd.DataFrame:
    """Points of the plane: the two values and the output O = w₁v₁ + w₂v₂ (which lies on their segment)."""
    return pd.DataFrame({
        "point": ["v₁", "v₂", "O"],
        "x": [float(v1[0]), float(v2[0]), float(output[0])],
        "y": [float(v1[1]), float(v2[1]), float(output[1])],
        "kind": ["value", "value", "output"],
        "weight": [float(weights[0]), float(weights[1]), None],
    })


def two_vectors_chart(df: pd.DataFrame) -> alt.LayerChart:
    """The segment from v₁ to v₂, the two values, and O moving along the segment as the weights change."""
    x = alt.X("x:Q", scale=alt.Scale(domain=[-0.5, 4.5]), title="first component")
    y = alt.Y("y:Q", scale=alt.Scale(domain=[-0.5, 4.5]), title="second component")
    values = df[df["kind"] == "value"]
    segment = alt.Chart(values).mark_line(color="#999999", strokeDash=[4, 3]).encode(x=x, y=y)
    points = alt.Chart(df).mark_point(filled=True, size=140).encode(
        x=x, y=y,
        color=alt.Color("kind:N", scale=alt.Scale(domain=["value", "output"], range=["#4c78a8", FRAME_COLOR]),
                        legend=None),
        shape=alt.Shape("kind:N", scale=alt.Scale(domain=["value", "output"], range=["circle", "diamond"]),
                        legend=None),
        tooltip=[alt.Tooltip("point:N"), alt.Tooltip("x:Q", format=".3f"), alt.Tooltip("y:Q", format=".3f")],
    )
    labels = alt.Chart(df).mark_text(align="left", dx=9, dy=-9, fontSize=13, color=THEME_NEUTRAL_TEXT).encode(
        x=x, y=y, text=alt.Text("point:N"))
    return alt.layer(segment, points, labels).properties(width=320, height=320,
                                                         title="O lies on the segment between v₁ and v₂")


# -- matrices ------------------------------------------------------------------------------------------------
def matrix_frame(values, rows: Sequence[str], cols: Sequence[str]) -> pd.DataFrame:
    """Long table of a small matrix: row, col, value (None where not finite), label (text, '−∞' kept)."""
    a = np.asarray(values.tolist() if hasattr(values, "tolist") else values, dtype=np.float64)
    if a.shape != (len(rows), len(cols)):
        raise ValueError(f"a {a.shape} matrix needs {a.shape[0]} row and {a.shape[1]} column labels")
    r, c = np.meshgrid(np.arange(a.shape[0]), np.arange(a.shape[1]), indexing="ij")
    flat = a.ravel()
    return pd.DataFrame({
        "row_pos": r.ravel(), "col_pos": c.ravel(),
        "row": [rows[i] for i in r.ravel()], "col": [cols[j] for j in c.ravel()],
        "value": [float(v) if math.isfinite(v) else None for v in flat],   # None: JSON has no −∞
        "label": [_fmt(v) for v in flat],
    })


def matrix_chart(df: pd.DataFrame, name: str, marked_row: str | None = None, cell: int = 44) -> alt.LayerChart:
    """A small matrix drawn as labelled cells, titled with its shape; `marked_row` (a row label) is framed."""
    rows = list(dict.fromkeys(df["row"]))
    cols = list(dict.fromkeys(df["col"]))
    x = alt.X("col:O", sort=cols, title=None, axis=alt.Axis(orient="top", labelAngle=0))
    y = alt.Y("row:O", sort=rows, title=None)
    finite = df["value"].dropna()
    lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
    if hi == lo:
        hi = lo + 1.0
    cells = alt.Chart(df).mark_rect(stroke="white").encode(
        x=x, y=y,
        color=alt.ColorValue(**alt.condition(          # typed: a plain condition dict costs Altair a from_dict
            "isValid(datum.value)", alt.Color("value:Q", scale=alt.Scale(scheme=MATRIX_SCHEME, domain=[lo, hi]),
                                              legend=None), alt.value("#f2d4c9"))),
        tooltip=[alt.Tooltip("row:N"), alt.Tooltip("col:N"), alt.Tooltip("label:N", title="value")],
    )
    # On the cells, not the page: dark text on light cells (and on the pale −∞ ones), white on dark ones, in
    # either theme; without a colour the text took the theme's, light grey on pale blue in the dark theme.
    text = alt.Chart(df).mark_text(fontSize=12).encode(
        x=x, y=y, text=alt.Text("label:N"),
        color=cell_text_color(f"isValid(datum.value) && datum.value > {lo + 0.6 * (hi - lo)!r}"))
    layers = [cells, text]
    if marked_row is not None:
        if marked_row not in rows:
            raise ValueError(f"marked_row {marked_row!r} is not a row of {name}")
        frame = alt.Chart(pd.DataFrame({"row": [marked_row]})).mark_rect(
            filled=False, stroke=FRAME_COLOR, strokeWidth=2.5).encode(
            y=alt.Y("row:O", sort=rows), x=alt.XValue(0), x2=alt.X2Value("width"))
        layers.append(frame)
    shape = f"({len(rows)}, {len(cols)})"
    return alt.layer(*layers).properties(width=alt.Step(cell), height=alt.Step(cell * 0.7),
                                         title=alt.Title(f"{name}  {shape}", anchor="start"))


# -- why √d_k ------------------------------------------------------------------------------------------------
def weight_bars_frame(unscaled: Sequence[float], scaled: Sequence[float], d_k: int) -> pd.DataFrame:
    """Two rows of sorted softmax weights (rank 1 = largest) for the same query, without and with 1/√d_k."""
    rows = []
    for kind, ws, title in (("unscaled", unscaled, "softmax(q·k)"), ("scaled", scaled, f"softmax(q·k / √{d_k})")):
        for rank, w in enumerate(ws, start=1):
            rows.append({"kind": kind, "row": title, "rank": rank, "weight": float(w)})
    return pd.DataFrame(rows)


def weight_bars(df: pd.DataFrame) -> alt.FacetChart:
    """One row of bars per kind, keys sorted by weight, y from 0 to 1 so saturation reads at a glance."""
    order = list(dict.fromkeys(df["row"]))
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("rank:O", title="keys, sorted by weight", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("weight:Q", scale=alt.Scale(domain=[0, 1]), title="weight"),
        color=alt.Color("kind:N", scale=alt.Scale(domain=list(SERIES_COLORS), range=list(SERIES_COLORS.values())),
                        legend=None),
        tooltip=[alt.Tooltip("row:N", title="softmax"), alt.Tooltip("rank:O"), alt.Tooltip("weight:Q", format=".3f")],
    ).properties(width=420, height=90).facet(row=alt.Row("row:N", sort=order, title=None))


def variance_frame(table: Sequence) -> pd.DataFrame:
    """Var(q·k) unscaled and scaled for each d_k (rows of ticketnet.lesson.explorers.scaling_table)."""
    rows = []
    for r in table:
        rows.append({"d_k": r.d_k, "series": "Var(q·k), unscaled", "variance": r.var_unscaled})
        rows.append({"d_k": r.d_k, "series": "Var(q·k / √d_k), scaled", "variance": r.var_scaled})
    return pd.DataFrame(rows)


def variance_chart(df: pd.DataFrame, selected: int | None = None) -> alt.LayerChart:
    """Log-log lines of the measured variance against d_k: a straight line at slope 1 unscaled, flat at 1 scaled."""
    x = alt.X("d_k:Q", scale=alt.Scale(type="log", base=2), title="key size d_k (log scale)",
              axis=alt.Axis(values=sorted(df["d_k"].unique().tolist())))
    y = alt.Y("variance:Q", scale=alt.Scale(type="log"), title="measured variance (log scale)")
    lines = alt.Chart(df).mark_line(point=True).encode(
        x=x, y=y, color=alt.Color("series:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=0)),
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("d_k:Q"), alt.Tooltip("variance:Q", format=".3f")],
    )
    layers = [lines]
    if selected is not None:
        layers.append(alt.Chart(pd.DataFrame({"d_k": [selected]})).mark_rule(color="#999999", strokeDash=[3, 3])
                      .encode(x=alt.X("d_k:Q")))
    return alt.layer(*layers).properties(width=420, height=260, title="Var(q·k) grows like d_k; scaled it stays at 1",
                                        autosize=FIT_WIDTH)


# -- masks and saturation ------------------------------------------------------------------------------------
def mask_rows_frame(choices: dict[str, Sequence[float]], tokens: Sequence[str]) -> pd.DataFrame:
    """The 'damaged' row's weights under each way of hiding keys (the 'scores' entry is left out)."""
    rows = []
    for method, ws in choices.items():
        if method == "scores":
            continue
        for tok, w in zip(tokens, ws):
            rows.append({"method": method, "key": tok, "weight": float(w), "row sum": float(sum(ws))})
    return pd.DataFrame(rows)


def mask_rows_chart(df: pd.DataFrame) -> alt.FacetChart:
    keys = list(dict.fromkeys(df["key"]))
    methods = list(dict.fromkeys(df["method"]))
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("key:N", sort=keys, title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("weight:Q", scale=alt.Scale(domain=[0, 1]), title="weight"),
        color=alt.Color("key:N", sort=keys, legend=None),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("key:N"), alt.Tooltip("weight:Q", format=".3f"),
                 alt.Tooltip("row sum:Q", format=".3f")],
    ).properties(width=170, height=160).facet(column=alt.Column("method:N", sort=methods, title=None))


def saturation_frame(factors: Sequence[float], weights: Sequence[Sequence[float]], tokens: Sequence[str]) -> pd.DataFrame:
    """The 'damaged' row's weights for each embedding factor: factor, key, weight."""
    return pd.DataFrame([{"factor": float(f), "key": t, "weight": float(w)}
                         for f, ws in zip(factors, weights) for t, w in zip(tokens, ws)])


def saturation_chart(df: pd.DataFrame, current: float | None = None) -> alt.LayerChart:
    keys = list(dict.fromkeys(df["key"]))
    lines = alt.Chart(df).mark_line().encode(
        x=alt.X("factor:Q", title="every embedding multiplied by"),
        y=alt.Y("weight:Q", scale=alt.Scale(domain=[0, 1]), title="weight of the 'damaged' row"),
        color=alt.Color("key:N", sort=keys, title="key read", legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("factor:Q", format=".2f"), alt.Tooltip("key:N"), alt.Tooltip("weight:Q", format=".3f")],
    )
    layers = [lines]
    if current is not None:
        layers.append(alt.Chart(pd.DataFrame({"factor": [float(current)]})).mark_rule(color=FRAME_COLOR)
                      .encode(x=alt.X("factor:Q")))
    return alt.layer(*layers).properties(width=420, height=220, autosize=FIT_WIDTH,
                                         title="Scores grow with the square of the factor: softmax saturates")


# -- cost ----------------------------------------------------------------------------------------------------
def _machine_title(title: str, machine: str | None) -> alt.Title:
    return alt.Title(title, subtitle=machine or "", anchor="start", subtitleColor=THEME_NEUTRAL_TEXT)


def cost_time_chart(df: pd.DataFrame, machine: str | None = None, ref_at: int = 1024) -> alt.LayerChart:
    """Median milliseconds per variant against n, log-log, with a dashed n² line through the readable
    attention()'s time at `ref_at` (or its first measured n). Columns: n, variant, ms."""
    return _cost_chart(df, "ms", "time per call (ms, log scale)", "Time for one head, batch 1, d_k = 64", machine,
                       ref_at)


def cost_memory_chart(df: pd.DataFrame, machine: str | None = None, ref_at: int = 1024) -> alt.LayerChart:
    """Peak extra memory (MB) per variant against n, log-log, with the n² line. Columns: n, variant, peak_mb."""
    return _cost_chart(df, "peak_mb", "peak memory (MB, log scale)", "Peak memory of one call", machine, ref_at)


REFERENCE = "n² from the readable attention()"


def _cost_chart(df: pd.DataFrame, field: str, y_title: str, title: str, machine: str | None, ref_at: int) -> alt.LayerChart:
    data = df[["n", "variant", field]].copy()
    # A log axis has no 0: a call that grew the process by nothing measurable (its few KiB fit the pages it had)
    # is drawn on the axis's floor, hollow, with its true value in the tooltip, not dropped.
    positive = data.loc[data[field] > 0, field]
    floor = float(positive.min()) / 2 if len(positive) else 1e-3
    data["shown"] = data[field].where(data[field] > 0, floor)
    data["measured"] = np.where(data[field] > 0, "measured", "below what can be measured")
    ns = sorted(data["n"].unique().tolist())
    base = data[data["variant"].str.startswith("readable") & (data[field] > 0)]
    layers = []
    x = alt.X("n:Q", scale=alt.Scale(type="log", base=2), title="tokens n (log scale)",
              axis=alt.Axis(values=ns, labelOverlap="greedy"))
    # Log y: one label per power of ten at most (`,~g`: 0.01, 1, 100, 10,000), never stacked on each other. Not SI
    # prefixes (`~s`): the unit is already milliseconds or megabytes, and 0.1 ms read "100m".
    y = alt.Y("shown:Q", scale=alt.Scale(type="log"), title=y_title,
              axis=alt.Axis(tickCount=6, format=",~g", labelOverlap="greedy", labelSeparation=4))
    variants = sorted(data["variant"].unique().tolist())
    palette = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2"]
    # The dashed n² line is one more entry of the same legend, in grey.
    color = alt.Color("variant:N", title=None, scale=alt.Scale(domain=[*variants, REFERENCE],
                                                               range=[*palette[:len(variants)], "#888888"]),
                      legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=0))
    lines = alt.Chart(data).mark_line(point=alt.OverlayMarkDef(filled=True, size=40)).encode(
        x=x, y=y, color=color,
        tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("n:Q"), alt.Tooltip(f"{field}:Q", format=".3f"),
                 alt.Tooltip("measured:N", title="point")])
    layers.append(lines)
    if (data[field] <= 0).any():
        layers.append(alt.Chart(data[data[field] <= 0]).mark_point(filled=False, size=70, color="#ffffff",
                                                                   strokeWidth=2).encode(x=x, y=y))
    if len(base):
        anchor = base[base["n"] == ref_at] if (base["n"] == ref_at).any() else base.nsmallest(1, "n")
        n0, v0 = float(anchor["n"].iloc[0]), float(anchor[field].iloc[0])
        ref = pd.DataFrame({"n": ns, "shown": [v0 * (n / n0) ** 2 for n in ns], "variant": REFERENCE})
        layers.append(alt.Chart(ref).mark_line(strokeDash=[5, 4]).encode(
            x=x, y=y, color=color,
            tooltip=[alt.Tooltip("n:Q"), alt.Tooltip("shown:Q", format=".3f", title="n² reference")]))
    return alt.layer(*layers).properties(width=440, height=280, title=_machine_title(title, machine),
                                         autosize=FIT_WIDTH)


def head_row_frame(steps, tokens: Sequence[str], row: int) -> pd.DataFrame:
    """The query row `row` of a head's steps (ticketnet.lens.steps.HeadSteps), one line per key: q·k, ÷√d_k, + M,
    the weight computed here and the router's own."""
    n = len(tokens)
    if steps.weights.shape != (n, n):
        raise ValueError(f"{n} tokens for a head of {steps.weights.shape[0]}")
    if not 0 <= row < n:
        raise ValueError(f"row must be in 0..{n - 1}, got {row}")
    masked = steps.masked[row].numpy()
    return pd.DataFrame({"key": [f"{j} · {t}" for j, t in enumerate(tokens)], "q·k": steps.scores[row].numpy(),
                         "q·k / √d_k": steps.scaled[row].numpy(),
                         "+ M": [float(v) if math.isfinite(v) else None for v in masked],
                         "weight": steps.weights[row].numpy(),
                         "router's weight": steps.model_weights[row].double().numpy()})
