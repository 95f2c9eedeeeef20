"""The Label issues page in AppTest: for Larkfield's router and a router of odd team names, with and without a
cached out-of-fold result; filters, the export and a pick that reaches the Heads page."""

from __future__ import annotations

import csv
import shutil

import pytest

from dashboard.text import md_escape
from tests.conftest import HEADS, app_test

PAGE = "../pages/label_issues.py"
N_TRAIN = 600


@pytest.fixture
def larkfield(artifacts, tmp_path, monkeypatch):
    """A copy of the shipped router (so its labels/ cache is the test's), read with the first N_TRAIN training
    tickets and the shipped valid split, with the baseline's 3-fold result cached."""
    from ticketnet.labels.run import compute_oof

    folder = tmp_path / "larkfield"
    folder.mkdir()
    for name in ("router.pt", "vocab.json", "router.json"):
        shutil.copy(artifacts.weights.parent / name, folder / name)
    data = tmp_path / "data"
    data.mkdir()
    lines = (artifacts.data / "train.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "train.csv").write_text("".join(lines[:N_TRAIN + 1]), encoding="utf-8")
    for name in ("valid.csv", "test.csv", "teams.txt"):
        shutil.copy(artifacts.data / name, data / name)
    monkeypatch.setenv("TICKETNET_ROUTER", str(folder))
    monkeypatch.delenv("TICKETNET_WEIGHTS", raising=False)
    monkeypatch.setenv("TICKETNET_DATA", str(data))
    monkeypatch.setenv("TICKETNET_ROUTERS", str(tmp_path / "no-routers"))
    compute_oof(folder, "train", 3, None, "baseline", scheduler="synchronous")
    return folder


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_without_a_router_result_the_page_says_the_command(larkfield):
    at = app_test()
    at.switch_page(PAGE).run()
    _ok(at)
    assert at.title[0].value == "Label issues"
    assert any("No out-of-fold result from the **router**" in i.value for i in at.info)
    assert any(f"label-issues --router {larkfield}" in c.value and "--source router" in c.value for c in at.code)


def test_the_baseline_result_ranks_filters_exports_and_picks(larkfield):
    at = app_test()
    at.switch_page(PAGE)
    at.session_state["labels_source"] = "baseline"
    at.run()
    _ok(at)
    assert [m.value for m in at.metric][0] == f"{N_TRAIN}"
    flagged = int(at.metric[1].value.replace(",", ""))
    assert 0 < flagged < N_TRAIN
    table = next(d.value for d in at.dataframe if "suggested_team" in d.value.columns)
    assert len(table) == flagged and table["score"].is_monotonic_increasing
    headers = [h.value for h in at.header]
    assert headers == ["Teams", "Labels to doubt"]
    at.toggle(key="labels_flagged").set_value(False).run()
    table = next(d.value for d in at.dataframe if "suggested_team" in d.value.columns)
    assert len(table) == N_TRAIN
    team = table["given_team"].iloc[0]
    at.selectbox(key="labels_given").set_value(team).run()
    table = next(d.value for d in at.dataframe if "suggested_team" in d.value.columns)
    assert set(table["given_team"]) == {team} and 0 < len(table) < N_TRAIN
    at.slider(key="labels_score").set_value((0.0, 0.5)).run()
    table = next(d.value for d in at.dataframe if "suggested_team" in d.value.columns)
    assert (table["score"] <= 0.5).all()
    assert any(b.label == "Export the relabel queue (CSV)" for b in at.get("download_button"))
    tid = table["ticket_id"].iloc[0]
    at.selectbox(key="labels_pick_id").set_value(tid).run()
    _ok(at)
    assert at.session_state["picked_ticket"] == tid          # a training ticket, found by id
    assert any(md.value.startswith("**Evidence**") for md in at.markdown)
    at.switch_page(HEADS).run()
    _ok(at)
    assert any(md_escape(tid) in md.value for md in at.markdown)


def test_the_relabel_queue_is_safe_and_has_an_empty_decision(larkfield):
    import pandas as pd

    from dashboard.data.labels import relabel_queue

    frame = pd.DataFrame({"ticket_id": ["T-1"], "text": ["=HYPERLINK(1)"], "given_team": ["a"],
                          "suggested_team": ["+b"], "score": [0.01]})
    queue = relabel_queue(frame)
    assert queue.to_dict("records") == [{"ticket_id": "T-1", "text": "'=HYPERLINK(1)", "given_team": "a",
                                         "suggested_team": "'+b", "score": 0.01, "decision": ""}]


@pytest.fixture
def other_env(app_env, other_routers, tmp_path, monkeypatch):
    routers = tmp_path / "routers"
    shutil.copytree(other_routers, routers)
    monkeypatch.setenv("TICKETNET_ROUTERS", str(routers))
    return routers


@pytest.mark.parametrize("name", ["helpdesk", "ops"])
def test_an_other_router_computes_the_baseline_from_the_page(other_env, name):
    at = app_test(router=name)
    at.switch_page(PAGE)
    at.session_state["labels_source"] = "baseline"
    at.run()
    _ok(at)
    button = next(b for b in at.button if b.label == "Compute the baseline's out-of-fold probabilities")
    button.click().run()
    at.run()
    _ok(at)
    assert (other_env / name / "labels" / "oof-baseline-train-k3.parquet").is_file()
    table = next(d.value for d in at.dataframe if "suggested_team" in d.value.columns)
    from ticketnet import Router

    router_teams = set(Router.load(other_env / name / "router.pt").teams)
    assert set(table["given_team"]) <= router_teams and set(table["suggested_team"]) <= router_teams
    n = len(list(csv.DictReader((other_env / name / "data" / "train.csv").open(encoding="utf-8"))))
    assert int(at.metric[0].value.replace(",", "")) == n
