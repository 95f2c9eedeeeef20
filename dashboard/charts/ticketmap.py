"""The ticket map: one point per ticket at its 2-D projection, coloured by a column (DataFrames in, alt.Chart out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from dashboard.charts.theme import FRAME_COLOR
from ticketnet.ticketmap.projection import MAP_SEED, seeded_sample

BOX = "box"                      # the interval selection's parameter name (drag a rectangle)
CLICK = "click"                  # the point selection's (click a point; shift-click adds one)
DRAW_LIMIT = 20_000              # points drawn; beyond, a seeded sample (the page says so)
MAP_HEIGHT = 440
LEGEND_LABEL_PX = 130
TEAM_COLOURS = 20                # distinct hues a legend can show legibly (Tableau 20); more teams share "other"
OTHER_COLOUR = "#9e9e9e"
ROUTING = {True: "routed right", False: "misrouted"}


@dataclass(frozen=True)
class Colouring:
    label: str                   # what the picker says
    column: str                  # the map table's column it reads
    kind: str                    # "team" (nominal, one hue per team), "flag" (nominal, two hues) or "score" (0..1)
    title: str                   # the legend's title


COLOURINGS = (
    Colouring("true team", "team", "team", "true team"),
    Colouring("predicted team", "predicted", "team", "predicted team"),
    Colouring("confidence", "confidence", "score", "confidence"),
    Colouring("misrouted", "correct", "flag", "routing"),
    # Present once a label-issues result is joined onto the map by ticket_id (a score per ticket, low = doubtful).
    Colouring("label-issue score", "label_quality", "score", "label quality"),
)


def colourings(table: pd.DataFrame) -> list[Colouring]:
    """The colourings the table has a column for, in COLOURINGS order."""
    return [c for c in COLOURINGS if c.column in table.columns]


def team_domain(values: pd.Series, teams: Sequence[str], limit: int = TEAM_COLOURS) -> tuple[list[str], str | None]:
    """(the legend's values, the name of the shared "other" entry or None): every team when they fit in `limit`
    hues, else the `limit` − 1 with the most tickets here (in the router's team order) and one grey "other" entry."""
    counts = values.value_counts()
    seen = set(counts.index)
    present = [t for t in teams if t in seen] + sorted(seen - set(teams))
    if len(present) <= limit:
        return present, None
    kept = set(counts.sort_values(ascending=False, kind="stable").index[: limit - 1])
    return [t for t in present if t in kept], f"{len(present) - len(kept)} other teams"


def map_frame(table: pd.DataFrame, colouring: Colouring, teams: Sequence[str], limit: int = DRAW_LIMIT,
              seed: int = MAP_SEED) -> pd.DataFrame:
    """The columns the chart draws (ticket_id, x, y, team, predicted, confidence, routing, colour), at most `limit`
    rows (a seeded sample beyond); team names stay values, never field names, whatever characters they hold."""
    df = table if len(table) <= limit else table.iloc[seeded_sample(len(table), limit, seed)]
    out = pd.DataFrame({"ticket_id": df["ticket_id"].to_numpy(), "x": df["x"].to_numpy(), "y": df["y"].to_numpy(),
                        "team": df["team"].to_numpy(), "predicted": df["predicted"].to_numpy(),
                        "confidence": df["confidence"].to_numpy(),
                        "routing": np.where(df["correct"].to_numpy(dtype=bool), ROUTING[True], ROUTING[False])})
    if colouring.kind == "team":
        domain, other = team_domain(out[colouring.column], teams)
        out["colour"] = out[colouring.column] if other is None else out[colouring.column].where(
            out[colouring.column].isin(domain), other)
    elif colouring.kind == "flag":
        out["colour"] = out["routing"]
    else:
        out["colour"] = pd.to_numeric(df[colouring.column], errors="coerce").to_numpy()
    return out


def _colour(frame: pd.DataFrame, colouring: Colouring, teams: Sequence[str]) -> alt.Color:
    if colouring.kind == "score":
        return alt.Color("colour:Q", title=colouring.title, scale=alt.Scale(scheme="viridis", domain=[0, 1]),
                         legend=alt.Legend(orient="top", direction="horizontal", gradientLength=200))
    if colouring.kind == "flag":
        return alt.Color("colour:N", title=colouring.title,
                         scale=alt.Scale(domain=[ROUTING[True], ROUTING[False]], range=["#4c78a8", "#e45756"]),
                         legend=alt.Legend(orient="top"))
    domain, other = team_domain(frame[colouring.column], teams)
    scheme = "tableau10" if len(domain) <= 10 else "tableau20"
    scale = alt.Scale(domain=domain, scheme=scheme) if other is None else alt.Scale(
        domain=[*domain, other], range=[*_TABLEAU20[:len(domain)], OTHER_COLOUR])
    # Above the plot, so the teams are read with the points even where the page is scrolled to the map's top; three
    # columns of 130 px labels fit the 540 px column of a 1000 px window (four ran past its right edge).
    return alt.Color("colour:N", title=colouring.title, scale=scale,
                     legend=alt.Legend(orient="top", columns=min(3, len(domain) + (other is not None)),
                                       labelLimit=LEGEND_LABEL_PX, symbolLimit=TEAM_COLOURS + 1))


# Tableau 20 (Vega's "tableau20" scheme), so the kept teams get its hues and "other" a grey of its own.
_TABLEAU20 = ("#4c78a8", "#9ecae9", "#f58518", "#ffbf79", "#54a24b", "#88d27a", "#b79a20", "#f2cf5b", "#439894",
              "#83bcb6", "#e45756", "#ff9d98", "#79706e", "#bab0ac", "#d67195", "#fcbfd2", "#b279a2", "#d6a5c9",
              "#9e765f", "#d8b5a5")


def point_size(n: int) -> int:
    """A point's area in px²: small enough that 20,000 points still show their clusters, larger for a small split."""
    return 60 if n <= 500 else 30 if n <= 5_000 else 14


PICKED_COLOUR = FRAME_COLOR       # the red that frames the picked query row on Heads: seen on light and dark
# The picked ticket's name is drawn on a white halo: red text alone was nearly unreadable on the dark theme's
# background (about 3.8:1) and over the points; on white it reads 5:1 in either theme, over anything.
PICKED_HALO = "#ffffff"
PICKED_HALO_PX = 4


def map_chart(frame: pd.DataFrame, colouring: Colouring, teams: Sequence[str], projection: str,
              picked: str | None = None) -> alt.Chart | alt.LayerChart:
    """Every ticket of `frame` (map_frame's) as a point; drag a box or click a point (shift-click for more) to pick
    tickets: the chart's selections are BOX (over x and y) and CLICK (by ticket_id). The `picked` ticket (the one
    every page shows), where the frame holds it, is ringed and named."""
    box = alt.selection_interval(name=BOX, encodings=["x", "y"])
    click = alt.selection_point(name=CLICK, fields=["ticket_id"], on="click", clear="dblclick")
    dot = point_size(len(frame))
    size = alt.when(click, empty=False).then(alt.value(dot * 5)).otherwise(alt.value(dot))
    points = _points(frame, colouring, teams, projection, box, click, size)
    here = frame[frame["ticket_id"] == picked] if picked else frame.iloc[:0]
    if not len(here):
        return points
    xy = dict(x="x:Q", y="y:Q")
    ring = alt.Chart(here).mark_point(shape="circle", size=dot * 9, filled=False, strokeWidth=2.5,
                                      color=PICKED_COLOUR).encode(**xy)
    text = dict(align="left", dx=9, dy=-9, fontWeight="bold", fontSize=12)
    # Vega strokes a text mark over its fill, so the halo is a layer of its own under the name.
    halo = alt.Chart(here).mark_text(**text, color=PICKED_HALO, stroke=PICKED_HALO, strokeWidth=PICKED_HALO_PX,
                                     strokeJoin="round").encode(**xy, text="ticket_id:N")
    name = alt.Chart(here).mark_text(**text, color=PICKED_COLOUR).encode(**xy, text="ticket_id:N")
    return alt.layer(points, ring, halo, name)


def _points(frame, colouring, teams, projection, box, click, size) -> alt.Chart:
    return alt.Chart(frame).mark_circle(opacity=0.75).encode(
        x=alt.X("x:Q", title=f"{projection} 1", axis=alt.Axis(labels=False, ticks=False, grid=False)),
        y=alt.Y("y:Q", title=f"{projection} 2", axis=alt.Axis(labels=False, ticks=False, grid=False)),
        color=_colour(frame, colouring, teams),
        size=size,
        tooltip=[alt.Tooltip("ticket_id:N", title="ticket"), alt.Tooltip("team:N", title="true team"),
                 alt.Tooltip("predicted:N", title="predicted"),
                 alt.Tooltip("confidence:Q", title="confidence", format=".2f")],
    ).add_params(box, click).properties(height=MAP_HEIGHT)


def selected_ids(frame: pd.DataFrame, event) -> list[str]:
    """The ticket ids the chart's selection event picks: the clicked points, else those inside the dragged box (x
    and y ranges, inclusive), in the frame's order; [] for no event or an empty selection."""
    try:
        chosen = event["selection"]
        clicks, box = chosen.get(CLICK) or [], chosen.get(BOX) or {}
    except (KeyError, TypeError, AttributeError):
        return []
    if clicks:
        wanted = {str(c.get("ticket_id")) for c in clicks if isinstance(c, Mapping)}
        return [t for t in frame["ticket_id"] if t in wanted]
    if isinstance(box, Mapping) and len(box.get("x") or ()) == 2 and len(box.get("y") or ()) == 2:
        (x0, x1), (y0, y1) = sorted(box["x"]), sorted(box["y"])
        inside = frame["x"].between(x0, x1) & frame["y"].between(y0, y1)
        return frame.loc[inside, "ticket_id"].tolist()
    return []


def legend_note(frame: pd.DataFrame, colouring: Colouring, teams: Sequence[str]) -> str | None:
    """A line for the page when the teams are more than the hues: which share the grey, and how to tell them."""
    if colouring.kind != "team":
        return None
    domain, other = team_domain(frame[colouring.column], teams)
    if other is None:
        return None
    return (f"{len(domain)} teams with the most tickets here have a colour each; the {other} share the grey "
            "(hover a point for its team).")


def sampled_note(shown: int, total: int) -> str | None:
    """The line that says the map is a sample, or None when every ticket is drawn."""
    if shown >= total:
        return None
    return f"Drawn: a seeded sample of {shown:,} of the {total:,} tickets (the map is fitted on this sample)."
