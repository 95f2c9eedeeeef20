"""The Compare page in AppTest: two Larkfield routers, two routers of a 4-team data set, the URL, the empty states."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.compare.routers import helpdesk_routers, larkfield_routers
from tests.conftest import ODD_TEAMS, app_test

COMPARE = "../pages/compare.py"


def _ok(at, where: str = "") -> None:
    assert not at.exception, (where, [e.value for e in at.exception])
    assert not at.error, (where, [e.value for e in at.error])


def _open(**query):
    at = app_test(timeout=240, **query)
    at.switch_page(COMPARE).run()
    return at


def _metric(at, label: str):
    return next(m for m in at.metric if m.label == label)


def _md(text: str) -> str:
    """Streamlit Markdown as the reader sees it (the page escapes every special character)."""
    return text.replace("\\", "")


# -- routers -------------------------------------------------------------------------------------------------------------------
@pytest.fixture
def larkfield_env(app_env, larkfield_retrain, tmp_path, monkeypatch) -> Path:
    """The shipped router (the default, `larkfield`) and the retrain as routers/retrain: the same splits."""
    root = larkfield_routers(larkfield_retrain, tmp_path / "routers")
    monkeypatch.setenv("TICKETNET_ROUTERS", str(root))
    return root


@pytest.fixture(scope="module")
def helpdesk_pair(other_routers, tmp_path_factory) -> Path:
    return helpdesk_routers(other_routers, tmp_path_factory.mktemp("compare_routers"))


@pytest.fixture
def helpdesk_env(app_env, helpdesk_pair, monkeypatch) -> Path:
    monkeypatch.setenv("TICKETNET_ROUTERS", str(helpdesk_pair))
    return helpdesk_pair


def _routed(weights: Path, split_csv: Path):
    """A router's routed table of a split, straight from the library (stored predictions, else routed)."""
    from ticketnet.compare import routed_split

    return routed_split(weights.parent, str(split_csv))


# -- two Larkfield routers --------------------------------------------------------------------------------------------------
def test_two_larkfield_routers_show_the_summary_flips_and_deltas(larkfield_env, app_env):
    at = _open(a="larkfield", b="retrain", split="test")
    _ok(at)
    test_csv = app_env.data / "test.csv"
    a, b = _routed(app_env.weights, test_csv), _routed(larkfield_env / "retrain" / "router.pt", test_csv)
    b = b.set_index("ticket_id").loc[a["ticket_id"]].reset_index()
    assert float(_metric(at, "accuracy, A · larkfield").value) == pytest.approx(a["correct"].mean(), abs=6e-4)
    assert float(_metric(at, "accuracy, B · retrain").value) == pytest.approx(b["correct"].mean(), abs=6e-4)
    fixed = int((~a["correct"] & b["correct"]).sum())
    broken = int((a["correct"] & ~b["correct"]).sum())
    both = int((~a["correct"] & ~b["correct"] & (a["predicted"] != b["predicted"])).sum())
    assert _metric(at, "McNemar's exact test").proto.delta == f"B fixed {fixed}, broke {broken}"
    table = next(d.value for d in at.dataframe if "kind" in d.value.columns)
    assert len(table) == fixed + broken + both and fixed + broken > 0
    assert table["kind"].value_counts().to_dict() == {k: v for k, v in (("fixed", fixed), ("broken", broken),
                                                                         ("both wrong", both)) if v}
    verdict = _md(at.info[0].value)
    assert verdict.startswith(("B routes significantly", "No significant difference")) and "McNemar" in verdict
    # One format for the p: the card says what the verdict says (it read "p = 0.0001" under "p = 5.4e-05").
    p = _metric(at, "McNemar's exact test").value
    assert p.startswith("p = ") and f"McNemar's exact test {p} on" in verdict
    # Each count agrees with its verb ("1 are wrong in both" before).
    flips = next(c.value for c in at.caption if c.value.startswith("B fixed"))
    assert flips.startswith(f"B fixed {fixed:,} ticket{'' if fixed == 1 else 's'} (A wrong, B right), broke {broken:,}")
    assert f"; {both:,} {'is' if both == 1 else 'are'} wrong in both with different teams." in flips
    assert len(at.get("vega_lite_chart")) >= 1                  # the per-team deltas
    assert at.query_params["a"] == "larkfield" and at.query_params["b"] == "retrain"
    assert at.query_params["split"] == "test" and "ticket" not in at.query_params
    assert at.session_state["_router"] == "larkfield" and "router" not in at.query_params     # the sidebar's own

    team = table["team"].iloc[0]
    at.selectbox(key="cmp_team").select(team).run()
    _ok(at, "team filter")
    shown = next(d.value for d in at.dataframe if "kind" in d.value.columns)
    assert set(shown["team"]) == {team} and len(shown) == int((table["team"] == team).sum())


