"""Charts of the Routing policy page: risk–coverage, per-team thresholds, set sizes (DataFrames in, alt.Chart out)."""

# Colours are fixed per role and read on Streamlit's light and dark backgrounds alike (the theme colours axes, titles
# and legends, not marks): the router in the dashboard's blue, the oracle in the green of a true team, the random
# ranking in the registry's grey of the random baseline, the operating point in the frame red of the Heads page.
# Team names are data only (a Vega field is never built from one), so "a:b" or "<b>bold</b>" is drawn as written.

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from dashboard.charts.attention import COLUMN_PX, FRAME_COLOR, THEME_NEUTRAL_TEXT
from ticketnet.interpret.signals import RANDOM

ROUTER = "this router"
ORACLE = "oracle"
ROUTER_COLOR = "#4c78a8"
ORACLE_COLOR = "#2e7d32"
RANKINGS = (ROUTER, ORACLE, RANDOM.name)
RANKING_COLORS = (ROUTER_COLOR, ORACLE_COLOR, RANDOM.color)
SPLIT_COLORS = ("#4c78a8", "#e45756", "#72b7b2")      # test, the hand-written set, any further split
POINT_COLOR = FRAME_COLOR
TARGET_COLOR = "#b8860b"                               # the target line: dark gold, apart from every mark's colour

CURVE_POINTS = 400           # a curve's vertices drawn (1,500 tickets give up to 1,500 thresholds; the line looks the same)
CURVE_PX = COLUMN_PX - 120   # the plot; its legend and axis titles fit the rest of a 1000 px window's column
CURVE_HEIGHT = 300
PANEL_PX = 120               # each of the three per-team panels: team labels + 3 × 120 fit a 540 px column
TEAM_LABEL_PX = 110
NEVER = "never"              # a team whose threshold is infinite: none of its tickets is auto-routed
PERCENT = ".0%"


def _thin(curve: pd.DataFrame, limit: int = CURVE_POINTS) -> pd.DataFrame:
    """At most `limit` rows of a curve, evenly spaced along it, its first and last rows kept."""
    if len(curve) <= limit:
        return curve
    keep = np.unique(np.linspace(0, len(curve) - 1, limit).round().astype(int))
    return curve.iloc[keep]


