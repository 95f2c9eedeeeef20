"""The picked ticket and every other choice a user makes: kept in `st.session_state`, mirrored in the URL."""

# A split ticket is picked by id. A typed ticket ("Write your own ticket") is picked as ``?ticket=custom``;
# its text lives in the session and rides in the link so that a link to it works: short texts (≤ `URL_TEXT_LIMIT`
# characters) as they are in ``?text=``, longer ones packed (zlib + base64url) in ``?ztext=``, and texts too long
# even packed stored on the server under their hash, ``?typed=<hash>`` (see dashboard/data/store.py). The URL wins only
# when it differs from what this session last wrote there (a pasted link, a new tab); otherwise the session's pick
# wins, so picking in the table is never undone by a stale URL. Page switches clear the query string; `sync_with_url` writes it back each run.
# A ticket picked on the Corpus page is named by its scan and id (``?ticket=T-39229&scan=shipped``): a link to it
# reads the ticket back from that scan, with its true team. The pages' other choices ride in the URL through their
# views (dashboard/views.py).
# An e-mail ticket is read without its quoted history and signature (ticketnet.data.thread); an analyst may read the
# whole thread of the picked ticket instead: ``?thread=whole``, kept until another ticket is picked.

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

import streamlit as st

from dashboard import view
from dashboard.data import splits, store, ticket

DEFAULT_TICKET = "T-65052"
CUSTOM = "custom"
URL_TEXT_LIMIT = 300
TYPED_MAX_CHARS = 200_000        # the "Write your own ticket" box accepts this much; the router reads its first tokens

T = TypeVar("T")

_TICKET = "picked_ticket"        # ticket id or CUSTOM
_TEXT = "custom_text"            # the typed ticket
_WROTE = "_url_written"          # (ticket, text, ztext, typed) this session last wrote to the URL
_NOTICE = "_url_notice"          # a message about a URL that could not be followed
_LINKED = "_typed_link"          # (text, its link parameters): packed or stored once per text, not on every run
_CORPUS = "_corpus_pick"         # (text, ticket id, true team, scan name) of a ticket picked on the Corpus page
_CHOICES = "_url_choices"        # {parameter: value} of the pages' other choices this session last wrote
SCAN = "scan"                    # the URL parameter naming a corpus ticket's scan
THREAD = "thread"                # the URL parameter that reads the picked ticket's whole thread: ?thread=whole
WHOLE = "whole"
_WHOLE = "_whole_thread"         # digest of the picked ticket whose whole thread is read


@dataclass(frozen=True)
class Pick:
    """The ticket every page shows."""

    ticket_id: str               # an id, or "custom"
    text: str
    team: str | None = None      # true team, for split tickets
    split: str | None = None
    evidence: str = ""
    pattern: str = ""
    distractor: str = ""
    corpus_id: str = ""          # a corpus ticket: shown by its text like a typed one, named by its id
    corpus_scan: str = ""        # …and the name of the scan it comes from
    whole_thread: bool = False   # read its quoted history and signature too (only a ticket that has them)

    @property
    def custom(self) -> bool:
        return self.ticket_id == CUSTOM

    @property
    def digest(self) -> str:
        """A short digest of the text."""
        return hashlib.sha1(self.text.encode("utf-8")).hexdigest()[:12]

    @property
    def text_key(self) -> str:
        """The digest, for widget keys: a widget keyed by it starts afresh on another ticket, and on the same
        ticket read with its whole thread (other tokens, other query rows)."""
        return self.digest + ("-whole" if self.whole_thread else "")

    @property
    def label(self) -> str:
        if self.custom:
            return self.corpus_id or "your ticket"
        return self.ticket_id


_LINK_PARAMS = ("text", "ztext", "typed", SCAN)


def _url_link() -> tuple:
    qp = st.query_params
    return (qp.get("ticket"), *(qp.get(name) for name in _LINK_PARAMS))


def _corpus_ticket(scan_name: str, ticket_id: str) -> tuple[str, str | None] | str:
    """(text, true team) of ticket `ticket_id` in the scan named `scan_name`, or why it cannot be read."""
    from dashboard.data import corpus

    found = {p.name: p for p in corpus.found_scans()}
    if scan_name not in found:
        return (f"The link names a ticket of the corpus scan {scan_name!r}, which is not among the scans on this "
                f"server ({', '.join(found) or 'none'})")
    try:
        row = corpus.ticket(corpus.open_scan(found[scan_name]), ticket_id)
    except ValueError as exc:
        return f"The corpus scan {scan_name!r} named by the link cannot be opened ({exc})"
    if row is None:
        return f"Ticket {ticket_id!r} from the link is not in the corpus scan {scan_name!r}"
    label = row.get("label")
    return row["text"], label if isinstance(label, str) and label else None