def test_a_flip_opens_side_by_side_and_the_url_round_trips(larkfield_env, app_env):
    at = _open(a="larkfield", b="retrain", split="test")
    table = next(d.value for d in at.dataframe if "kind" in d.value.columns)
    flip = table.iloc[0]
    at = _open(a="larkfield", b="retrain", split="test", ticket=flip["ticket_id"])
    _ok(at, "flip")
    assert at.query_params["ticket"] == flip["ticket_id"]
    assert _metric(at, "A · larkfield: prediction").value == flip["predicted_a"]
    assert _metric(at, "B · retrain: prediction").value == flip["predicted_b"]
    assert _metric(at, "B · retrain: prediction").proto.delta.startswith(f"confidence {flip['confidence_b']:.3f}")
    assert flip["text"] in [t.value for t in at.text]                 # the ticket as plain text
    urls = [b.proto.url for b in at.link_button]
    assert f"heads?router=larkfield&ticket={flip['ticket_id']}" in urls
    assert f"interpretation?router=retrain&ticket={flip['ticket_id']}" in urls
    tau = _metric(at, "Kendall τ of the deletions").value
    assert tau == "n/a" or -1 <= float(tau) <= 1
    # the same head and query row in both heatmaps, chosen once
    at.segmented_control(key="cmp_head").set_value(3).run()
    at.segmented_control(key="cmp_block").set_value(2).run()
    _ok(at, "head")
    titles = [json.loads(c.proto.spec).get("title", {}) for c in at.get("vega_lite_chart")]
    heat = [t.get("text") for t in titles if isinstance(t, dict) and "block 2 · head 3" in str(t.get("text"))]
    assert heat == ["A · larkfield · block 2 · head 3", "B · retrain · block 2 · head 3"]
    row_box = at.selectbox(key=f"cmp_row_{flip['ticket_id']}")
    row_box.set_value(len(row_box.options) - 1).run()
    _ok(at, "row")
    link = dict(at.query_params)
    assert link["head"] == "3" and link["block"] == "2" and link["row"] == str(len(row_box.options) - 1)

    again = _open(**link)                                                # a pasted link opens the same view
    _ok(again, "pasted link")
    assert again.session_state["cmp_ticket"] == flip["ticket_id"]
    assert again.segmented_control(key="cmp_head").value == 3 and again.segmented_control(key="cmp_block").value == 2
    assert again.selectbox(key=f"cmp_row_{flip['ticket_id']}").value == len(row_box.options) - 1
    assert dict(again.query_params) == link


def test_per_head_divergence_beside_importance(larkfield_env, app_env, private_cache):
    import pandas as pd

    at = _open(a="larkfield", b="retrain", split="handwritten")
    _ok(at)
    assert any("Jensen–Shannon" in c.value for c in at.caption)
    at.button(key="cmp_divergence").click().run()
    _ok(at, "divergence")
    stored = pd.read_parquet(next((private_cache / "compare").glob("heads-handwritten-*.parquet")))
    assert len(stored) == 8 and stored["jsd"].between(0, math.log(2)).all() and stored["jsd"].gt(0).all()
    assert (stored["tickets"] == 390).all()
    assert any("jsd" in c.proto.spec for c in at.get("vega_lite_chart"))
    assert any(_md(c.value).startswith("Most changed: block") for c in at.caption)
    at.button(key="cmp_importance").click().run()
    _ok(at, "importance")
    spec = next(json.loads(c.proto.spec) for c in at.get("vega_lite_chart")
                if "accuracy_drop" in c.proto.spec)
    assert len(spec["hconcat"]) == 2
    assert not any(b.key == "cmp_importance" for b in at.button)      # both computed, kept for the Heads page too