def curves_frame(curve: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """The router's curve (coverage, risk) and the reference curves (coverage, risk, ranking) in one long table:
    coverage, risk, ranking, each curve thinned to CURVE_POINTS vertices."""
    parts = [_thin(curve[["coverage", "risk"]].assign(ranking=ROUTER))]
    for name in (ORACLE, RANDOM.name):
        ref = reference.loc[reference["ranking"] == name, ["coverage", "risk"]]
        if len(ref):
            parts.append(_thin(ref.assign(ranking=name)))
    out = pd.concat(parts, ignore_index=True)
    out["coverage"] = out["coverage"].astype(float)
    out["risk"] = out["risk"].astype(float)
    return out


def risk_coverage_chart(curve: pd.DataFrame, reference: pd.DataFrame, point: Mapping[str, float] | None = None,
                        title: str = "risk–coverage") -> alt.LayerChart:
    """Error rate among the auto-routed tickets (risk) against the share auto-routed (coverage), for the router's
    confidence ranking beside the oracle's and a random one; `point` ({coverage, risk}) marks the operating point."""
    df = curves_frame(curve, reference)
    top = max(float(df["risk"].max()) if len(df) else 0.0, float(point["risk"]) if point else 0.0, 1e-3)
    x = alt.X("coverage:Q", title="coverage (share auto-routed)", scale=alt.Scale(domain=[0, 1]),
              axis=alt.Axis(format=PERCENT))
    y = alt.Y("risk:Q", title="risk (misrouted among auto-routed)", scale=alt.Scale(domain=[0, top * 1.08], nice=False),
              axis=alt.Axis(format=".1%" if top < 0.1 else PERCENT))
    lines = alt.Chart(df).mark_line(strokeWidth=2, interpolate="step-after").encode(
        x=x, y=y,
        color=alt.Color("ranking:N", scale=alt.Scale(domain=list(RANKINGS), range=list(RANKING_COLORS)),
                        legend=alt.Legend(title=None, orient="bottom")),
        strokeDash=alt.StrokeDash("ranking:N", scale=alt.Scale(domain=list(RANKINGS), range=[[1, 0], [6, 3], [2, 2]]),
                                  legend=None),
        tooltip=["ranking:N", alt.Tooltip("coverage:Q", format=".1%"), alt.Tooltip("risk:Q", format=".2%")])
    layers: list = [lines]
    if point is not None:
        dot = pd.DataFrame([{"coverage": float(point["coverage"]), "risk": float(point["risk"]),
                             "label": "operating point"}])
        base = alt.Chart(dot).encode(x="coverage:Q", y="risk:Q")
        layers.append(base.mark_point(shape="diamond", size=160, filled=True, color=POINT_COLOR).encode(
            tooltip=["label:N", alt.Tooltip("coverage:Q", format=".1%"), alt.Tooltip("risk:Q", format=".2%")]))
        # Left of the point when it sits near the right edge (high coverage), so the label stays inside the plot.
        right = float(point["coverage"]) > 0.7
        layers.append(base.mark_text(align="right" if right else "left", dx=-10 if right else 10, dy=-10,
                                     color=POINT_COLOR, fontWeight="bold").encode(text="label:N"))
    return alt.layer(*layers).properties(width=CURVE_PX, height=CURVE_HEIGHT,
                                         title=alt.Title(title, anchor="start"))


def _interval(stat: Mapping | None) -> tuple[float, float, float]:
    if not stat:
        return math.nan, math.nan, math.nan
    return tuple(math.nan if stat.get(k) is None else float(stat[k]) for k in ("value", "low", "high"))


def per_team_frame(per_team: Mapping[str, Mapping], teams: Sequence[str]) -> pd.DataFrame:
    """`threshold_report(...)["per_team"]` as a table in the order of `teams`: team, threshold (NaN: never),
    threshold_label, coverage, coverage_low, coverage_high, precision, precision_low, precision_high, auto_routed,
    misroutes, predicted."""
    rows = []
    for team in teams:
        r = per_team.get(team)
        if r is None:
            continue
        threshold = float(r["threshold"])
        cov, cov_lo, cov_hi = _interval(r.get("coverage"))
        prec, prec_lo, prec_hi = _interval(r.get("precision"))
        rows.append({"team": team, "threshold": threshold if math.isfinite(threshold) else math.nan,
                     "threshold_label": f"{threshold:.3f}" if math.isfinite(threshold) else NEVER,
                     "coverage": cov, "coverage_low": cov_lo, "coverage_high": cov_hi,
                     "precision": prec, "precision_low": prec_lo, "precision_high": prec_hi,
                     "auto_routed": int(r.get("auto_routed", 0)), "misroutes": int(r.get("misroutes", 0)),
                     "predicted": int(r.get("predicted", 0))})
    return pd.DataFrame(rows, columns=["team", "threshold", "threshold_label", "coverage", "coverage_low",
                                       "coverage_high", "precision", "precision_low", "precision_high",
                                       "auto_routed", "misroutes", "predicted"])


def team_thresholds_chart(frame: pd.DataFrame, target_precision: float | None = None) -> alt.HConcatChart:
    """Per predicted team, side by side on one team axis: its confidence threshold (a "never" where none of its
    tickets is auto-routed), the share of its tickets auto-routed and the precision among them, each with its
    bootstrap interval; `target_precision` draws the target as a line on the precision panel."""
    teams = list(frame["team"])
    y = alt.Y("team:N", sort=teams, title=None, axis=alt.Axis(labelOverlap=False, labelLimit=TEAM_LABEL_PX))
    no_y = alt.Y("team:N", sort=teams, title=None, axis=None)
    tips = ["team:N", alt.Tooltip("threshold_label:N", title="threshold"),
            alt.Tooltip("coverage:Q", format=".1%"), alt.Tooltip("precision:Q", format=".2%"),
            alt.Tooltip("auto_routed:Q", title="auto-routed", format=",d"),
            alt.Tooltip("misroutes:Q", format=",d"), alt.Tooltip("predicted:Q", format=",d")]
    base = alt.Chart(frame)
    height = alt.Step(22)
    unit = alt.Scale(domain=[0, 1])

    threshold = alt.layer(
        base.mark_bar(color=ROUTER_COLOR).encode(x=alt.X("threshold:Q", title="threshold", scale=unit), y=y,
                                                 tooltip=tips),
        base.transform_filter(alt.datum.threshold_label == NEVER).mark_text(
            align="left", dx=3, color=THEME_NEUTRAL_TEXT, fontStyle="italic").encode(
            x=alt.datum(0), y=y, text="threshold_label:N", tooltip=tips),
    ).properties(width=PANEL_PX, height=height, title=alt.Title("confidence threshold", anchor="start", fontSize=12))

    def with_interval(field: str, title: str, scale: alt.Scale, fmt: str) -> alt.LayerChart:
        layers = [
            base.mark_rule(color=THEME_NEUTRAL_TEXT, strokeWidth=2).encode(
                x=alt.X(f"{field}_low:Q", scale=scale, title=title, axis=alt.Axis(format=fmt, tickCount=3)),
                x2=f"{field}_high:Q", y=no_y, tooltip=tips),
            base.mark_point(filled=True, size=60, color=ROUTER_COLOR).encode(x=f"{field}:Q", y=no_y, tooltip=tips),
        ]
        return alt.layer(*layers)

    coverage = with_interval("coverage", "auto-routed", unit, PERCENT).properties(
        width=PANEL_PX, height=height, title=alt.Title("share auto-routed", anchor="start", fontSize=12))
    # The precision axis starts at the lowest interval end, the target or 90 %, whichever is lowest, on a 5 % step:
    # precisions near 1 stay apart instead of crowding the right edge of a 0–1 axis.
    lows = [float(v) for v in frame["precision_low"].dropna()] + [0.9]
    if target_precision is not None:
        lows.append(float(target_precision))
    low = max(0.0, math.floor(min(lows) * 20) / 20)
    precision = with_interval("precision", "precision", alt.Scale(domain=[low, 1], clamp=True), PERCENT)
    if target_precision is not None:
        line = pd.DataFrame([{"target": float(target_precision)}])
        precision = alt.layer(precision, alt.Chart(line).mark_rule(color=TARGET_COLOR, strokeDash=[4, 3]).encode(
            x="target:Q", tooltip=[alt.Tooltip("target:Q", format=".1%")]))
    precision = precision.properties(width=PANEL_PX, height=height,
                                     title=alt.Title("precision" + (" (dashed: target)" if target_precision else ""),
                                                     anchor="start", fontSize=12))
    return alt.hconcat(threshold, coverage, precision, spacing=12).resolve_scale(y="shared")


def set_size_frame(reports: Mapping[str, Mapping]) -> pd.DataFrame:
    """`set_report` results by split as a long table: split, size, tickets, share (of the split's tickets); every
    size from the smallest to the largest seen appears for every split (0 where none)."""
    sizes = sorted({int(s) for r in reports.values() for s in r["size_counts"]})
    if not sizes:
        return pd.DataFrame(columns=["split", "size", "tickets", "share"])
    rows = []
    for split, r in reports.items():
        counts = {int(k): int(v) for k, v in r["size_counts"].items()}
        n = max(1, int(r["n"]))
        for size in range(sizes[0], sizes[-1] + 1):
            rows.append({"split": split, "size": size, "tickets": counts.get(size, 0),
                         "share": counts.get(size, 0) / n})
    return pd.DataFrame(rows)


def set_size_chart(frame: pd.DataFrame) -> alt.Chart:
    """Share of each split's tickets whose prediction set holds 0, 1, 2 … teams, the splits side by side."""
    order = list(dict.fromkeys(frame["split"]))
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("size:O", title="teams in the prediction set", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("split:N", sort=order),
        y=alt.Y("share:Q", title="share of tickets", axis=alt.Axis(format=PERCENT)),
        color=alt.Color("split:N", sort=order, scale=alt.Scale(domain=order, range=list(SPLIT_COLORS[:len(order)])),
                        legend=alt.Legend(title=None, orient="bottom")),
        tooltip=["split:N", alt.Tooltip("size:O", title="set size"), alt.Tooltip("tickets:Q", format=",d"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=alt.Step(22 * max(1, len(order))), height=200,
                 title=alt.Title("prediction-set sizes", anchor="start"))
