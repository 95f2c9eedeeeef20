"""Charts of the Compare page, two routers side by side (pure: DataFrames in, alt.Chart out)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from dashboard.charts.theme import COLUMN_PX, THEME_NEUTRAL_TEXT, value_format
from ticketnet.interpret.signals import head_attention

# Router A is the reference, B the candidate: one colour each on every chart of the page (and in the legends).
COLOR_A = "#4c78a8"
COLOR_B = "#f58518"
BETTER, WORSE = "#2e7d32", "#c62828"      # a difference whose whole interval lies above (below) zero
DELTA_PANEL_PX = 190                      # precision and recall panels side by side in a laptop's 540 px column
TEAM_LABELS_PX = 120
HEAD_PANEL_PX = 190


def router_scale(label_a: str, label_b: str) -> alt.Scale:
    return alt.Scale(domain=[label_a, label_b], range=[COLOR_A, COLOR_B])


# -- per-team deltas ------------------------------------------------------------------------------------------------
def delta_frame(deltas: pd.DataFrame) -> pd.DataFrame:
    """`ticketnet.compare.team_deltas` with a `verdict` per row: "B higher" / "B lower" when the interval of B − A
    lies wholly above / below 0, else "no clear change"."""
    df = deltas.copy()
    df["verdict"] = "no clear change"
    df.loc[df["low"] > 0, "verdict"] = "B higher"
    df.loc[df["high"] < 0, "verdict"] = "B lower"
    return df


def _delta_panel(df: pd.DataFrame, measure: str, teams: list[str], show_labels: bool, domain: list[float]) -> alt.LayerChart:
    part = df[df["measure"] == measure]
    y_axis = alt.Axis(labelLimit=TEAM_LABELS_PX, labelOverlap=False) if show_labels else alt.Axis(labels=False,
                                                                                                   ticks=False)
    y = alt.Y("team:N", sort=teams, title=None, axis=y_axis)
    x = alt.X("delta:Q", title=f"B − A {measure}", scale=alt.Scale(domain=domain, nice=False),
              axis=alt.Axis(format="+.2f", tickCount=4, labelOverlap=True))
    color = alt.Color("verdict:N", title="95 % interval of B − A",
                      scale=alt.Scale(domain=["B higher", "no clear change", "B lower"],
                                      range=[BETTER, "#888888", WORSE]),
                      legend=alt.Legend(orient="bottom", direction="horizontal"))
    tooltip = [alt.Tooltip("team:N"), alt.Tooltip("a:Q", title=f"A {measure}", format=".3f"),
               alt.Tooltip("b:Q", title=f"B {measure}", format=".3f"), alt.Tooltip("delta:Q", title="B − A", format="+.3f"),
               alt.Tooltip("low:Q", title="95 % low", format="+.3f"), alt.Tooltip("high:Q", title="95 % high", format="+.3f"),
               alt.Tooltip("support:Q", title="tickets of the team", format=",")]
    zero = alt.Chart(pd.DataFrame({"delta": [0.0]})).mark_rule(color=THEME_NEUTRAL_TEXT, strokeDash=[3, 3]).encode(
        x=alt.X("delta:Q", scale=alt.Scale(domain=domain, nice=False)))
    base = alt.Chart(part)
    interval = base.mark_rule(strokeWidth=2).encode(y=y, x=alt.X("low:Q", scale=alt.Scale(domain=domain, nice=False)),
                                                     x2=alt.X2("high:Q"), color=color, tooltip=tooltip)
    point = base.mark_point(filled=True, size=60).encode(y=y, x=x, color=color, tooltip=tooltip)
    return alt.layer(zero, interval, point).properties(width=DELTA_PANEL_PX, height=alt.Step(22),
                                                       title=alt.Title(measure, anchor="start", fontSize=12))


def team_deltas_chart(deltas: pd.DataFrame) -> alt.HConcatChart:
    """Per team, B − A precision and recall: a dot at the difference and a line across its paired 95 % interval,
    green when the interval lies above 0, red below, grey across it; a dashed line at 0."""
    df = delta_frame(deltas)
    teams = list(dict.fromkeys(df["team"]))
    reach = float(max(0.05, df[["low", "high", "delta"]].abs().max().max()) * 1.1) if len(df) else 0.05
    domain = [-reach, reach]
    return alt.hconcat(_delta_panel(df, "precision", teams, True, domain),
                       _delta_panel(df, "recall", teams, False, domain), spacing=10)


# -- deletion effects of both routers ------------------------------------------------------------------------------
def deletion_frame(effects: pd.DataFrame, label_a: str, label_b: str, own_scale: bool = False) -> pd.DataFrame:
    """`DeletionAgreement.frame()` (position, token, support_a, support_b) in long form: label ("3:not"), router
    (label_a or label_b), support. `own_scale`: each router's supports divided by its largest |support| (a router
    whose every effect is 0 keeps its zeros), so a router with small effects is not drawn flat beside one with
    large ones; ranks, and so Kendall τ, are unchanged."""
    df = effects.copy()
    if own_scale:
        for col in ("support_a", "support_b"):
            peak = float(df[col].abs().max()) if len(df) else 0.0
            df[col] = df[col] / peak if peak > 0 else df[col]
    df["label"] = [f"{int(p)}:{t}" for p, t in zip(df["position"], df["token"])]
    long = df.melt(id_vars=["position", "token", "label"], value_vars=["support_a", "support_b"], var_name="which",
                   value_name="support")
    long["router"] = long["which"].map({"support_a": label_a, "support_b": label_b})
    return long.drop(columns="which").sort_values(["position", "router"], kind="stable").reset_index(drop=True)


def deletion_chart(effects: pd.DataFrame, label_a: str, label_b: str, x_title: str,
                   own_scale: bool = False) -> alt.Chart:
    """Both routers' deletion effects in one chart: per token (down the side, in reading order) a bar for A and one
    for B, each its router's support for its own predicted team (positive: the token helps that team); `own_scale`
    as in `deletion_frame`."""
    df = deletion_frame(effects, label_a, label_b, own_scale)
    labels = list(dict.fromkeys(df["label"]))
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("label:O", sort=labels, title=None, axis=alt.Axis(labelLimit=110, labelOverlap=False, labelFontSize=11)),
        yOffset=alt.YOffset("router:N", sort=[label_a, label_b]),
        x=alt.X("support:Q", title=x_title, axis=alt.Axis(format=value_format(df["support"]), tickCount=5,
                                                          titleLimit=COLUMN_PX - 140)),
        color=alt.Color("router:N", scale=router_scale(label_a, label_b), title=None,
                        legend=alt.Legend(orient="top", labelLimit=COLUMN_PX - 40)),
        tooltip=[alt.Tooltip("label:N", title="token"), alt.Tooltip("router:N"),
                 alt.Tooltip("support:Q", title=x_title, format=value_format(df["support"], 3, trim=False))],
    ).properties(width=COLUMN_PX - 150, height=alt.Step(8))


# -- per head: attention change beside importance ----------------------------------------------------------------------
def head_frame(changes: pd.DataFrame, label_a: str, label_b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(`ticketnet.compare.head_changes` with a head_label "b1 h2", the importance panel's long table: head_label,
    router, accuracy_drop, with rows only for the routers whose importance is known)."""
    df = changes.copy()
    df["head_label"] = [head_attention(int(b), int(h)).name for b, h in zip(df["block"], df["head"])]
    rows = []
    for suffix, label in (("a", label_a), ("b", label_b)):
        col = f"accuracy_drop_{suffix}"
        if col in df.columns:
            rows.append(pd.DataFrame({"head_label": df["head_label"], "router": label, "accuracy_drop": df[col]}))
    imp = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["head_label", "router",
                                                                                "accuracy_drop"])
    return df, imp


