"""Charts of the Corpus page, built from a scan's summary and per-token table (pure: DataFrames in, alt.Chart out)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from dashboard.charts.theme import COLUMN_PX, when
from ticketnet.interpret.signals import RANDOM, TAU

# Widths for the narrowest layout (a 1000 px window: a 540 px main column, see charts.attention): the summary charts
# and the word scatter each fit it alone, and sit side by side with their neighbours in a wider window.
SUMMARY_PX = 420                         # routing mix and confidence, one above the other
RELIANCE_PX = COLUMN_PX                  # the scatter with its axes and legends (Streamlit fits the whole chart)
RELIANCE_HEIGHT = 470
RELIANCE_TABLE_PX = 360                  # the word table beside it (beside at 1366 px, below at 1000 px)
# Counts are whole tickets: no tick at 0.5 of one on a small scan.
COUNT_AXIS = {"format": ",d", "tickMinStep": 1}


def routing_frame(summary: dict) -> pd.DataFrame:
    n = max(1, summary["tickets"])
    return pd.DataFrame([{"team": t, "tickets": c, "share": c / n} for t, c in summary["routing"].items()])


def routing_chart(summary: dict) -> alt.Chart:
    """Tickets routed to each team (the routing mix)."""
    return alt.Chart(routing_frame(summary)).mark_bar().encode(
        x=alt.X("tickets:Q", title="tickets routed there", axis=alt.Axis(**COUNT_AXIS)),
        # every team named: the default overlap rule dropped every other label ("delivery", "product")
        y=alt.Y("team:N", sort=list(summary["teams"]), title=None, axis=alt.Axis(labelOverlap=False, labelLimit=120)),
        tooltip=[alt.Tooltip("team:N"), alt.Tooltip("tickets:Q", format=","), alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=alt.Step(26))


def histogram_frame(edges: Sequence[float], counts: Sequence[int]) -> pd.DataFrame:
    return pd.DataFrame({"start": list(edges[:-1]), "end": list(edges[1:]), "tickets": list(counts)})


def confidence_chart(summary: dict) -> alt.Chart:
    """How sure the router is across the corpus: tickets per confidence bin."""
    h = summary["confidence_hist"]
    return alt.Chart(histogram_frame(h["edges"], h["counts"])).mark_bar().encode(
        x=alt.X("start:Q", bin="binned", title=["confidence", "(probability of the predicted team)"],
                scale=alt.Scale(domain=[0, 1])),
        x2=alt.X2("end:Q"),
        y=alt.Y("tickets:Q", title="tickets", axis=alt.Axis(**COUNT_AXIS)),
        tooltip=[alt.Tooltip("start:Q", format=".2f"), alt.Tooltip("end:Q", format=".2f"),
                 alt.Tooltip("tickets:Q", format=",")],
    ).properties(height=160)


def tau_frame(summary: dict) -> pd.DataFrame:
    rows = []
    for signal, t in summary.get(TAU, {}).items():
        if t["mean"] is not None:
            rows.append({"signal": signal, "mean τ": t["mean"], "tickets": t["count"]})
    return pd.DataFrame(rows, columns=["signal", "mean τ", "tickets"])


def tau_chart(summary: dict) -> alt.Chart:
    """Mean Kendall τ of each attention signal against the deletion effect, random rankings included."""
    df = tau_frame(summary)
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("mean τ:Q", title="mean Kendall τ vs deletion effect"),
        y=alt.Y("signal:N", sort="-x", title=None),
        color=when(alt.datum.signal == RANDOM.name, "#999999", "#1f5fa8"),
        tooltip=[alt.Tooltip("signal:N"), alt.Tooltip("mean τ:Q", format=".3f"), alt.Tooltip("tickets:Q", format=",")],
    ).properties(height=24 * max(1, len(df)))


def reliance_frame(tokens: pd.DataFrame, team: str, min_tickets: int = 1) -> pd.DataFrame:
    """The team's tokens seen in at least `min_tickets` tickets, with how far each lies from the diagonal."""
    df = tokens[(tokens["team"] == team) & (tokens["tickets"] >= min_tickets)].copy()
    df["effect minus attention"] = df["mean_effect"] - df["mean_rollout"]
    return df.reset_index(drop=True)


