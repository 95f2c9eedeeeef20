"""The Corpus page in AppTest: a scan opens with its summary and reliance chart, filters query the tickets, a pick
reaches the Heads page."""

from __future__ import annotations

import json
import shutil

import pytest
from streamlit.proto.Block_pb2 import Block as BlockProto
from streamlit.testing.v1.element_tree import Block

from dashboard.charts import corpus as corpus_charts
from dashboard.text import md_escape
from tests.conftest import HEADS, app_test
from ticketnet.corpus import query

CORPUS = "../pages/corpus.py"
FILTER_KEYS = ("corpus_token", "corpus_pred", "corpus_true", "corpus_misrouted", "corpus_conf", "corpus_disagree",
               "corpus_sort")


@pytest.fixture
def scans(full_scan, tmp_path, monkeypatch):
    """The full-level test scan as the only scan found, named "shipped"."""
    shutil.copytree(full_scan, tmp_path / "scans" / "shipped")
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))
    return query.open_scan(tmp_path / "scans" / "shipped")


def nodes(node, parents=()):
    """(node, its enclosing blocks, innermost last) for everything under `node`."""
    for child in node.children.values():
        yield child, parents
        if isinstance(child, Block):
            yield from nodes(child, (*parents, child))


def wrapping_row(block) -> bool:
    fc = block.proto.flex_container
    return (block.proto.HasField("flex_container") and fc.wrap
            and BlockProto.FlexContainer.Direction.Name(fc.direction) == "HORIZONTAL")


def url(at, name):
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def matching(at) -> int:
    caption = next(c.value for c in at.caption if "tickets match" in c.value)
    return int(caption.split(" of ")[0].replace(",", ""))


def test_the_corpus_page_opens_a_scan_filters_and_picks(app_env, full_scan, tmp_path, monkeypatch):
    shutil.copytree(full_scan, tmp_path / "scans" / "shipped")
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))
    at = app_test()
    at.switch_page(CORPUS).run()
    assert not at.exception and not at.error
    assert at.title[0].value == "Corpus"
    assert [m.value for m in at.metric][:2] == ["240", f"{at.metric[1].value}"]
    assert any("level **full**" in c.value for c in at.caption)
    headers = [h.value for h in at.header]
    assert "What the router relies on, per team" in headers and "Tickets" in headers
    assert any("far below" in md.value.lower() for md in at.markdown)
    before = next(c.value for c in at.caption if "tickets match" in c.value)
    assert before.startswith("240 of 240")

    at.text_input(key="corpus_token").set_value("refund").run()
    after = next(c.value for c in at.caption if "tickets match" in c.value)
    n = int(after.split(" of ")[0].replace(",", ""))
    assert 0 < n < 240
    ids = at.selectbox(key="corpus_pick_id").options[1:]
    assert len(ids) == n
    at.selectbox(key="corpus_pick_id").set_value(ids[0]).run()
    assert not at.exception
    # Named by its scan and id (issue 23 item 4), not carried as a typed text.
    assert at.query_params.get("ticket") in (ids[0], [ids[0]]) and at.query_params.get("scan") in ("shipped", ["shipped"])
    at.switch_page(HEADS).run()
    assert not at.exception and not at.error
    assert any(md_escape(ids[0]) in md.value and "corpus ticket" in md.value for md in at.markdown)


def test_without_a_scan_the_page_offers_to_make_one(app_env, tmp_path, monkeypatch):
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "none"))
    at = app_test()
    at.switch_page(CORPUS).run()
    assert not at.exception
    assert any(b.label.startswith("Scan the valid and test splits") for b in at.button)
    assert any("No scan yet" in i.value and "(3,000 tickets, about 60 s" in i.value and "make corpus-demo" in i.value
               for i in at.info)


