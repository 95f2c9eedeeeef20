"""Bad input where it enters the dashboard, run headless with Streamlit's AppTest.

Typed tickets: each nasty text is typed into "Write your own ticket" on the Tickets page, then the Heads and
Interpretation pages are visited with it; every page must show a sensible message or result and no exception,
and the text must come back as plain text (`st.text`), never as Markdown or HTML.

Bad files: $TICKETNET_WEIGHTS / $TICKETNET_DATA pointing at broken files give one error panel naming the file.
(Missing weights and a split without a `team` column are in test_app_pages.py.)

Runs on a 40-ticket copy of each split (the `small_data` fixture), so each case takes a few seconds.
"""

from __future__ import annotations

import re
import shutil
import time

import pytest

from tests.conftest import APP, DEFAULT_TICKET, HEADS, INTERPRETATION, app_test

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest

TIMEOUT = 60

HUGE = ("my card was declined twice and the refund never arrived " * 2000)[:100_000]
MARKDOWN = "# HUGE\n---\n| a | b |\n|---|---|\n| 1 | 2 |\n![x](http://evil/x.png) [link](javascript:alert(1)) **bold**"

# id: (text, what a user must see about it)
ROUTED = {
    "single_char": ("?", None),
    "two_words": ("blade broken", None),          # scipy's τ p-value divided by n − 2 here: the page crashed
    "three_words": ("card declined twice", None),
    "unknown_words": ("zxqv blorft", "never saw these words"),
    "emoji_only": ("🎉🎉", "never saw these words"),
    "arabic": ("لم يصل طردي بعد، أريد استرداد المبلغ", None),
    "hebrew": ("החבילה שלי לא הגיעה, אני רוצה החזר כספי", None),
    "control_and_nul": ("card\x00 declined\x07\x1b[31m refund", None),
    "bidi_override": ("refund \u202eesaelp\u202c now", None),
    "script_tag": ("<script>alert(1)</script>", None),
    "img_onerror": ("<img src=x onerror=alert(1)>", None),
    "markdown": (MARKDOWN, None),
}



def _type(at: AppTest, text: str) -> AppTest:
    at.text_area[0].input(text)
    next(b for b in at.button if b.label == "Route this ticket").click()
    return at.run()


def _texts(at) -> list[str]:
    return [str(e.value) for e in at.text]


def _all_markdown(at) -> str:
    """Every string Streamlit will render as Markdown: markdown, captions, headings, alerts, metrics."""
    parts = [str(e.value) for kind in ("markdown", "caption", "title", "header", "subheader", "warning", "info",
                                       "error", "success") for e in getattr(at, kind)]
    parts += [f"{m.label} {m.value} {m.delta}" for m in at.metric]
    return "\n".join(parts)


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _shown_as_plain_text(at, text: str) -> None:
    """The typed text is on the page through st.text, and nowhere as Markdown: its specials arrive escaped."""
    assert text in _texts(at)
    md = _all_markdown(at)
    for raw in ("<script>", "<img", "![x]", "](javascript:", "# HUGE", "**bold**", "\x00"):
        if raw in text:
            assert raw not in md, f"{raw!r} reached Markdown unescaped"


@pytest.mark.parametrize("text,notice", ROUTED.values(), ids=list(ROUTED))
def test_a_nasty_typed_ticket_is_routed_and_every_page_shows_it(small_data, text, notice):
    at = app_test().run()
    _type(at, text)
    _ok(at)
    assert at.session_state["picked_ticket"] == "custom"
    assert any(m.label == "prediction" for m in at.metric)
    _shown_as_plain_text(at, text)
    if notice:
        assert any(notice in w.value for w in at.warning), [w.value for w in at.warning]
    if len(text) <= 300:
        assert at.query_params["text"] == text, "short typed tickets ride in the URL"
    for page in (HEADS, INTERPRETATION):
        at.switch_page(page).run()
        _ok(at)
        assert any(m.label == "prediction" for m in at.metric)
        _shown_as_plain_text(at, text)
        assert len(at.get("vega_lite_chart")) >= 2
        assert not re.search(r"\bnan\b", _all_markdown(at)), "an undefined number reached the page as 'nan'"


