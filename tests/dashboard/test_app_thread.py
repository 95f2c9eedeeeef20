"""An e-mail ticket on the pages: the new message as the ticket, the quoted part greyed out below it with a one-line
note, and a switch (kept in the URL) that reads the whole thread for that ticket."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tests.conftest import DEFAULT_TICKET, HEADS, INTERPRETATION, app_test
from ticketnet.data.thread import split_thread

pytest.importorskip("streamlit.testing.v1")

THREAD = ("Thanks, the refund arrived. While I've got you, the tracking link for my second box doesn't work. / "
          "Kind regards, / Priya / On Tue, 11 Jun 2024, Larkfield Customer Care <care@larkfield.co.uk> wrote: / "
          "> Dear Ms Shah, / > we have refunded the double charge of £49.99 to your card.")
PLAIN = "The tracking link for my second box doesn't work, it says the parcel does not exist."
TOGGLE = "Read the quoted part too"


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _plain(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown)


def _captions(at) -> list[str]:
    return [_plain(str(c.value)) for c in at.caption]


def _note(at) -> str | None:
    return next((c for c in _captions(at) if "characters" in c and ("Set aside" in c or "whole thread" in c)), None)


def _toggle(at):
    return next((t for t in at.toggle if t.label == TOGGLE), None)


def _tokens_of(at) -> list[str]:
    """The tokens of the per-token table (what every heatmap and highlight of the page is drawn over)."""
    table = next(d.value for d in at.dataframe if "token" in d.value.columns and "position" in d.value.columns)
    return list(table["token"])


def _interpretation(**query):
    at = app_test(ticket="custom", text=THREAD, **query).run()
    at.switch_page(INTERPRETATION).run()
    return at


def test_a_typed_thread_ticket_shows_its_new_message_the_greyed_quoted_part_and_a_note(app_env, router):
    split = split_thread(THREAD)
    assert split.set_aside and split.new != THREAD                 # the example is a thread the splitter cuts
    at = _interpretation()
    _ok(at)
    texts = [t.value for t in at.text]
    assert split.new in texts and THREAD not in texts, "the ticket shown is the new message"
    note = _note(at)
    assert note is not None and f"({split.set_aside_chars:,} characters)" in note
    assert "quoted history" in note and "new message" in note
    greyed = [c for c in _captions(at) if "we have refunded the double charge" in c]
    assert greyed and "Dear Ms Shah" in greyed[0], "the set-aside part is shown greyed (a caption) below"
    assert not any("<care@larkfield.co.uk>" in str(m.value) for m in [*at.markdown, *at.caption]), \
        "user text is escaped, never HTML"
    assert _tokens_of(at) == router.encode(THREAD).tokens
    assert "refunded" not in _tokens_of(at) and "shah" not in _tokens_of(at)
    toggle = _toggle(at)
    assert toggle is not None and toggle.value is False
    assert "thread" not in at.query_params


def test_the_switch_reads_the_whole_thread_and_rides_in_the_url(app_env, router):
    whole = replace(router, whole_thread=True).encode(THREAD).tokens
    at = _interpretation()
    _toggle(at).set_value(True).run()
    _ok(at)
    assert at.query_params["thread"] == "whole"
    assert _tokens_of(at) == whole and "refunded" in whole
    assert THREAD in [t.value for t in at.text]
    assert "Reading the whole thread" in _note(at)
    assert _toggle(at).value is True

    at.switch_page(HEADS).run()                                      # the choice follows the ticket to other pages
    _ok(at)
    assert at.query_params["thread"] == "whole" and _toggle(at).value is True
    query = next(s for s in at.selectbox if s.label.startswith("Query row"))
    assert len(query.options) == len(whole)

    _toggle(at).set_value(False).run()
    _ok(at)
    assert "thread" not in at.query_params
    query = next(s for s in at.selectbox if s.label.startswith("Query row"))
    assert len(query.options) == len(router.encode(THREAD).tokens)


def test_a_link_with_thread_whole_opens_the_whole_thread(app_env, router):
    at = _interpretation(thread="whole")
    _ok(at)
    assert _toggle(at).value is True and at.query_params["thread"] == "whole"
    assert _tokens_of(at) == replace(router, whole_thread=True).encode(THREAD).tokens


def test_the_switch_resets_when_another_ticket_is_picked(app_env):
    at = app_test(ticket="custom", text=THREAD).run()
    _toggle(at).set_value(True).run()
    _ok(at)
    assert at.query_params["thread"] == "whole"
    other = THREAD.replace("second box", "third box")                 # another thread ticket, typed
    at.text_area[0].input(other)
    next(b for b in at.button if b.label == "Route this ticket").click()
    at.run()
    _ok(at)
    assert _toggle(at).value is False and "thread" not in at.query_params
    assert split_thread(other).new in [t.value for t in at.text]


def test_a_plain_ticket_shows_no_note_and_no_switch(app_env):
    for at in (app_test(ticket="custom", text=PLAIN).run(), app_test(ticket=DEFAULT_TICKET).run()):
        at.switch_page(INTERPRETATION).run()
        _ok(at)
        assert _note(at) is None and _toggle(at) is None
        assert "thread" not in at.query_params