def _text_from_url() -> str | None:
    """The typed ticket a link carries: plain (`?text=`), packed (`?ztext=`) or stored (`?typed=<hash>`)."""
    qp = st.query_params
    if qp.get("text") and qp.get("text").strip():
        return qp.get("text")
    if qp.get("ztext"):
        return store.unpack_text(qp.get("ztext"))
    if qp.get("typed"):
        return store.load_typed(qp.get("typed"))
    return None


def sync_with_url() -> None:
    """Adopt a ticket named by the URL if it is new to this session, then write the session's pick back."""
    ss = st.session_state
    url_ticket = st.query_params.get("ticket")
    if url_ticket is not None and _url_link() != ss.get(_WROTE):
        url_ticket = url_ticket.strip()
        if url_ticket == CUSTOM:
            url_text = _text_from_url()
            if url_text and url_text.strip():
                ss[_TEXT] = url_text
                ss[_TICKET] = CUSTOM
            elif ss.get(_TEXT):
                ss[_TICKET] = CUSTOM
            else:
                broken = any(st.query_params.get(n) for n in ("ztext", "typed"))
                ss[_NOTICE] = ("The link names a typed ticket, but "
                               + ("its text could not be read back from it (the link was cut short, or the text "
                                  "was stored by another server)" if broken else "its text is not in the link")
                               + ". Showing the default ticket instead.")
        elif url_ticket and st.query_params.get(SCAN):
            found = _corpus_ticket(st.query_params.get(SCAN), url_ticket)
            if isinstance(found, str):
                ss[_NOTICE] = f"{found}; showing {ss.get(_TICKET) or default_ticket()} instead."
            else:
                pick_corpus(url_ticket, found[0], found[1], st.query_params.get(SCAN), write=False)
        elif url_ticket:
            if splits.find_ticket(url_ticket) is not None:
                ss[_TICKET] = url_ticket
            else:
                ss[_NOTICE] = (f"Ticket {url_ticket!r} from the link is in none of the splits "
                               f"({', '.join(splits.available())}); showing {ss.get(_TICKET) or default_ticket()} "
                               "instead.")
    if _TICKET not in ss:
        ss[_TICKET] = default_ticket()
    _write_url()


def default_ticket() -> str:
    """The ticket a session opens on: the lesson's T-65052 where this router's splits hold it, else the first
    ticket of its first split (a team's router has its own ids)."""
    if splits.find_ticket(DEFAULT_TICKET) is not None:
        return DEFAULT_TICKET
    first = splits.available()[0]
    return str(splits.split_rows(first).iloc[0]["ticket_id"])


def link_params(text: str) -> dict[str, str]:
    """How a typed ticket rides in a link: as it is up to URL_TEXT_LIMIT characters, else packed (zlib + base64url)
    while that stays within store.PACKED_URL_LIMIT, else stored on the server under its hash ({} if it cannot be)."""
    if len(text) <= URL_TEXT_LIMIT:
        return {"text": text}
    packed = store.pack_text(text)
    if len(packed) <= store.PACKED_URL_LIMIT:
        return {"ztext": packed}
    key = store.save_typed(text)
    return {"typed": key} if key else {}


def _write_url() -> None:
    ss = st.session_state
    ticket = ss[_TICKET]
    params: dict[str, str] = {}
    corpus = _corpus_pick()
    if corpus is not None and corpus[3]:
        ticket, params = corpus[1], {SCAN: corpus[3]}      # named by its scan and id, not by its text
    elif ticket == CUSTOM and ss.get(_TEXT) is not None:
        cached = ss.get(_LINKED)
        if cached is None or cached[0] != ss[_TEXT]:
            cached = ss[_LINKED] = (ss[_TEXT], link_params(ss[_TEXT]))
        params = cached[1]
    # A session's first run writes the ticket even if the URL it was sent holds it: a browser that reconnects to a
    # restarted server mid-run may clear its address bar after sending it (tests/e2e/test_fault.py).
    view.write_query(("ticket", *_LINK_PARAMS), {"ticket": ticket, **params}, always=_WROTE not in ss)
    ss[_WROTE] = (ticket, *(params.get(name) for name in _LINK_PARAMS))


def url_notice() -> str | None:
    """A message about a URL ticket that could not be followed (shown once)."""
    return st.session_state.pop(_NOTICE, None)


def pick_ticket(ticket_id: str) -> None:
    """Pick a split ticket by id (the caller has checked it exists)."""
    if st.session_state.get(_TICKET) != ticket_id:
        _forget_whole_thread()
    st.session_state[_TICKET] = ticket_id
    _write_url()


