"""Charts of the Routing policy page: risk–coverage, per-team thresholds, set sizes (DataFrames in, alt.Chart out)."""

# Colours are fixed per role and read on Streamlit's light and dark backgrounds alike (the theme colours axes, titles
# and legends, not marks): the router in the dashboard's blue, the oracle in the green of a true team, the random
# ranking in the registry's grey of the random baseline, the operating point in the frame red of the Heads page.
# Team names are data only (a Vega field is never built from one), so "a:b" or "<b>bold</b>" is drawn as written.
#
# A slider move changes the numbers, not the chart's structure, and building the per-team chart in Altair is slow
# (docs/routing-policy.md, "The page's speed"): each chart is a *template* whose data are named placeholders
# (`alt.NamedData`), built and converted once per structure (render.chart_spec), and `fill` puts this run's tables
# under those names (a name carries its table's content hash, so the browser redraws exactly when the numbers
# change). The `*_chart` functions are the same template with its tables attached, for tests and for callers
# without a cache.

from __future__ import annotations

import copy
import hashlib
import math
from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from dashboard.charts.theme import COLUMN_PX, FRAME_COLOR, THEME_NEUTRAL_TEXT
from ticketnet.interpret.signals import RANDOM

ROUTER = "this router"
ORACLE = "oracle"
RANDOM_RANKING = "random ranking"                      # ticketnet.policy's name for the reference, drawn in RANDOM's grey
ROUTER_COLOR = "#4c78a8"
ORACLE_COLOR = "#2e7d32"
RANKINGS = (ROUTER, ORACLE, RANDOM_RANKING)
RANKING_COLORS = (ROUTER_COLOR, ORACLE_COLOR, RANDOM.color)
SPLIT_COLORS = ("#4c78a8", "#e45756", "#72b7b2")      # test, the hand-written set, any further split
POINT_COLOR = FRAME_COLOR
TARGET_COLOR = "#b8860b"                               # the target line: dark gold, apart from every mark's colour

CURVE_POINTS = 400           # vertices drawn per curve (1,500 tickets give up to 1,500; the line looks the same)
CURVE_PX = COLUMN_PX - 120   # the plot; its legend and axis titles fit the rest of a 1000 px window's column
CURVE_HEIGHT = 300
SETS_PX = 200                # the set-size bars: beside the 470 px risk–coverage chart at 1366 px
PANEL_PX = 120               # each of the three per-team panels: team labels + 3 × 120 fit a 540 px column
TEAM_LABEL_PX = 110
LABEL_LEFT_FROM = 0.7        # the operating point's label goes left of it from this coverage on (inside the plot)
NEVER = "never"              # a team whose threshold is infinite: none of its tickets is auto-routed
PERCENT = ".0%"
# Drawn at their own size: under Streamlit's default autosize "fit" the title, axes and the legend below came out
# of the 300 px height, and the plots were left 93 px (risk–coverage) and 0 px (set sizes) tall.
PAD = alt.AutoSizeParams(type="pad", contains="padding")


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
    for name in (ORACLE, RANDOM_RANKING):
        ref = reference.loc[reference["ranking"] == name, ["coverage", "risk"]]
        if len(ref):
            parts.append(_thin(ref.assign(ranking=name)))
    out = pd.concat(parts, ignore_index=True)
    out["coverage"] = out["coverage"].astype(float)
    out["risk"] = out["risk"].astype(float)
    return out


POINT_DATA = "operating_point"
PER_TEAM_DATA = "per_team"
TARGET_DATA = "target_precision"


def point_frame(point: Mapping[str, float] | None) -> pd.DataFrame:
    """The operating point ({coverage, risk}) as the one-row table the risk–coverage chart marks (no row: none)."""
    rows = [] if point is None else [{"coverage": float(point["coverage"]), "risk": float(point["risk"]),
                                      "label": "operating point"}]
    return pd.DataFrame(rows, columns=["coverage", "risk", "label"])


def risk_top(curves: pd.DataFrame, point: Mapping[str, float] | None = None) -> float:
    """The top of the risk axis: the highest risk drawn (curves or point), rounded up to a half percent, so a moving
    point rarely changes it."""
    top = max(float(curves["risk"].max()) if len(curves) else 0.0, float(point["risk"]) if point else 0.0, 1e-3)
    return math.ceil(top * 1.05 * 200) / 200