def head_change_chart(changes: pd.DataFrame, label_a: str, label_b: str) -> alt.HConcatChart | alt.Chart:
    """Per head (block and head down the side): the mean Jensen–Shannon divergence of its attention between the two
    routers, and beside it what switching the head off costs each router in accuracy, where that is known."""
    df, imp = head_frame(changes, label_a, label_b)
    heads = list(df["head_label"])
    y = alt.Y("head_label:N", sort=heads, title=None, axis=alt.Axis(labelOverlap=False))
    jsd = alt.Chart(df).mark_bar(color="#7d3c98").encode(
        y=y, x=alt.X("jsd:Q", title=["mean JS divergence", "(nats)"],
                     axis=alt.Axis(format=value_format(df["jsd"]), tickCount=4)),
        tooltip=[alt.Tooltip("head_label:N", title="head"), alt.Tooltip("jsd:Q", title="mean JSD (nats)", format=".4f"),
                 alt.Tooltip("tickets:Q", format=",")],
    ).properties(width=HEAD_PANEL_PX, height=alt.Step(18),
                 title=alt.Title("attention change", anchor="start", fontSize=12))
    if not len(imp):
        return jsd
    importance = alt.Chart(imp).mark_bar().encode(
        y=alt.Y("head_label:N", sort=heads, title=None, axis=alt.Axis(labels=False, ticks=False)),
        yOffset=alt.YOffset("router:N", sort=[label_a, label_b]),
        x=alt.X("accuracy_drop:Q", title=["accuracy lost", "with the head off"],
                axis=alt.Axis(format=".1%", tickCount=4)),
        color=alt.Color("router:N", scale=router_scale(label_a, label_b), title=None,
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=2 * HEAD_PANEL_PX)),
        tooltip=[alt.Tooltip("head_label:N", title="head"), alt.Tooltip("router:N"),
                 alt.Tooltip("accuracy_drop:Q", title="accuracy lost", format=".2%")],
    ).properties(width=HEAD_PANEL_PX, height=alt.Step(18),
                 title=alt.Title("importance", anchor="start", fontSize=12))
    return alt.hconcat(jsd, importance, spacing=10)


def labels_of(name_a: str, name_b: str) -> tuple[str, str]:
    """The two routers' legend labels: "A · shipped", "B · retrain" (distinct even for two routers of one name)."""
    return f"A · {name_a}", f"B · {name_b}"

