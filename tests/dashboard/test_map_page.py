"""The Ticket map page in AppTest: Larkfield's router and routers with 4 and 12 odd team names; a box or a click picks
tickets into the table, a picked row shows its nearest training tickets, every link keeps the router."""

from __future__ import annotations

import hashlib

import pytest

from tests.conftest import ODD_TEAMS, app_test
from tests.dashboard.test_label_issues_page import larkfield  # noqa: F401 - the fixture: a router with a cached result

MAP = "../pages/map.py"


def _ok(at, where: str) -> None:
    assert not at.exception, (where, [e.value for e in at.exception])
    assert not at.error, (where, [e.value for e in at.error])


def _open_map(**query):
    at = app_test(timeout=300, **query).run()
    at.switch_page(MAP).run()
    _ok(at, "map")
    return at


def _stored_map(weights, data, projection: str = "PCA", split: str = "valid"):
    """The map the page drew, read back from the store it wrote ($TICKETNET_CACHE/maps)."""
    from ticketnet import Router, paths
    from ticketnet.ticketmap import MapStore

    return MapStore(paths.cache_dir() / "maps", Router.load(weights), weights).split_map(projection, split,
                                                                                         data / f"{split}.csv")


def _table_key(ids) -> str:
    return "map_table_" + hashlib.sha1("\n".join(ids).encode("utf-8")).hexdigest()[:12]


def _picked(at):
    return next(d.value for d in at.dataframe if "heads" in d.value.columns)


def test_larkfield_box_picks_the_tickets_inside_and_a_row_shows_its_nearest_training_tickets(app_env, artifacts):
    at = _open_map()
    assert at.title[0].value == "Ticket map"
    assert at.segmented_control(key="map_split").options == ["valid", "test", "train sample", "handwritten"]
    # valid has a shipped label-issues result (the baseline's out-of-fold probabilities): its score colours too
    assert [o for o in at.selectbox(key="map_colour").options] == ["true team", "predicted team", "confidence",
                                                                  "misrouted", "label-issue score"]
    assert len(at.get("vega_lite_chart")) == 1
    table = _stored_map(artifacts.weights, artifacts.data)
    assert len(table) == 1_500
    x0, x1 = table["x"].quantile([0.4, 0.6])
    y0, y1 = table["y"].quantile([0.3, 0.7])
    at.session_state["map_valid_PCA"] = {"selection": {"box": {"x": [x1, x0], "y": [y0, y1]}, "click": []}}
    at.run()
    _ok(at, "box")
    want = table[table["x"].between(x0, x1) & table["y"].between(y0, y1)]["ticket_id"].tolist()
    picked = _picked(at)
    assert picked["ticket_id"].tolist() == want and len(want) > 10
    assert picked["heads"].iloc[0] == f"heads?ticket={want[0]}"
    at.session_state[_table_key(want)] = {"selection": {"rows": [2], "columns": []}}
    at.run()
    _ok(at, "row")
    near = next(d.value for d in at.dataframe if "routed_as" in d.value.columns)
    assert len(near) == 10 and near["distance"].is_monotonic_increasing
    assert at.session_state["picked_ticket"] == want[2]
    from ticketnet.data.tickets import load_split

    labels = {r["ticket_id"]: r["team"] for r in load_split(artifacts.data / "train.csv")}
    assert all(labels[t] == team for t, team in zip(near["ticket_id"], near["team"]))
    row = table.set_index("ticket_id").loc[want[2]]
    assert near["agrees"].tolist() == [team == row["team"] for team in near["team"]]


def test_a_colour_change_keeps_the_map_and_misrouted_colours_two_ways(app_env):
    at = _open_map()
    at.selectbox(key="map_colour").select("misrouted").run()
    _ok(at, "misrouted")
    spec = at.get("vega_lite_chart")[0].proto.spec
    assert "misrouted" in spec and "routed right" in spec


