"""Charts of the Corpus page, built from a scan's summary and per-token table (pure: DataFrames in, alt.Chart out)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ticketnet.interpret.signals import RANDOM, TAU


def routing_frame(summary: dict) -> pd.DataFrame:
    n = max(1, summary["tickets"])
    return pd.DataFrame([{"team": t, "tickets": c, "share": c / n} for t, c in summary["routing"].items()])


def routing_chart(summary: dict) -> alt.Chart:
    """Tickets routed to each team (the routing mix)."""
    return alt.Chart(routing_frame(summary)).mark_bar().encode(
        x=alt.X("tickets:Q", title="tickets routed there"),
        y=alt.Y("team:N", sort=list(summary["teams"]), title=None),
        tooltip=["team:N", alt.Tooltip("tickets:Q", format=","), alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=160)


def histogram_frame(edges: Sequence[float], counts: Sequence[int]) -> pd.DataFrame:
    return pd.DataFrame({"start": list(edges[:-1]), "end": list(edges[1:]), "tickets": list(counts)})


def confidence_chart(summary: dict) -> alt.Chart:
    """How sure the router is across the corpus: tickets per confidence bin."""
    h = summary["confidence_hist"]
    return alt.Chart(histogram_frame(h["edges"], h["counts"])).mark_bar().encode(
        x=alt.X("start:Q", bin="binned", title="confidence (probability of the predicted team)",
                scale=alt.Scale(domain=[0, 1])),
        x2="end:Q",
        y=alt.Y("tickets:Q", title="tickets"),
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
        color=alt.condition(alt.datum.signal == RANDOM.name, alt.value("#999999"), alt.value("#1f5fa8")),
        tooltip=["signal:N", alt.Tooltip("mean τ:Q", format=".3f"), alt.Tooltip("tickets:Q", format=",")],
    ).properties(height=24 * max(1, len(df)))


def reliance_frame(tokens: pd.DataFrame, team: str, min_tickets: int = 1) -> pd.DataFrame:
    """The team's tokens seen in at least `min_tickets` tickets, with how far each lies from the diagonal."""
    df = tokens[(tokens["team"] == team) & (tokens["tickets"] >= min_tickets)].copy()
    df["effect minus attention"] = df["mean_effect"] - df["mean_rollout"]
    return df.reset_index(drop=True)


def reliance_chart(df: pd.DataFrame, team: str) -> alt.LayerChart:
    """Every token as a point: x = mean rollout share (attention it receives), y = mean deletion effect on the
    team, size = tickets; the dashed diagonal is where the two agree."""
    top = float(max(df["mean_rollout"].max() if len(df) else 0.0, df["mean_effect"].max() if len(df) else 0.0,
                    0.05))
    points = alt.Chart(df).mark_circle(opacity=0.6, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("mean_rollout:Q", title="attention it receives (mean rollout share)", scale=alt.Scale(domain=[0, top])),
        y=alt.Y("mean_effect:Q", title=f"deleting it lowers p({team}) by (mean)"),
        size=alt.Size("tickets:Q", title="tickets", scale=alt.Scale(range=[12, 600])),
        color=alt.Color("effect minus attention:Q", scale=alt.Scale(scheme="redblue", domainMid=0),
                        title="effect − attention"),
        tooltip=["token:N", alt.Tooltip("tickets:Q", format=","), alt.Tooltip("mean_effect:Q", format=".4f"),
                 alt.Tooltip("median_effect:Q", format=".4f"), alt.Tooltip("mean_rollout:Q", format=".4f"),
                 alt.Tooltip("top_effect_share:Q", format=".1%", title="top-effect token in")],
    )
    diagonal = alt.Chart(pd.DataFrame({"x": [0.0, top], "y": [0.0, top]})).mark_line(
        strokeDash=[4, 4], color="#888888").encode(x="x:Q", y="y:Q")
    return alt.layer(diagonal, points).properties(height=420)
