"""The one view state: codecs that write a choice into a link and read it back, and a view kept across pages."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import view


# -- codecs ---------------------------------------------------------------------------------------------------------
def test_a_bounded_int_reads_only_whole_numbers_in_its_range_and_can_be_written_from_one():
    block = view.bounded_int(1, 2)
    assert [block.decode(raw) for raw in ("1", " 2 ", "3", "0", "1.5", "x", "")] == [1, 2, None, None, None, None, None]
    head = view.bounded_int(0, 3, shift=1)                       # 0-based in the session, 1-based in the link
    assert head.encode(0) == "1" and head.decode("4") == 3 and head.decode("0") is None
    assert head.encode(True) is None                             # a bool is not a head
    assert "1 to 2" in view.bounded_int(1, 2, "a block (1 to 2)").what


def test_a_range_is_clipped_ordered_and_rounded_and_nonsense_is_refused():
    r = view.unit_range()
    assert r.decode("0-0.6") == (0.0, 0.6) and r.decode("0.7-0.2") == (0.2, 0.7) and r.decode("0-9") == (0.0, 1.0)
    assert r.decode("0.123456-0.5") == (0.12, 0.5)
    assert r.decode("a-b") is None and r.decode("nan-1") is None and r.decode("0.5") is None
    assert r.encode((0.0, 0.6)) == "0-0.6"
    assert r.fitted([0.1, 0.2]) == (0.1, 0.2) and r.fitted((0.5, 0.1)) is None and r.fitted("x") is None


def test_a_snapped_number_lands_on_its_step_within_its_range():
    s = view.snapped(0.80, 0.999, 0.001)
    assert s.decode("0.98") == 0.98 and s.decode("0.9804") == 0.98 and s.decode("0.9993") == 0.999
    assert s.decode("0.5") is None and s.decode("inf") is None and s.decode("x") is None
    assert s.fitted(0.98) == 0.98 and s.fitted("no") is None


def test_a_slug_reads_a_sort_order_and_the_older_links_that_named_it_by_position():
    sorts = ("table order", "confidence, lowest first")
    c = view.slugged(sorts, {"1": sorts[1]})
    assert c.encode(sorts[1]) == "confidence-lowest-first" and c.decode("confidence-lowest-first") == sorts[1]
    assert c.decode("Confidence, Lowest First") == sorts[1] and c.decode("1") == sorts[1]
    assert c.decode("99") is None and c.encode("not a sort") is None
    assert view.slug("attention disagrees with effect") == "attention-disagrees-with-effect"


def test_a_subset_drops_what_is_not_offered_and_a_cell_needs_two_known_teams():
    s = view.subset(("negated", "plain"))
    assert s.decode("plain,negated,plain,x") == ["plain", "negated"] and s.decode(" , ") is None
    assert s.fitted(["x", "plain"]) == ["plain"] and s.encode([]) is None
    assert view.subset().decode("a,b") == ["a", "b"]             # options learnt later (`view.allow`)
    c = view.cell(("delivery", "payments"))
    assert c.decode("delivery,payments") == {"true": "delivery", "predicted": "payments"}
    assert c.decode("delivery,nope") is None and c.decode("delivery") is None and c.encode(None) is None
    assert c.fitted({"true": "x", "predicted": "payments"}) is None


def test_a_flag_a_team_and_a_team_position():
    f = view.flag()
    assert f.decode("1") is True and f.decode("no") is False and f.decode("maybe") is None and f.encode(True) == "1"
    t = view.team_index(("delivery", "payments"))
    assert t.decode("payments") == 1 and t.encode(1) == "payments" and t.decode("nope") is None
    assert "delivery, payments" in view.team(("delivery", "payments")).what


# -- a view -----------------------------------------------------------------------------------------------------------
def _view() -> view.View:
    return view.View("demo", (
        view.Field("demo_block", "block", 1, view.bounded_int(1, 2, "a block of this router (1 to 2)")),
        view.Field("demo_team", "team", "delivery", view.team(("delivery", "payments"))),
        view.Field("demo_range", "conf", (0.0, 1.0), view.unit_range(), lambda v: v["demo_block"] == 2),
    ))


def test_to_query_writes_only_what_differs_from_the_defaults_and_what_in_url_allows():
    v = _view()
    assert v.to_query({"demo_block": 1, "demo_team": "delivery", "demo_range": (0.0, 0.5)}) == {}
    assert v.to_query({"demo_block": 2, "demo_team": "payments", "demo_range": (0.0, 0.5)}) == {
        "block": "2", "team": "payments", "conf": "0-0.5"}
    refused: list[str] = []
    assert v.from_query({"block": "7", "team": "payments"}, refused) == {
        "demo_block": 1, "demo_team": "payments", "demo_range": (0.0, 1.0)}
    assert refused == ["block='7' is not a block of this router (1 to 2)"]
    assert view.refused_sentence(refused) == ("The link's block='7' is not a block of this router (1 to 2): the page "
                                              "shows its default for it.")
    assert view.refused_sentence([]) is None


def _page():
    """A page with a view of two widgets; `elsewhere` in the session stands for a visit to another page (the widgets
    are not drawn, so Streamlit drops their state)."""
    import streamlit as st

    from dashboard import view
    from tests.dashboard.test_view import _view

    v = _view()
    if st.session_state.get("elsewhere"):
        st.write("another page")
        st.stop()
    refused = v.restore()
    if refused:
        st.warning(view.refused_sentence(refused))
    st.segmented_control("Block", [1, 2], key="demo_block", required=True, default=view.start("demo_block"))
    st.selectbox("Team", ["delivery", "payments"], key="demo_team",
                 index=view.start_index("demo_team", ["delivery", "payments"]))
    v.remember()


def test_a_view_survives_another_page_writes_the_url_and_adopts_a_new_link_whole():
    at = AppTest.from_function(_page).run()
    assert not at.exception and at.segmented_control(key="demo_block").value == 1
    assert dict(at.query_params) == {}
    at.segmented_control(key="demo_block").set_value(2).run()
    at.selectbox(key="demo_team").set_value("payments").run()
    assert at.query_params["block"] == "2" and at.query_params["team"] == "payments"

    at.session_state["elsewhere"] = True                   # another page: the widgets are not drawn
    at.run()
    for name in ("block", "team"):                         # a page switch clears the query string
        at.query_params.pop(name, None)
    at.session_state["elsewhere"] = False
    at.run()
    assert not at.exception
    assert at.segmented_control(key="demo_block").value == 2 and at.selectbox(key="demo_team").value == "payments"
    assert at.query_params["block"] == "2"                 # written back

    at.query_params["block"] = "1"                         # a new link, naming only the block: adopted whole
    at.query_params.pop("team", None)
    at.run()
    assert at.segmented_control(key="demo_block").value == 1 and at.selectbox(key="demo_team").value == "delivery"
    assert not at.warning


@pytest.mark.parametrize("link, words", [({"block": "9"}, "block='9' is not a block of this router (1 to 2)"),
                                         ({"team": "nope"}, "team='nope' is not a team of this router")])
def test_a_link_value_the_page_cannot_open_is_named_not_replaced_silently(link, words):
    at = AppTest.from_function(_page)
    for name, value in link.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception
    assert any(words in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.segmented_control(key="demo_block").value == 1


def test_a_widget_the_session_does_not_hold_starts_at_its_value_without_the_session_api():
    # Seeding a widget through the Session State API in the first run of a session whose browser reconnected to a
    # restarted server left it deaf to every later pick (tests/e2e/test_fault.py): such a widget gets its value as
    # its own default instead, and the API only changes a widget the session already holds.
    at = AppTest.from_function(_page)
    at.query_params["block"] = "2"
    at.run()
    assert at.segmented_control(key="demo_block").value == 2 and at.selectbox(key="demo_team").value == "delivery"
    assert at.session_state["_view_start"]["demo"]["demo_block"] == 2
    at.query_params["block"] = "1"                         # a new link while the widget is held: set through the API
    at.run()
    assert at.segmented_control(key="demo_block").value == 1


def test_selection_changed_ignores_a_chart_drawn_afresh():
    at = AppTest.from_function(_selections).run()
    assert at.session_state["changes"] == [True, False, False, True, False]


def _selections():
    import streamlit as st

    from dashboard import view

    st.session_state["changes"] = [
        view.selection_changed("c", {"true": "a"}, False),     # a click
        view.selection_changed("c", {"true": "a"}, False),     # the same selection on the next run
        view.selection_changed("c", None, True),               # drawn afresh, with no selection: no change
        view.selection_changed("c", {"true": "b"}, False),     # another click
        view.selection_changed("d", None, False),              # a chart never clicked
    ]
