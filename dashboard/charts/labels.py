"""Charts of the Label issues page (pure: cleanlab's tables as DataFrames in, alt.Chart out)."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from dashboard.charts.theme import cell_text_color
from dashboard.charts.quality import confusion_step

QUALITY_PX = 420                          # the per-team bars: fits a 1000 px window's main column


def overlap_frame(pairs: pd.DataFrame, teams: Sequence[str]) -> pd.DataFrame:
    """Every ordered pair of teams with the tickets cleanlab estimates overlap between them (the matrix is
    symmetric: a pair is one cell above and one below the diagonal; the diagonal is empty)."""
    found = {}
    for r in pairs.itertuples(index=False):
        found[(r.team_a, r.team_b)] = found[(r.team_b, r.team_a)] = (int(r.tickets), float(r.joint))
    rows = [{"team": a, "other team": b, "tickets": found.get((a, b), (0, 0.0))[0],
             "joint": found.get((a, b), (0, 0.0))[1]} for a in teams for b in teams if a != b]
    return pd.DataFrame(rows, columns=["team", "other team", "tickets", "joint"])


def overlap_chart(pairs: pd.DataFrame, teams: Sequence[str]) -> alt.LayerChart:
    """The overlapping pairs as a matrix: darker where more tickets are estimated to belong to either team."""
    df = overlap_frame(pairs, teams)
    names = list(teams)
    step = confusion_step(len(names))
    top = max(1, int(df["tickets"].max()) if len(df) else 1)
    base = alt.Chart(df).encode(
        x=alt.X("other team:N", sort=names, title=None,
                axis=alt.Axis(labelAngle=-35, labelAlign="left", orient="top", labelOverlap=False, labelLimit=90)),
        y=alt.Y("team:N", sort=names, title=None, axis=alt.Axis(labelOverlap=False, labelLimit=140)),
    )
    cells = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color("tickets:Q", scale=alt.Scale(scheme="oranges", domain=[0, top]),
                        legend=alt.Legend(title="overlapping tickets", gradientLength=150, orient="bottom")),
        tooltip=[alt.Tooltip("team:N"), alt.Tooltip("other team:N"), alt.Tooltip("tickets:Q", format=","),
                 alt.Tooltip("joint:Q", format=".2%", title="share of all tickets")],
    )
    text = base.mark_text(fontSize=13 if step >= 40 else 9).encode(
        text=alt.Text("tickets:Q", format=","),
        color=cell_text_color(f"datum.tickets > {top / 2}"),
    )
    return alt.layer(cells, text).properties(width=alt.Step(step), height=alt.Step(min(36, step)))


def quality_frame(quality: pd.DataFrame) -> pd.DataFrame:
    return quality[["team", "label_quality", "label_noise", "label_issues", "tickets"]].sort_values(
        "label_quality", kind="stable").reset_index(drop=True)


def quality_chart(quality: pd.DataFrame) -> alt.Chart:
    """Each team's estimated share of wrong labels (cleanlab: 1 − label quality), worst first, as bars from zero:
    a bar's length is the share, so a team with twice the wrong labels has twice the bar (an axis cut at 88 % drew
    90.5 % quality as a third of 94 %)."""
    df = quality_frame(quality).assign(wrong_share=lambda d: 1.0 - d["label_quality"])
    top = max(0.01, float(df["wrong_share"].max()) * 1.15) if len(df) else 0.01
    return alt.Chart(df).mark_bar(color="#e45756").encode(
        x=alt.X("wrong_share:Q", title="estimated share of wrong labels (1 − label quality)",
                scale=alt.Scale(domain=[0, top], zero=True), axis=alt.Axis(format=".1~%", tickCount=4)),
        y=alt.Y("team:N", sort=df["team"].tolist(), title=None, axis=alt.Axis(labelOverlap=False, labelLimit=140)),
        tooltip=[alt.Tooltip("team:N"), alt.Tooltip("label_quality:Q", format=".1%", title="label quality"),
                 alt.Tooltip("wrong_share:Q", format=".1%", title="estimated wrong share"),
                 alt.Tooltip("label_issues:Q", format=",", title="estimated wrong labels"),
                 alt.Tooltip("tickets:Q", format=",")],
    ).properties(width=QUALITY_PX, height=alt.Step(22 if len(df) > 8 else 26))
