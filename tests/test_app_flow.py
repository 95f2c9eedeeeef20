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