def test_a_typed_ticket_unlike_the_training_data_is_flagged_on_every_page(small_data):
    flag = "Unlike the tickets the router was trained on"
    at = app_test().run()
    _type(at, "zxqv blorft quonk")
    _ok(at)
    for page in (None, HEADS, INTERPRETATION):
        if page:
            at.switch_page(page).run()
            _ok(at)
        warnings = [w.value for w in at.warning if flag in w.value]
        assert warnings and "unknown to the router" in warnings[0] and "zxqv" in warnings[0]
    at = app_test().run()
    _type(at, "My card was charged twice for one order. Can you remove the duplicate charge?")
    _ok(at)
    assert not any(flag in w.value for w in at.warning)


@pytest.mark.parametrize("text", ["", "   \n\t  ", "\u3000\u00a0\u2003\r\n", "\x00\x00", "\u200b\u200d"],
                         ids=["empty", "whitespace", "unicode_whitespace", "nul_only", "zero_width_only"])
def test_a_blank_typed_ticket_says_so_and_keeps_the_pick(small_data, text):
    at = app_test().run()
    _type(at, text)
    assert not at.exception
    assert any("empty" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.session_state["picked_ticket"] == DEFAULT_TICKET
    at.switch_page(HEADS).run()
    _ok(at)


def test_a_100000_character_ticket_is_truncated_with_a_notice_in_seconds(small_data, router):
    started = time.perf_counter()
    at = app_test().run()
    _type(at, HUGE)
    _ok(at)
    assert at.session_state["picked_ticket"] == "custom"
    assert any("Truncated" in w.value and f"first {router.max_len}" in w.value for w in at.warning)
    n_total = router.encode(HUGE).n_total
    assert n_total > 1000 and any(f"has {n_total:,} tokens" in w.value for w in at.warning)   # 18,966, not 18966
    assert "text" not in at.query_params, "a long text must not ride in the URL"
    shown = next(t for t in _texts(at) if t.startswith(HUGE[:100]))
    assert len(shown) < 10_000, "the page shows the start of a huge ticket, not all of it"
    assert any("of 100,000 characters" in c.value for c in at.caption)
    for page in (HEADS, INTERPRETATION):
        at.switch_page(page).run()
        _ok(at)
        assert any("Truncated" in w.value for w in at.warning)
    elapsed = time.perf_counter() - started
    assert elapsed < 30, f"typing a 100,000-character ticket and visiting three pages took {elapsed:.0f} s"


def test_a_nul_byte_in_the_url_text_is_harmless(small_data):
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update(ticket="custom", text="refund\x00 please <script>alert(1)</script>")
    at.run()
    assert not at.exception
    at.switch_page(HEADS).run()
    assert not at.exception


# -- bad files -----------------------------------------------------------------------------------------------------
def _one_error_naming(at, name: str, *words: str) -> str:
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1, [e.value for e in at.error]
    message = re.sub(r"\\(.)", r"\1", at.error[0].value)
    assert name in message, message
    for w in words:
        assert w in message, message
    assert "Traceback" not in message
    return message


@pytest.fixture
def weights_copy(artifacts, tmp_path, monkeypatch):
    """A copy of the router's folder; the environment points the dashboard at its router.pt."""
    folder = tmp_path / "weights"
    folder.mkdir()
    for name in ("router.pt", "vocab.json", "router.json"):
        shutil.copy(artifacts.weights.parent / name if name != "router.pt" else artifacts.weights, folder / name)
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(folder / "router.pt"))
    monkeypatch.setenv("TICKETNET_DATA", str(artifacts.data))
    return folder


