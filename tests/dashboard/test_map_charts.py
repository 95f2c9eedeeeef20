"""The ticket map's chart: one point per ticket, colour by any column it has, odd team names kept as values, many
teams legible, selections that pick exactly the tickets under them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dashboard.charts import ticketmap as charts
from tests.conftest import ODD_TEAMS


def _table(n: int, teams, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    team = rng.choice(list(teams), size=n)
    predicted = np.where(rng.random(n) < 0.8, team, rng.choice(list(teams), size=n))
    return pd.DataFrame({"ticket_id": [f"T-{i}" for i in range(n)], "text": ["t"] * n, "team": team,
                         "predicted": predicted, "confidence": rng.random(n).round(4),
                         "correct": team == predicted, "x": rng.normal(size=n).astype(np.float32),
                         "y": rng.normal(size=n).astype(np.float32)})


def _by_label(label: str) -> charts.Colouring:
    return next(c for c in charts.COLOURINGS if c.label == label)


@pytest.mark.parametrize("label", ["true team", "predicted team", "confidence", "misrouted"])
def test_every_colouring_builds_a_valid_spec_with_odd_team_names(label):
    table = _table(300, ODD_TEAMS)
    frame = charts.map_frame(table, _by_label(label), ODD_TEAMS)
    spec = charts.map_chart(frame, _by_label(label), ODD_TEAMS, "UMAP").to_dict()       # validates the schema
    assert spec["mark"]["type"] == "circle"
    fields = {e.get("field") for e in spec["encoding"].values() if isinstance(e, dict)}
    assert fields <= {"x", "y", "colour", None}, fields                  # no team name is ever a field
    assert {p["name"] for p in spec["params"]} == {charts.BOX, charts.CLICK}
    if label.endswith("team"):
        assert spec["encoding"]["color"]["scale"]["domain"] == list(ODD_TEAMS)
        data = next(iter(spec["datasets"].values()))
        assert {r["colour"] for r in data} <= set(ODD_TEAMS)
        assert "<b>bold</b>" in json.dumps(spec)                         # a value, drawn as text by Vega


def test_the_label_issue_colouring_appears_only_with_its_column():
    table = _table(50, ODD_TEAMS[:4])
    assert [c.label for c in charts.colourings(table)] == ["true team", "predicted team", "confidence", "misrouted"]
    table["label_quality"] = np.linspace(0, 1, 50)
    assert charts.colourings(table)[-1].label == "label-issue score"
    frame = charts.map_frame(table, _by_label("label-issue score"), ODD_TEAMS[:4])
    assert np.allclose(frame["colour"], table["label_quality"])
    charts.map_chart(frame, _by_label("label-issue score"), ODD_TEAMS[:4], "PCA").to_dict()


def test_many_teams_keep_nineteen_hues_and_one_grey_with_a_line_that_says_so():
    teams = tuple(f"team.{i}:x" for i in range(200))
    rng = np.random.default_rng(3)
    table = _table(4_000, teams)
    table["team"] = [teams[min(199, int(v))] for v in rng.exponential(30, size=4_000)]   # a few big teams
    colouring = _by_label("true team")
    frame = charts.map_frame(table, colouring, teams)
    domain, other = charts.team_domain(table["team"], teams)
    assert len(domain) == charts.TEAM_COLOURS - 1 and other.endswith("other teams")
    biggest = set(table["team"].value_counts().index[:19])
    assert set(domain) == biggest
    assert set(frame["colour"]) == set(domain) | {other}
    scale = charts.map_chart(frame, colouring, teams, "PCA").to_dict()["encoding"]["color"]["scale"]
    assert scale["domain"][-1] == other and scale["range"][-1] == charts.OTHER_COLOUR
    assert len(set(scale["range"])) == charts.TEAM_COLOURS
    assert "share the grey" in charts.legend_note(frame, colouring, teams)
    twelve = charts.map_frame(_table(500, ODD_TEAMS), colouring, ODD_TEAMS)
    assert charts.legend_note(twelve, colouring, ODD_TEAMS) is None


def test_the_frame_is_cut_to_a_seeded_sample_beyond_the_limit_and_says_so():
    table = _table(2_500, ODD_TEAMS[:4])
    frame = charts.map_frame(table, _by_label("confidence"), ODD_TEAMS[:4], limit=1_000)
    again = charts.map_frame(table, _by_label("confidence"), ODD_TEAMS[:4], limit=1_000)
    assert len(frame) == 1_000 and frame["ticket_id"].tolist() == again["ticket_id"].tolist()
    assert charts.sampled_note(1_000, 2_500).startswith("Drawn: a seeded sample of 1,000 of the 2,500")
    assert charts.sampled_note(2_500, 2_500) is None


def test_a_box_or_clicks_pick_exactly_the_tickets_under_them():
    frame = charts.map_frame(_table(400, ODD_TEAMS[:4]), _by_label("true team"), ODD_TEAMS[:4])
    box = {"x": [0.5, -0.2], "y": [-1.0, 0.3]}                         # dragged right to left: any order
    ids = charts.selected_ids(frame, {"selection": {charts.BOX: box, charts.CLICK: []}})
    inside = frame[(frame["x"] >= -0.2) & (frame["x"] <= 0.5) & (frame["y"] >= -1.0) & (frame["y"] <= 0.3)]
    assert ids == inside["ticket_id"].tolist() and 0 < len(ids) < 400
    clicked = [{"ticket_id": "T-7"}, {"ticket_id": "T-3"}]
    assert charts.selected_ids(frame, {"selection": {charts.CLICK: clicked, charts.BOX: box}}) == ["T-3", "T-7"]
    assert charts.selected_ids(frame, None) == []
    assert charts.selected_ids(frame, {"selection": {charts.BOX: {}, charts.CLICK: []}}) == []


def test_the_picked_ticket_is_ringed_and_named_where_the_map_draws_it():
    table = _table(40, ODD_TEAMS)
    frame = charts.map_frame(table, _by_label("true team"), ODD_TEAMS)
    picked = str(frame["ticket_id"].iloc[3])
    spec = charts.map_chart(frame, _by_label("true team"), ODD_TEAMS, "PCA", picked).to_dict()
    points, ring, halo, name = spec["layer"]
    params = spec.get("params", []) + points.get("params", [])
    assert {p["name"] for p in params} == {charts.BOX, charts.CLICK}               # the selections still work
    assert ring["mark"]["filled"] is False and name["encoding"]["text"]["field"] == "ticket_id"
    # The red name sits on a white halo of the same text, drawn first: readable on the dark theme and over points.
    assert halo["encoding"]["text"] == name["encoding"]["text"] and halo["data"] == name["data"]
    assert halo["mark"]["stroke"] == halo["mark"]["color"] == "#ffffff" and halo["mark"]["strokeWidth"] >= 3
    assert name["mark"]["color"] == charts.PICKED_COLOUR and "stroke" not in name["mark"]
    assert {k: halo["mark"][k] for k in ("dx", "dy", "fontSize", "fontWeight", "align")} == \
        {k: name["mark"][k] for k in ("dx", "dy", "fontSize", "fontWeight", "align")}
    assert [r["ticket_id"] for r in spec["datasets"][ring["data"]["name"]]] == [picked]
    assert "layer" not in charts.map_chart(frame, _by_label("true team"), ODD_TEAMS, "PCA", "T-not-here").to_dict()