def test_the_page_lays_out_fixed_width_pieces_in_rows_that_wrap(app_env, scans):
    # At 1000 px st.columns squeezed the confusion matrix until its numbers spilled out of the cells, the word
    # scatter to 80 px and the filters to "Predicte d team", "a", "M" and "inpu".
    at = app_test()
    at.switch_page(CORPUS).run()
    assert not at.exception and not at.error
    assert not at.columns
    found = list(nodes(at.main))
    confusion = [parents for n, parents in found if n.type == "vega_lite_chart" and n.proto.selection_mode]
    assert len(confusion) == 1 and confusion[0][-1].proto.width_config.use_content      # drawn at its own size
    assert wrapping_row(confusion[0][-2])
    for key in FILTER_KEYS:
        (parents,) = [parents for n, parents in found if getattr(n, "key", None) == key]
        assert parents[-1].proto.width_config.pixel_width >= 140, key     # label and value whole
        assert wrapping_row(parents[-2]), key
    specs = [json.loads(n.proto.spec) for n, _ in found if n.type == "vega_lite_chart"]
    scatter = [s for s in specs if "layer" in s and any(lay["mark"]["type"] == "circle" for lay in s["layer"])]
    assert len(scatter) == 1 and scatter[0]["width"] == corpus_charts.RELIANCE_PX
    (parents,) = [parents for n, parents in found if n.type == "dataframe" and n.proto.id == ""]    # the word table
    assert parents[-1].proto.width_config.pixel_width == corpus_charts.RELIANCE_TABLE_PX and wrapping_row(parents[-2])


def test_a_link_restores_every_corpus_choice_in_readable_words(app_env, scans):
    teams = scans.summary["teams"]
    link = {"scan": "shipped", "team": teams[2], "min": "3", "word": "order", "pred": teams[1], "true": teams[1],
            "misrouted": "1", "conf": "0.2-0.99", "disagree": "0.1-1", "sort": "least-confident-first"}
    at = app_test(**link)
    at.switch_page(CORPUS).run()
    assert not at.exception and not at.error
    ss = at.session_state
    assert (ss["corpus_team"], ss["corpus_min_tickets"], ss["corpus_token"]) == (teams[2], 3, "order")
    assert (ss["corpus_pred"], ss["corpus_true"], ss["corpus_misrouted"]) == (teams[1], teams[1], True)
    assert tuple(ss["corpus_conf"]) == (0.2, 0.99) and tuple(ss["corpus_disagree"]) == (0.1, 1.0)
    assert ss["corpus_sort"] == "least confident first"
    expected = query.tickets(scans, query.Filters(token="order", team=teams[1], label=teams[1], misrouted=True,
                                                  confidence=(0.2, 0.99), disagreement=(0.1, 1.0),
                                                  sort="least confident first"))[1]
    assert matching(at) == expected
    for name, value in link.items():
        if name != "scan":                                   # the first scan found is the default: left out
            assert url(at, name) == value, name

    cell = app_test(cell_true=teams[0], cell_pred=teams[3])
    cell.switch_page(CORPUS).run()
    assert not cell.exception
    assert any(f"true {teams[0]} → predicted {teams[3]}" in c.value for c in cell.caption)
    assert matching(cell) == query.tickets(scans, query.Filters(team=teams[3], label=teams[0]))[1]
    cell.text_input(key="corpus_token").set_value("the").run()               # another choice keeps the cell
    assert any(f"true {teams[0]} → predicted {teams[3]}" in c.value for c in cell.caption)
    assert (url(cell, "cell_true"), url(cell, "cell_pred")) == (teams[0], teams[3])
    cell.button(key="corpus_clear_cell").click().run()
    assert not any("Confusion cell" in c.value for c in cell.caption)
    assert url(cell, "cell_true") is None and matching(cell) == query.tickets(scans, query.Filters(token="the"))[1]

    junk = app_test(team="nobody", min="lots", sort="4", conf="a-b", pred="<b>x</b>", cell_true=teams[0])
    junk.switch_page(CORPUS).run()
    assert not junk.exception and not junk.error
    assert (junk.session_state["corpus_team"], junk.session_state["corpus_min_tickets"]) == (teams[0], 5)
    assert junk.session_state["corpus_sort"] == "input order" and junk.session_state["corpus_pred"] == "any"
    assert matching(junk) == scans.summary["tickets"]