# -- two routers of a 4-team data set ---------------------------------------------------------------------------------------
def test_two_helpdesk_routers_render_with_their_own_teams(helpdesk_env):
    from ticketnet import load_split

    at = _open(a="helpdesk", b="helpdesk_b", split="test")
    _ok(at)
    assert at.selectbox(key="cmp_split").options == ["valid", "test", "train"]
    team_box = at.selectbox(key="cmp_team")
    assert team_box.options == ["every team", *sorted(ODD_TEAMS[:4])]
    rows = load_split(helpdesk_env / "helpdesk" / "data" / "test.csv")
    at = _open(a="helpdesk", b="helpdesk_b", split="test", ticket=rows[0]["ticket_id"])
    _ok(at, "ticket")
    assert _metric(at, "A · helpdesk: prediction").value in ODD_TEAMS[:4]
    assert at.segmented_control(key="cmp_block").options == ["1"] or at.segmented_control(key="cmp_block").options == [1]
    at.button(key="cmp_divergence").click().run()
    _ok(at, "divergence")
    assert any(_md(c.value).startswith("Most changed: block 1") for c in at.caption)


def test_routers_of_other_shapes_say_so_in_one_line(helpdesk_env):
    at = _open(a="helpdesk", b="helpdesk_wide", split="valid")
    _ok(at)
    lines = [_md(c.value) for c in at.caption if "different shapes" in _md(c.value)]
    assert lines == ["The routers have different shapes (A: 1 block(s) of 4 heads, B: 2 block(s) of 2 heads), so "
                     "their heads cannot be paired; per-head comparison needs routers of the same shape."]
    assert not any(b.key == "cmp_divergence" for b in at.button)


# -- empty states, one line each ----------------------------------------------------------------------------------------------
def _one_info(at, *words: str) -> str:
    _ok(at)
    assert len(at.info) == 1, [i.value for i in at.info]
    text = _md(at.info[0].value)
    for w in words:
        assert w in text, text
    return text


def test_only_one_router_says_how_to_train_a_second(app_env, tmp_path, monkeypatch):
    import shutil

    from ticketnet.paths import weights_dir

    # A default router of its own, so the routers shipped beside Larkfield's are not listed with it.
    own = tmp_path / "own"
    shutil.copytree(weights_dir(), own, ignore=lambda folder, names: [n for n in names if n == "larkfield-minilm"])
    monkeypatch.setenv("TICKETNET_ROUTER", str(own))
    monkeypatch.setenv("TICKETNET_ROUTERS", str(tmp_path / "none"))
    _one_info(_open(), "Only one router", "python -m ticketnet train --out routers/NAME")


def test_the_same_router_twice(helpdesk_env):
    _one_info(_open(a="helpdesk", b="helpdesk"), "both helpdesk", "pick another router as B")


def test_routers_without_a_shared_split(helpdesk_env):
    _one_info(_open(a="helpdesk", b="ops"), "share no split")


def test_routers_with_disjoint_teams(helpdesk_env):
    _one_info(_open(a="helpdesk", b="renamed", split="valid"), "cannot be compared on the valid split",
              "share no team")


def test_a_link_to_an_unknown_router_or_ticket_falls_back_readably(larkfield_env):
    at = _open(a="nobody", b="retrain", split="nope", ticket="<b>T-0</b>")
    _ok(at)
    assert at.selectbox(key="cmp_a").value == "larkfield" and at.selectbox(key="cmp_split").value == "test"
    assert any(_md(w.value) == "Ticket <b>T-0</b> is not in the test split of these routers: no ticket is shown side "
               "by side." for w in at.warning)
    said = " ".join(_md(w.value) for w in at.warning)
    assert "a='nobody' is not a router on this server" in said and "split='nope' is not one of" in said
    assert "ticket" not in at.query_params


def test_the_page_opens_on_the_sidebars_router_against_one_with_the_same_teams(larkfield_env, app_env):
    at = app_test(timeout=240, router="retrain").run()          # the sidebar reads the retrain
    at.switch_page(COMPARE).run()
    _ok(at)
    assert at.selectbox(key="cmp_a").value == "retrain" and at.selectbox(key="cmp_b").value == "larkfield"
    assert at.query_params["a"] == "retrain" and at.query_params["b"] == "larkfield"   # a link names its pair


def test_the_default_pair_prefers_a_router_with_the_same_teams(routers_env, monkeypatch):
    from dashboard.data import compare

    names = compare.names()
    assert {"larkfield", "helpdesk", "ops"} <= set(names)
    a, b = compare.default_pair(names, "helpdesk")
    assert a == "helpdesk" and b != "helpdesk"                  # no other router has helpdesk's teams: the next one
    assert compare.default_pair(names, "nope")[0] == names[0]