@pytest.mark.parametrize("name,teams", [("helpdesk", ODD_TEAMS[:4]), ("ops", ODD_TEAMS)])
def test_a_router_with_odd_team_names_maps_and_links_with_its_router(routers_env, name, teams):
    at = _open_map(router=name)
    assert at.segmented_control(key="map_split").options == ["valid", "test", "train"]
    folder = routers_env / name
    table = _stored_map(folder / "router.pt", folder / "data")
    assert set(table["team"]) <= set(teams) and set(table["predicted"]) <= set(teams)
    clicked = table["ticket_id"].iloc[1]
    at.session_state["map_valid_PCA"] = {"selection": {"box": {}, "click": [{"ticket_id": clicked}]}}
    at.run()
    _ok(at, "click")
    picked = _picked(at)
    assert picked["ticket_id"].tolist() == [clicked]
    assert picked["heads"].iloc[0] == f"heads?ticket={clicked}&router={name}"
    near = next(d.value for d in at.dataframe if "routed_as" in d.value.columns)    # one ticket: shown at once
    assert 0 < len(near) <= 10 and set(near["team"]) <= set(teams)
    assert at.session_state["_router"] == name and at.query_params["router"] == name


def test_umap_on_a_small_router(routers_env):
    at = _open_map(router="helpdesk")
    at.segmented_control(key="map_projection").set_value("UMAP").run()
    _ok(at, "umap")
    folder = routers_env / "helpdesk"
    table = _stored_map(folder / "router.pt", folder / "data", "UMAP")
    assert len(table) > 0 and table[["x", "y"]].notna().all().all()
    spec = at.get("vega_lite_chart")[0].proto.spec
    assert "UMAP 1" in spec


def test_a_label_issues_result_colours_the_map_by_its_score(larkfield):
    from dashboard.data import labels
    from ticketnet.labels import oof as label_oof

    at = _open_map()
    at.segmented_control(key="map_split").set_value("train").run()
    _ok(at, "train")
    assert "label-issue score" in at.selectbox(key="map_colour").options
    at.selectbox(key="map_colour").set_value("label-issue score").run()
    _ok(at, "label quality")
    assert any("Label-issue scores from the baseline out-of-fold probabilities" in c.value.replace("\\", "")
               for c in at.caption)
    # The colours drawn are cleanlab's scores of the cached result, ticket by ticket.
    from ticketnet.labels.issues import rank_issues

    (path,) = label_oof.cached_results(larkfield)
    scores = rank_issues(label_oof.read_cache(path, None)).set_index("ticket_id")["score"]
    spec = at.get("vega_lite_chart")[0].proto
    import json

    drawn = [row for ds in json.loads(spec.spec).get("datasets", {}).values() for row in ds]
    drawn += [row for d in spec.datasets for row in _arrow_rows(d)]
    coloured = {r["ticket_id"]: r["colour"] for r in drawn if "colour" in r and "ticket_id" in r}
    assert len(coloured) == len(scores) == 600 and labels.SOURCES
    assert all(abs(coloured[t] - scores[t]) < 1e-9 for t in scores.index)


def _arrow_rows(dataset) -> list[dict]:
    import pyarrow as pa

    table = pa.ipc.open_stream(dataset.data.data).read_all()
    return table.to_pylist()


def test_an_encoder_fine_tuned_on_a_sample_seeks_neighbours_among_that_sample(monkeypatch):
    from types import SimpleNamespace

    from dashboard.data import model, ticketmap

    card = SimpleNamespace(meta={"train": {"tickets": 3000, "sampled_from": 60000, "seed": 1}})
    monkeypatch.setattr(model, "card", lambda: card)
    monkeypatch.setattr(model, "is_encoder_router", lambda: True)
    assert ticketmap.neighbour_pool() == ("train-finetuned-n3000-seed1", 3000, 75)     # 3,000 at 40 a second
    rows = [{"ticket_id": f"T-{i}", "text": f"text {i}", "team": ("a", "b", "c")[i % 3]} for i in range(90)]
    monkeypatch.setattr(ticketmap, "_rows", lambda split: rows)
    card.meta["train"].update(tickets=30, sampled_from=90)
    from ticketnet.encoder.finetune import stratified_rows

    pool = ticketmap._pool_rows(ticketmap.neighbour_pool()[0])
    assert pool == stratified_rows(rows, 30, 1) and len(pool) == 30          # the very rows it was fine-tuned on
    card.meta["train"].update(tickets=90, sampled_from=90)                    # fine-tuned on all of train
    monkeypatch.setattr(ticketmap, "texts", lambda split: {r["ticket_id"]: r["text"] for r in rows})
    assert ticketmap.neighbour_pool()[:2] == ("train", 90)
    monkeypatch.setattr(model, "is_encoder_router", lambda: False)
    card.meta["train"].update(tickets=30, sampled_from=90)                    # a Tiny router reads all of train
    assert ticketmap.neighbour_pool() == ("train", 90, 1)