def pick_custom(text: str) -> None:
    """Pick a typed ticket (the caller has checked it is not blank)."""
    ss = st.session_state
    ss.pop(_CORPUS, None)
    _forget_whole_thread()
    ss[_TEXT] = text
    ss[_TICKET] = CUSTOM
    _write_url()


def pick_corpus(ticket_id: str, text: str, team: str | None = None, scan: str = "", write: bool = True) -> None:
    """Pick a ticket of a corpus scan. Its text is what the pages need, so it is picked like a typed ticket; the
    session remembers its id, true team and scan name for as long as that text is picked, and its link names the
    scan and the id (without a scan name it rides in the link by its text, as a typed ticket does)."""
    ss = st.session_state
    if write:                    # from a link (not written), the link's own ?thread= is still to be read
        _forget_whole_thread()
    ss[_TEXT] = text
    ss[_TICKET] = CUSTOM
    ss[_CORPUS] = (text, ticket_id, team, scan)
    if write:
        _write_url()


def _corpus_pick() -> tuple | None:
    """The corpus ticket picked, while its text is the picked text."""
    ss = st.session_state
    corpus = ss.get(_CORPUS)
    if ss.get(_TICKET) == CUSTOM and corpus and corpus[0] == ss.get(_TEXT):
        return corpus
    return None


def custom_text() -> str:
    return st.session_state.get(_TEXT, "")


def current() -> Pick:
    """The picked ticket. Falls back to the default ticket (then to the first valid ticket) if the pick is gone.
    Its `whole_thread` says whether its quoted part is read too (`read_whole_thread`)."""
    pick = _current()
    whole = _whole_thread(pick)
    return replace(pick, whole_thread=True) if whole else pick


def _current() -> Pick:
    ss = st.session_state
    ticket = ss.get(_TICKET) or default_ticket()
    if ticket == CUSTOM and ss.get(_TEXT, "").strip():
        corpus = _corpus_pick()
        if corpus is not None:
            return Pick(CUSTOM, ss[_TEXT], team=corpus[2], corpus_id=corpus[1], corpus_scan=corpus[3])
        return Pick(CUSTOM, ss[_TEXT])
    for candidate in (ticket, DEFAULT_TICKET):
        if candidate == CUSTOM:
            continue
        found = splits.find_ticket(candidate)
        if found is not None:
            split, row = found
            break
    else:
        split, row = splits.SPLITS[0], splits.split_rows(splits.SPLITS[0]).iloc[0].to_dict()
    if row["ticket_id"] != ticket:
        ss[_TICKET] = row["ticket_id"]
        _write_url()
    # split_rows fills the optional columns with "", so every row has them
    return Pick(row["ticket_id"], row["text"], row["team"], split, row["evidence"], row["pattern"], row["distractor"])


# -- the whole thread or only the new message ---------------------------------------------------------------------
def _whole_thread(pick: Pick) -> bool:
    """Whether the picked ticket is read whole: a link's ``?thread=whole`` (a pasted link, a new tab) or the
    analyst's switch for this very ticket; never for a ticket with nothing set aside."""
    if not ticket.thread(pick.text).set_aside:
        return False
    ss = st.session_state
    if url_choice(THREAD, lambda raw: True if raw.strip() == WHOLE else None):
        ss[_WHOLE] = pick.digest
    return ss.get(_WHOLE) == pick.digest


def _forget_whole_thread() -> None:
    """Another ticket is picked: it is read as the router reads it, its new message only."""
    st.session_state.pop(_WHOLE, None)
    if THREAD in st.query_params:
        write_choice(THREAD, None)


def read_whole_thread(pick: Pick, whole: bool) -> None:
    """Read the picked ticket's whole thread (quoted history and signature too), or only its new message; the
    choice rides in the URL as ``?thread=whole`` and is dropped when another ticket is picked."""
    ss = st.session_state
    if whole:
        ss[_WHOLE] = pick.digest
    elif ss.get(_WHOLE) == pick.digest:
        del ss[_WHOLE]
    write_choice(THREAD, WHOLE if whole else None)


# -- the thread switch in the URL ------------------------------------------------------------------------------------
def url_choice(name: str, parse: Callable[[str], T | None]) -> T | None:
    """The value the URL's parameter `name` names, parsed (None when `parse` refuses it), if the URL holds one this
    session did not write there itself (a pasted link, a new tab); None otherwise."""
    raw = st.query_params.get(name)
    if raw is None or raw == st.session_state.get(_CHOICES, {}).get(name):
        return None
    return parse(raw)


def write_choice(name: str, value: str | None) -> None:
    """Put a page's choice in the URL under `name` (None: take it out), remembering it as this session's own."""
    view.write_query((name,), {} if value is None else {name: value})
    st.session_state.setdefault(_CHOICES, {})[name] = value