def count_legend_values(most: int, count: int = 4) -> list[int]:
    """At most `count` round, whole ticket counts up to `most` for a size legend (no 0, no half ticket), so the
    legend fits under the plot: 500 -> [200, 400], 20 -> [5, 10, 15, 20], 3 -> [1, 2, 3]."""
    most = max(1, int(most))
    step = next(m * 10 ** k for k in range(len(str(most)) + 1) for m in (1, 2, 5) if most // (m * 10 ** k) <= count)
    return list(range(step, most + 1, step))


def reliance_chart(df: pd.DataFrame, team: str) -> alt.LayerChart:
    """Every token as a point: x = mean rollout share (attention it receives), y = mean deletion effect on the
    team, size = tickets; the dashed diagonal is where the two agree."""
    top = float(max(df["mean_rollout"].max() if len(df) else 0.0, df["mean_effect"].max() if len(df) else 0.0,
                    0.05))
    # Both legends under the plot, so the plot keeps the column's width (beside it, they left the plot 80 px at
    # 1000 px, and the size legend ran over the x axis title).
    points = alt.Chart(df).mark_circle(opacity=0.6, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("mean_rollout:Q", title="attention it receives (mean rollout share)", scale=alt.Scale(domain=[0, top])),
        y=alt.Y("mean_effect:Q", title=f"deleting it lowers p({team}) by (mean)"),
        size=alt.Size("tickets:Q", title="tickets", scale=alt.Scale(range=[12, 600]),
                      legend=alt.Legend(orient="bottom", direction="horizontal", format=",d", symbolStrokeWidth=0,
                                        values=count_legend_values(int(df["tickets"].max()) if len(df) else 1))),
        color=alt.Color("effect minus attention:Q", scale=alt.Scale(scheme="redblue", domainMid=0),
                        title="effect − attention",
                        legend=alt.Legend(orient="bottom", direction="horizontal", gradientLength=160)),
        tooltip=[alt.Tooltip("token:N"), alt.Tooltip("tickets:Q", format=","),
                 alt.Tooltip("mean_effect:Q", format=".4f"),
                 alt.Tooltip("median_effect:Q", format=".4f"), alt.Tooltip("mean_rollout:Q", format=".4f"),
                 alt.Tooltip("top_effect_share:Q", format=".1%", title="top-effect token in")],
    )
    diagonal = alt.Chart(pd.DataFrame({"x": [0.0, top], "y": [0.0, top]})).mark_line(
        strokeDash=[4, 4], color="#888888").encode(x=alt.X("x:Q"), y=alt.Y("y:Q"))
    return alt.layer(diagonal, points).properties(width=RELIANCE_PX, height=RELIANCE_HEIGHT)


def empty_reliance_reason(tokens: pd.DataFrame, team: str, min_tickets: int, routed: int) -> str:
    """Why the reliance view of `team` (`routed` tickets routed there) has no word at `min_tickets`, and what to
    change, in one line."""
    seen = tokens.loc[tokens["team"] == team, "tickets"]
    if seen.empty:
        return f"No ticket of this scan is routed to {team}, so there is no word to show: pick another team."
    most = int(seen.max())
    tickets = f"{routed:,} ticket{'' if routed == 1 else 's'}"
    return (f"No word of the {tickets} routed to {team} is in {min_tickets:,} or more of them (the most seen is in "
            f"{most:,}): set “Tokens seen in at least … tickets” to {most:,} or lower.")


# -- the stored routing policy's effect on a scan ------------------------------------------------------------------
def set_size_frame(policy: dict) -> pd.DataFrame:
    n = max(1, policy["tickets"])
    return pd.DataFrame([{"set size": str(size), "tickets": count, "share": count / n}
                         for size, count in policy["set_sizes"].items()], columns=["set size", "tickets", "share"])


def set_size_chart(policy: dict) -> alt.Chart:
    """Tickets by the size of their prediction set (1: one team is enough; 0: LAC found no team plausible)."""
    frame = set_size_frame(policy)
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("set size:O", sort=frame["set size"].tolist(), title="teams in the ticket's prediction set",
                axis=alt.Axis(labelAngle=0)),
        y=alt.Y("tickets:Q", title="tickets", axis=alt.Axis(**COUNT_AXIS)),
        tooltip=[alt.Tooltip("set size:N"), alt.Tooltip("tickets:Q", format=","), alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=160)


def routing_delta_frame(comparison: dict) -> pd.DataFrame:
    return pd.DataFrame([{"team": t, "A": r["a"], "B": r["b"], "change": r["delta"], "share A": r["share_a"],
                          "share B": r["share_b"]} for t, r in comparison["routing"].items()])


def routing_delta_chart(comparison: dict) -> alt.Chart:
    """Per team, how many more (or fewer) tickets scan B's router sends there than scan A's."""
    df = routing_delta_frame(comparison)
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("change:Q", title="tickets routed there, B − A", axis=alt.Axis(format=",d", tickMinStep=1)),
        y=alt.Y("team:N", sort=list(df["team"]), title=None, axis=alt.Axis(labelOverlap=False, labelLimit=120)),
        color=when("datum.change >= 0", "#4c78a8", "#e45756"),
        tooltip=[alt.Tooltip("team:N"), alt.Tooltip("A:Q", format=","), alt.Tooltip("B:Q", format=","),
                 alt.Tooltip("change:Q", format="+,"), alt.Tooltip("share A:Q", format=".1%"),
                 alt.Tooltip("share B:Q", format=".1%")],
    ).properties(width=SUMMARY_PX, height=alt.Step(26))