def test_truncated_weights_give_one_readable_error(weights_copy):
    pt = weights_copy / "router.pt"
    pt.write_bytes(pt.read_bytes()[:5000])
    _one_error_naming(app_test().run(), "router.pt", "TICKETNET_WEIGHTS")


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_a_pickle_instead_of_weights_is_refused(weights_copy):
    import pickle

    class Payload:                                 # what weights_only=True must refuse to unpickle
        def __reduce__(self):
            return (print, ("pwned",))

    (weights_copy / "router.pt").write_bytes(pickle.dumps({"x": Payload()}))
    _one_error_naming(app_test().run(), "router.pt", "TICKETNET_WEIGHTS")


def test_weights_with_a_vocabulary_from_another_training_are_refused(weights_copy):
    import json

    itos = json.loads((weights_copy / "vocab.json").read_text(encoding="utf-8"))
    (weights_copy / "vocab.json").write_text(json.dumps(itos[:-5]), encoding="utf-8")
    _one_error_naming(app_test().run(), "vocab.json", "TICKETNET_WEIGHTS")


def test_weights_pointing_at_a_folder_give_one_readable_error(weights_copy, monkeypatch):
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(weights_copy))
    _one_error_naming(app_test().run(), str(weights_copy.name), "TICKETNET_WEIGHTS")


@pytest.fixture
def data_copy(artifacts, tmp_path, monkeypatch):
    """A copy of the data folder (40 tickets a split is enough); the environment points the dashboard at it."""
    folder = tmp_path / "data"
    folder.mkdir()
    for split in ("train", "valid", "test"):
        lines = (artifacts.data / f"{split}.csv").read_text(encoding="utf-8").splitlines(keepends=True)
        keep = lines[:41] + [ln for ln in lines if ln.startswith(DEFAULT_TICKET + ",")]
        (folder / f"{split}.csv").write_text("".join(keep), encoding="utf-8")
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(artifacts.weights))
    monkeypatch.setenv("TICKETNET_DATA", str(folder))
    return folder


BAD_CSV = {
    "empty": b"",
    "header_only": b"ticket_id,text,team\n",
    "not_utf8": "ticket_id,text,team\nT-1,caf\xe9 refund,payments\n".encode("latin-1"),
    "malformed_quote": b'ticket_id,text,team\nT-1,"never closed,payments\nT-2,ok,payments\n',
    "unknown_team": b"ticket_id,text,team\nT-1,refund please,astrology\n",
    "duplicate_ids": b"ticket_id,text,team\nT-1,refund please,payments\nT-1,where is it,delivery\n",
    "binary": bytes(range(256)) * 4,
}


@pytest.mark.parametrize("content", BAD_CSV.values(), ids=list(BAD_CSV))
def test_a_bad_valid_csv_gives_one_readable_error(data_copy, content):
    (data_copy / "valid.csv").write_bytes(content)
    _one_error_naming(app_test().run(), "valid.csv", "TICKETNET_DATA")


def test_a_missing_split_gives_one_readable_error(data_copy):
    (data_copy / "valid.csv").unlink()
    _one_error_naming(app_test().run(), "valid.csv", "TICKETNET_DATA")


def test_a_data_folder_that_does_not_exist_gives_one_readable_error(data_copy, monkeypatch, tmp_path):
    monkeypatch.setenv("TICKETNET_DATA", str(tmp_path / "nowhere"))
    _one_error_naming(app_test().run(), "nowhere", "TICKETNET_DATA")


def test_markdown_escaping_also_shows_invisible_characters():
    from dashboard.text import md_escape

    assert md_escape("card\x00 *x*\x1b[31m") == "card␀ \\*x\\*␛\\[31m"
    assert md_escape("a\u202eb\x7f") == "a‹U+202E›b␡"
    assert md_escape("line one\nline two\ttab") == "line one\nline two\ttab"     # layout whitespace is kept


def test_a_ticket_without_annotated_evidence_says_so_where_the_section_would_be(small_data):
    # Issue 23 item 16: the Evidence section vanished without a word.
    at = app_test(ticket="custom", text="where is my parcel").run()
    at.switch_page(INTERPRETATION).run()
    _ok(at)
    assert "Evidence recovery" in [h.value for h in at.header]
    assert any(c.value.startswith("A typed ticket has no annotated evidence") for c in at.caption)
