"""The model-quality charts of the Tickets page: the confusion matrix and its teams."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from dashboard.charts.theme import _np, cell_text_color, when


MAX_CONFUSION_TEAMS = 20            # beyond this, the teams with the most tickets and one row/column for the rest


def confusion_teams(confusion, teams: Sequence[str], top: int = MAX_CONFUSION_TEAMS) -> tuple[np.ndarray, list[str]]:
    """The matrix and its team names as drawn: all teams up to `top`, else the `top` − 1 with the most true tickets
    (in the router's order) and "other teams (k)" summing the rest, in rows and columns alike."""
    c = _np(confusion).astype(np.int64)
    if len(teams) <= top:
        return c, list(teams)
    kept = sorted(np.argsort(-c.sum(axis=1), kind="stable")[: top - 1])
    rest = [i for i in range(len(teams)) if i not in set(kept)]
    groups = [[i] for i in kept] + [rest]
    merged = np.array([[c[np.ix_(g, h)].sum() for h in groups] for g in groups])
    return merged, [teams[i] for i in kept] + [f"other teams ({len(rest)})"]


def confusion_frame(confusion, teams: Sequence[str]) -> pd.DataFrame:
    c, names = confusion_teams(confusion, teams)
    rows = []
    for i, t in enumerate(names):
        total = c[i].sum()
        for j, p in enumerate(names):
            rows.append({"true": t, "predicted": p, "count": int(c[i, j]),
                         "share_of_true": float(c[i, j] / total) if total else 0.0, "correct": i == j})
    return pd.DataFrame(rows)


CONFUSION_PARAM = "cell"
CONFUSION_STEP = 56                  # five teams and their labels in about 380 px
CONFUSION_WIDTH_PX = 380             # more teams share this width, down to MIN_CONFUSION_STEP a cell
MIN_CONFUSION_STEP = 26              # a four-digit count in 10 px type still fits


def confusion_step(n_teams: int) -> int:
    return max(MIN_CONFUSION_STEP, min(CONFUSION_STEP, CONFUSION_WIDTH_PX // max(1, n_teams)))


def confusion_chart(confusion, teams: Sequence[str]) -> alt.LayerChart:
    """Confusion matrix (rows true team, columns predicted team) with a click selection named ``cell``.

    In Streamlit, `st.altair_chart(chart, on_select="rerun")` returns the clicked cell as
    ``event.selection.cell == [{"true": ..., "predicted": ...}]``; double-click clears it.
    """
    df = confusion_frame(confusion, teams)
    names = list(dict.fromkeys(df["true"]))
    step = confusion_step(len(names))
    pick = alt.selection_point(name=CONFUSION_PARAM, fields=["true", "predicted"], on="click", clear="dblclick")
    base = alt.Chart().encode(                   # the data on the layer: see `removal_chart`
        x=alt.X("predicted:N", sort=names, title="predicted team",
                  axis=alt.Axis(labelAngle=-35, labelAlign="left", orient="top", labelOverlap=False, labelLimit=90)),
        y=alt.Y("true:N", sort=names, title="true team", axis=alt.Axis(labelOverlap=False, labelLimit=140)),
    )
    cells = base.mark_rect(stroke="white", strokeWidth=1, cursor="pointer").encode(
        color=alt.Color("share_of_true:Q", scale=alt.Scale(scheme="greens", domain=[0, 1]),
                        legend=alt.Legend(title="share of true team", format=".0%", gradientLength=150,
                                          orient="bottom")),
        opacity=when(pick, 1.0, 0.35, alt.OpacityValue),
        tooltip=[alt.Tooltip("true:N"), alt.Tooltip("predicted:N"), alt.Tooltip("count:Q"),
                 alt.Tooltip("share_of_true:Q", format=".1%")],
    ).add_params(pick)
    text = base.mark_text(fontSize=13 if step >= 40 else 10).encode(
        text=alt.Text("count:Q"),
        color=cell_text_color("datum.share_of_true > 0.5"),
    )
    return alt.layer(cells, text, data=df, width=alt.Step(step), height=alt.Step(min(36, step)),
                     title=alt.Title("click a cell to filter the table; double-click to clear", anchor="start",
                                     fontSize=11, fontWeight="normal"))