def risk_coverage_template(curves: pd.DataFrame, top: float, title: str = "risk–coverage") -> alt.LayerChart:
    """The risk–coverage chart of `curves_frame`'s table, its y axis up to `top`, the operating point read from the
    named data POINT_DATA (`point_frame`'s columns; `fill` puts it there)."""
    x = alt.X("coverage:Q", title="coverage (share auto-routed)", scale=alt.Scale(domain=[0, 1]),
              axis=alt.Axis(format=PERCENT))
    y = alt.Y("risk:Q", title="risk (misrouted among auto-routed)", scale=alt.Scale(domain=[0, top], nice=False),
              axis=alt.Axis(format=".1%" if top < 0.1 else PERCENT))
    lines = alt.Chart(curves).mark_line(strokeWidth=2, interpolate="step-after").encode(
        x=x, y=y,
        color=alt.Color("ranking:N", scale=alt.Scale(domain=list(RANKINGS), range=list(RANKING_COLORS)),
                        legend=alt.Legend(title=None, orient="bottom", direction="horizontal")),
        strokeDash=alt.StrokeDash("ranking:N", scale=alt.Scale(domain=list(RANKINGS), range=[[1, 0], [6, 3], [2, 2]]),
                                  legend=None),
        tooltip=[alt.Tooltip("ranking:N"), alt.Tooltip("coverage:Q", format=".1%"),
                 alt.Tooltip("risk:Q", format=".2%")])
    base = alt.Chart(alt.NamedData(POINT_DATA)).encode(x=alt.X("coverage:Q"), y=alt.Y("risk:Q"))
    dot = base.mark_point(shape="diamond", size=160, filled=True, color=POINT_COLOR).encode(
        tooltip=[alt.Tooltip("label:N"), alt.Tooltip("coverage:Q", format=".1%"), alt.Tooltip("risk:Q", format=".2%")])
    # Left of the point when it sits near the right edge (high coverage), so the label stays inside the plot.
    near_right = f"datum.coverage > {LABEL_LEFT_FROM}"
    left = base.transform_filter(near_right).mark_text(align="right", dx=-10, dy=-10, color=POINT_COLOR,
                                                       fontWeight="bold").encode(text=alt.Text("label:N"))
    right = base.transform_filter(f"!({near_right})").mark_text(align="left", dx=10, dy=-10, color=POINT_COLOR,
                                                                fontWeight="bold").encode(text=alt.Text("label:N"))
    return alt.layer(lines, dot, right, left).properties(width=CURVE_PX, height=CURVE_HEIGHT, autosize=PAD,
                                                         title=alt.Title(title, anchor="start"))


def risk_coverage_chart(curve: pd.DataFrame, reference: pd.DataFrame, point: Mapping[str, float] | None = None,
                        title: str = "risk–coverage") -> alt.LayerChart:
    """Error rate among the auto-routed tickets (risk) against the share auto-routed (coverage), for the router's
    confidence ranking beside the oracle's and a random one; `point` ({coverage, risk}) marks the operating point."""
    curves = curves_frame(curve, reference)
    return with_data(risk_coverage_template(curves, risk_top(curves, point), title), {POINT_DATA: point_frame(point)})


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


def precision_low(frame: pd.DataFrame, target_precision: float | None = None) -> float:
    """Where the precision axis starts: the lowest interval end, the target or 90 %, whichever is lowest, on a 5 %
    step (precisions near 1 stay apart instead of crowding the right edge of a 0–1 axis)."""
    lows = [float(v) for v in frame["precision_low"].dropna()] + [0.9]
    if target_precision is not None:
        lows.append(float(target_precision))
    return max(0.0, math.floor(min(lows) * 20) / 20)


def target_frame(target_precision: float | None) -> pd.DataFrame:
    return pd.DataFrame({"target": [] if target_precision is None else [float(target_precision)]})


def threshold_low(frame: pd.DataFrame) -> float:
    """Where the threshold axis starts: the lowest finite threshold rounded down to a tenth, at most 0.5 (the
    thresholds of a strict target sit near 1, where a 0–1 axis would crowd them together)."""
    finite = frame["threshold"].dropna()
    return min(0.5, math.floor(float(finite.min()) * 10) / 10) if len(finite) else 0.5