def test_choices_are_written_to_the_url_and_survive_a_visit_to_another_page(app_env, scans):
    teams = scans.summary["teams"]
    at = app_test()
    at.switch_page(CORPUS).run()
    assert url(at, "sort") is None and url(at, "team") is None            # defaults stay out of the link
    at.selectbox(key="corpus_sort").set_value("most confident first").run()
    at.button_group(key="corpus_team").set_value(teams[1]).run()
    at.number_input(key="corpus_min_tickets").set_value(4).run()
    at.toggle(key="corpus_misrouted").set_value(True).run()
    at.selectbox(key="corpus_pred").set_value(teams[2]).run()
    assert not at.exception
    assert (url(at, "sort"), url(at, "team"), url(at, "min")) == ("most-confident-first", teams[1], "4")
    assert (url(at, "misrouted"), url(at, "pred")) == ("1", teams[2])
    n = matching(at)

    at.switch_page(HEADS).run()
    for name in ("sort", "team", "min", "misrouted", "pred"):          # a page switch clears the query string
        at.query_params.pop(name, None)
    at.switch_page(CORPUS).run()
    assert not at.exception
    ss = at.session_state
    assert (ss["corpus_sort"], ss["corpus_team"], ss["corpus_min_tickets"]) == ("most confident first", teams[1], 4)
    assert (ss["corpus_misrouted"], ss["corpus_pred"]) == (True, teams[2])
    assert matching(at) == n and url(at, "sort") == "most-confident-first"


def test_a_word_view_with_no_word_says_why_and_what_to_change(app_env, scans):
    # A 20-ticket upload: no word reaches 5 tickets; the page drew an empty scatter with a "NaN" legend and an
    # empty table, with no word on why.
    team = scans.summary["teams"][0]
    most = int(scans.tokens.loc[scans.tokens["team"] == team, "tickets"].max())
    at = app_test(min=str(most + 1))
    at.switch_page(CORPUS).run()
    assert not at.exception and not at.error
    (info,) = [i.value for i in at.info if "Tokens seen in at least" in i.value]
    assert f"is in {most + 1:,} or more of them" in info and f"to {most:,} or lower" in info
    specs = [json.loads(n.proto.spec) for n, _ in nodes(at.main) if n.type == "vega_lite_chart"]
    assert not any("layer" in s and any(lay["mark"]["type"] == "circle" for lay in s["layer"]) for s in specs)
    at.number_input(key="corpus_min_tickets").set_value(most).run()
    assert not any("Tokens seen in at least" in i.value for i in at.info)


def _corpus_env(full_scan, tmp_path, monkeypatch):
    shutil.copytree(full_scan, tmp_path / "scans" / "shipped")
    monkeypatch.setenv("TICKETNET_SCANS", str(tmp_path / "scans"))


def test_a_shared_link_to_a_corpus_ticket_names_it_with_its_true_team_and_verdict(app_env, full_scan, tmp_path,
                                                                                monkeypatch):
    # Issue 23 item 4: opened from the copied URL, a corpus ticket read "Your ticket (typed)", no id, no true team.
    _corpus_env(full_scan, tmp_path, monkeypatch)
    at = app_test()
    at.switch_page(CORPUS).run()
    at.toggle(key="corpus_misrouted").set_value(True).run()
    ids = at.selectbox(key="corpus_pick_id").options[1:]
    assert ids, "the scan has a misrouted ticket"
    at.selectbox(key="corpus_pick_id").set_value(ids[0]).run()
    link = {k: at.query_params[k] for k in ("ticket", "scan")}
    shared = app_test(**link)                                           # a new session opening the copied URL
    shared.switch_page(HEADS).run()
    assert not shared.exception and not shared.error
    header = "\n".join(str(m.value) for m in shared.markdown)
    assert f"**{md_escape(ids[0])}** · corpus ticket · true team **" in header
    assert "✗ misrouted (true: " in header and "Your ticket" not in header
    assert shared.query_params["ticket"] == ids[0] and shared.query_params["scan"] == "shipped"


def test_a_link_to_a_corpus_ticket_that_is_gone_says_so(app_env, full_scan, tmp_path, monkeypatch):
    _corpus_env(full_scan, tmp_path, monkeypatch)
    at = app_test(ticket="T-00000", scan="shipped").run()
    assert not at.exception
    assert any("not in the corpus scan 'shipped'" in w.value for w in at.warning)
    at = app_test(ticket="T-00000", scan="../elsewhere").run()
    assert any("not among the scans on this server" in w.value for w in at.warning)
