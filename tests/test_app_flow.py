"""Issue 10, items 9-13, through the whole app in AppTest: wording on the pages, filters kept across pages, actions
beside the table, split results on disk, long typed tickets in links, and the position-effect notice."""

from __future__ import annotations

import re

import pytest

from tests.conftest import DEFAULT_TICKET, HEADS, INTERPRETATION, app_test

pytest.importorskip("streamlit.testing.v1")

TICKETS = "../pages/tickets.py"
VERIFICATION = "../pages/verification.py"


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _markdown(at) -> str:
    return re.sub(r"\\(.)", r"\1", "\n".join(str(e.value) for e in [*at.markdown, *at.caption, *at.warning]))


def _table(at):
    return next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)


# -- 9. wording -------------------------------------------------------------------------------------------------------
def test_prediction_metric_has_no_arrow_and_a_typed_ticket_no_true_team_legend(app_env):
    at = app_test().run()
    _ok(at)
    metric = next(m for m in at.metric if m.label == "prediction")
    from streamlit.proto.Metric_pb2 import Metric

    assert metric.proto.direction == Metric.MetricDirection.NONE        # no up arrow beside "confidence 0.95"
    assert any("green: true team" in str(c.spec) for c in at.get("vega_lite_chart"))
    at.switch_page(HEADS)
    at.query_params.update(ticket="custom", text="where is my parcel")
    at.run()
    _ok(at)
    assert not any("green: true team" in str(c.spec) for c in at.get("vega_lite_chart"))


def test_verification_page_counts_blocks_from_one(app_env):
    at = app_test().run()
    at.switch_page(VERIFICATION).run()
    _ok(at)
    compared = "\n".join("\n".join(d.value["what was compared"]) for d in at.dataframe
                         if "what was compared" in d.value.columns)
    assert "block 1 attention weights" in compared and "block 2 output" in compared
    assert "blocks.0" not in compared and "blocks.1" not in compared


def test_interpretation_wording_on_the_default_ticket(app_env):
    at = app_test().run()
    at.switch_page(INTERPRETATION).run()
    _ok(at)
    md = _markdown(at)
    assert "''" not in md and "0.00 " not in md and "0.00)" not in md
    assert "the weight of “" in md
    if app_env.shipped:
        # T-65052: no deletion moves p(payments) by 0.05, so no token is called "high effect", and deletion and
        # <unk> replacement agree: no position-effect notice.
        assert "none: no token's deletion moves p(payments) by 0.05 or more" in md
        assert not any("Position effect" in w.value for w in at.warning)
    for d in at.dataframe:
        for c in d.value.select_dtypes("float").columns:
            assert not any(str(v).startswith("-0.0") and float(v) == 0 for v in d.value[c]), c


# -- 13. position effects ----------------------------------------------------------------------------------------------
def test_interpretation_says_when_deletion_measures_positions(app_env):
    if not app_env.shipped:
        pytest.skip("T-13436 is in the shipped valid split")
    at = app_test(ticket="T-13436").run()
    at.switch_page(INTERPRETATION).run()
    _ok(at)
    notice = re.sub(r"\\(.)", r"\1", next(w.value for w in at.warning if "Position effect" in w.value))
    assert "p(product)" in notice and "unk replacement" in notice


# -- 10. filters survive a page change ---------------------------------------------------------------------------------
def _triage(at):
    at.toggle(key="misrouted").set_value(True)
    at.slider(key="confidence_range").set_value((0.0, 0.6))
    at.selectbox(key="sort_by").set_value("confidence, lowest first")
    return at.run()


def test_filters_sort_and_split_survive_a_visit_to_another_page(app_env):
    at = app_test().run()
    at.segmented_control(key="split").set_value("test").run()
    _triage(at)
    _ok(at)
    triage = _table(at)
    assert 0 < len(triage) < 100 and (~triage["correct"]).all() and (triage["confidence"] <= 0.6).all()
    assert list(triage["confidence"]) == sorted(triage["confidence"])
    assert at.query_params["misrouted"] == "1" and at.query_params["conf"] == "0-0.6"
    assert at.query_params["split"] == "test"

    at.switch_page(HEADS).run()
    _ok(at)
    at.switch_page(TICKETS).run()
    _ok(at)
    assert at.toggle(key="misrouted").value is True
    assert tuple(at.slider(key="confidence_range").value) == (0.0, 0.6)
    assert at.segmented_control(key="split").value == "test"
    assert at.selectbox(key="sort_by").value == "confidence, lowest first"
    assert list(_table(at)["ticket_id"]) == list(triage["ticket_id"])
    assert at.query_params["misrouted"] == "1" and at.query_params["ticket"] == DEFAULT_TICKET


def test_a_link_with_filters_opens_the_triage_list(app_env):
    at = app_test(misrouted="1", conf="0-0.6", true="payments").run()
    _ok(at)
    table = _table(at)
    assert len(table) and (~table["correct"]).all() and (table["confidence"] <= 0.6).all()
    assert (table["team"] == "payments").all()
    assert at.selectbox(key="true_filter").value == "payments"


def test_filter_query_round_trip():
    from dashboard import filters

    values = {**filters.DEFAULTS, "split": "test", "misrouted": True, "confidence_range": (0.0, 0.6),
              "pattern_filter": ["negated", "two_topics"], "ticket_search": "refund", "sort_by": filters.SORTS[1]}
    query = filters.to_query(values)
    assert query == {"split": "test", "pattern": "negated,two_topics", "misrouted": "1", "conf": "0-0.6",
                     "q": "refund", "sort": "1"}
    assert filters.from_query(query, ("valid", "test", "train"), ("payments",)) == values
    assert filters.to_query(filters.DEFAULTS) == {}
    odd = filters.from_query({"split": "nope", "true": "x", "conf": "a-b", "sort": "99"}, ("valid",), ("payments",))
    assert odd == filters.DEFAULTS


# -- 11. from a row to its explanation ---------------------------------------------------------------------------------
def _in_order(node):
    """Every element of the page in drawing order."""
    children = getattr(node, "children", None)
    if not children:
        yield node
        return
    for key in sorted(children):
        yield from _in_order(children[key])


def test_picking_a_row_puts_links_to_its_heads_and_interpretation_beside_the_table(app_env):
    at = app_test().run()
    chosen = _table(at).iloc[4]
    at.session_state["ticket_table"] = {"selection": {"rows": [4], "columns": []}}   # what a click sends
    at.run()
    _ok(at)
    order = list(_in_order(at.main))
    table_at = next(i for i, e in enumerate(order) if e.type == "dataframe" and "ticket_id" in e.value.columns)
    links = [(i, e.proto) for i, e in enumerate(order) if e.type == "page_link"]
    near = {p.page.rsplit("/", 1)[-1]: p.label for i, p in links if table_at - 6 <= i < table_at}
    assert near.get("heads") == f"Heads of {chosen['ticket_id']}", near
    assert near.get("interpretation") == f"Interpretation of {chosen['ticket_id']}", near
    line = next(str(e.value) for e in order[table_at - 6:table_at] if e.type == "markdown" and "Picked" in str(e.value))
    assert chosen["ticket_id"].replace("-", "\\-") in line and chosen["predicted"] in line