def team_thresholds_template(teams: Sequence[str], low: float, target: bool,
                             thresholds_from: float = 0.0) -> alt.HConcatChart:
    """Per predicted team (`teams`, in order), side by side on one team axis: its confidence threshold (a "never"
    where none of its tickets is auto-routed), the share of its tickets auto-routed and the precision among them
    (axis from `low`), each with its bootstrap interval, read from the named data PER_TEAM_DATA (`per_team_frame`'s
    columns); with `target`, the target precision (TARGET_DATA, column target) as a dashed line. The threshold axis
    runs from `thresholds_from` to 1."""
    teams = list(teams)
    y = alt.Y("team:N", sort=teams, title=None, axis=alt.Axis(labelOverlap=False, labelLimit=TEAM_LABEL_PX))
    no_y = alt.Y("team:N", sort=teams, title=None, axis=None)
    tips = [alt.Tooltip("team:N"), alt.Tooltip("threshold_label:N", title="threshold"),
            alt.Tooltip("coverage:Q", format=".1%"), alt.Tooltip("precision:Q", format=".2%"),
            alt.Tooltip("auto_routed:Q", title="auto-routed", format=",d"),
            alt.Tooltip("misroutes:Q", format=",d"), alt.Tooltip("predicted:Q", format=",d")]
    base = alt.Chart(alt.NamedData(PER_TEAM_DATA))
    height = alt.Step(22)
    unit = alt.Scale(domain=[0, 1])

    threshold = alt.layer(
        base.mark_point(filled=True, size=60, shape="diamond", color=ROUTER_COLOR).encode(
            x=alt.X("threshold:Q", title="threshold", scale=alt.Scale(domain=[thresholds_from, 1]),
                    axis=alt.Axis(tickCount=3)), y=y, tooltip=tips),
        base.transform_filter(alt.datum.threshold_label == NEVER).mark_text(
            align="left", dx=3, color=THEME_NEUTRAL_TEXT, fontStyle="italic").encode(
            x=alt.datum(thresholds_from), y=y, text=alt.Text("threshold_label:N"), tooltip=tips),
    ).properties(width=PANEL_PX, height=height, title=alt.Title("confidence threshold", anchor="start", fontSize=12))

    def with_interval(field: str, title: str, scale: alt.Scale) -> list:
        return [
            base.mark_rule(color=THEME_NEUTRAL_TEXT, strokeWidth=2).encode(
                x=alt.X(f"{field}_low:Q", scale=scale, title=title, axis=alt.Axis(format=PERCENT, tickCount=3)),
                x2=alt.X2(f"{field}_high:Q"), y=no_y, tooltip=tips),
            base.mark_point(filled=True, size=60, color=ROUTER_COLOR).encode(x=alt.X(f"{field}:Q"), y=no_y,
                                                                             tooltip=tips),
        ]

    coverage = alt.layer(*with_interval("coverage", "auto-routed", unit)).properties(
        width=PANEL_PX, height=height, title=alt.Title("share auto-routed", anchor="start", fontSize=12))
    layers = with_interval("precision", "precision", alt.Scale(domain=[low, 1], clamp=True))
    if target:
        layers.append(alt.Chart(alt.NamedData(TARGET_DATA)).mark_rule(color=TARGET_COLOR, strokeDash=[4, 3]).encode(
            x=alt.X("target:Q"), tooltip=[alt.Tooltip("target:Q", format=".1%")]))
    precision = alt.layer(*layers).properties(
        width=PANEL_PX, height=height,
        title=alt.Title("precision" + (" (dashed: target)" if target else ""), anchor="start", fontSize=12))
    return alt.hconcat(threshold, coverage, precision, spacing=12).resolve_scale(y="shared")


def team_thresholds_data(frame: pd.DataFrame, target_precision: float | None = None) -> dict[str, pd.DataFrame]:
    """The tables `team_thresholds_template` reads, by name."""
    data = {PER_TEAM_DATA: frame}
    if target_precision is not None:
        data[TARGET_DATA] = target_frame(target_precision)
    return data


def team_thresholds_chart(frame: pd.DataFrame, target_precision: float | None = None) -> alt.HConcatChart:
    """`team_thresholds_template` for `per_team_frame`'s table, with it (and the target) attached."""
    template = team_thresholds_template(list(frame["team"]), precision_low(frame, target_precision),
                                        target_precision is not None, threshold_low(frame))
    return with_data(template, team_thresholds_data(frame, target_precision))


# -- named data: a template's tables, put in at draw time --------------------------------------------------------------
def _records(frame: pd.DataFrame) -> list[dict]:
    """A table as JSON-ready rows (NaN as null, numpy scalars as Python numbers)."""
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v.item() if hasattr(v, "item") else v)
             for k, v in row.items()} for row in frame.to_dict("records")]


def with_data(chart: alt.TopLevelMixin, data: Mapping[str, pd.DataFrame]) -> alt.TopLevelMixin:
    """The template `chart` with the tables `data` attached under their names (the chart a test reads)."""
    return chart.properties(datasets={name: _records(df) for name, df in data.items()})


def data_name(name: str, frame: pd.DataFrame) -> str:
    """`name` with a digest of `frame`'s content: a new name for new numbers."""
    digest = hashlib.sha1(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
                          + ",".join(map(str, frame.columns)).encode("utf-8")).hexdigest()[:12]
    return f"{name}_{digest}"


def fill(spec: dict, data: Mapping[str, pd.DataFrame]) -> dict:
    """A copy of the Vega-Lite dict `spec` (a converted template) with each named placeholder of `data` pointed at
    its table, under a name that carries the table's digest, the tables in `datasets` (Streamlit sends them as
    Arrow). The cached template is not touched."""
    names = {name: data_name(name, df) for name, df in data.items()}

    def walk(node):
        if isinstance(node, dict):
            if set(node) == {"name"} and node["name"] in names:
                return {"name": names[node["name"]]}
            return {k: walk(v) for k, v in node.items() if k != "datasets"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out = walk(spec)
    out["datasets"] = {**copy.copy(spec.get("datasets", {})), **{names[n]: df for n, df in data.items()}}
    return out


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
                        legend=alt.Legend(title=None, orient="bottom", direction="horizontal")),
        tooltip=[alt.Tooltip("split:N"), alt.Tooltip("size:O", title="set size"), alt.Tooltip("tickets:Q", format=",d"),
                 alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=SETS_PX, height=200, autosize=PAD,
                 title=alt.Title("prediction-set sizes", anchor="start"))
