"""The hand-written sets keep the promises of data/HANDWRITTEN.md: ids, balance, evidence, styles, no near-copies."""

import re
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest

from ticketnet.data.synth import TEAMS
from ticketnet.data.tickets import load_split

DATA = Path(__file__).resolve().parents[2] / "data"
STYLES = ("plain", "contrast", "two_topics", "terse", "long", "typo")
THREAD = "thread"
# Each set's id prefix and the shapes it may have: (rows, tickets per team in each of the six styles, thread tickets
# per team).
SETS = {"handwritten": ("H", ((390, 11, 12),)),
        "handwritten_dev": ("D", ((525, 15, 15),)),
        "handwritten_fresh": ("F", ((210, 6, 6),))}
# Where a thread ticket's quoted or forwarded history begins; the new message is the text before the first of these.
HISTORY_MARKERS = (re.compile(r"-{5,} ?Forwarded message"), re.compile(r"-{5}Original Message-{5}"),
                   re.compile(r"\bOn (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|\d)[^\n]{0,120}? wrote:"), re.compile(r"(?:^|\n| / | )From: \S"))
THREAD_KINDS = ("settled_opener", "quoted_reply", "forwarded")


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9']+", text.lower()))


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b)


def _history_start(text: str) -> int | None:
    """Where the quoted or forwarded history begins, or None for a reply with none."""
    starts = [m.start() for pattern in HISTORY_MARKERS if (m := pattern.search(text))]
    return min(starts) if starts else None


def _thread_kind(text: str) -> str:
    if re.search(r"-{5,} ?Forwarded message", text):
        return "forwarded"
    return "settled_opener" if _history_start(text) is None else "quoted_reply"


@pytest.fixture(scope="module")
def sets() -> dict[str, list[dict]]:
    return {name: load_split(DATA / f"{name}.csv") for name in SETS}


@pytest.mark.parametrize("name", SETS)
def test_ids_counts_and_balance(sets, name):
    prefix, shapes = SETS[name]
    rows = sets[name]
    shape = next((s for s in shapes if s[0] == len(rows)), None)
    assert shape is not None, f"{name}: {len(rows)} rows, expected one of {[s[0] for s in shapes]}"
    n, per_style, per_team_thread = shape
    assert [r["ticket_id"] for r in rows] == [f"{prefix}-{i:03d}" for i in range(1, n + 1)]
    expected = {(t, s): per_style for t in TEAMS for s in STYLES}
    expected |= {(t, THREAD): per_team_thread for t in TEAMS if per_team_thread}
    assert Counter((r["team"], r["style"]) for r in rows) == expected


@pytest.mark.parametrize("name", SETS)
def test_evidence_is_literal_and_styles_hold(sets, name):
    for r in sets[name]:
        pieces = r["evidence"].split("|")
        assert all(p and p in r["text"] for p in pieces), r["ticket_id"]
        if r["style"] == "terse":
            assert len(r["text"].split()) < 8, r["ticket_id"]
        if r["style"] == "long":
            assert len(re.split(r"(?<=[.!?])\s+", r["text"].strip())) >= 5, r["ticket_id"]


def test_no_development_ticket_is_a_near_copy_of_another_hand_written_one(sets):
    dev = [(r["ticket_id"], _words(r["text"])) for r in sets["handwritten_dev"]]
    evaluation = [_words(r["text"]) for r in sets["handwritten"]]
    within = [(a, b) for (a, wa), (b, wb) in combinations(dev, 2) if _jaccard(wa, wb) >= 0.4]
    across = [i for i, w in dev if max(_jaccard(w, e) for e in evaluation) >= 0.4]
    assert within == [] and across == []


@pytest.mark.parametrize("name", SETS)
def test_thread_tickets_decide_the_team_in_the_new_message(sets, name):
    threads = [r for r in sets[name] if r["style"] == THREAD]
    for r in threads:
        assert len(r["text"].split()) <= 180, r["ticket_id"]      # the whole thread fits the router's 256 tokens
        start = _history_start(r["text"])
        if start is not None:
            assert start > 0 and r["text"][start:].strip(), r["ticket_id"]
            # the evidence is the new request, never a word of the settled, quoted or forwarded matter; but for
            # a forward under a bare cover note ("See below, any news?") the forwarded message is the request
            cover_note = _thread_kind(r["text"]) == "forwarded" and len(r["text"][:start].split()) < 12
            assert cover_note or all(p in r["text"][:start] for p in r["evidence"].split("|")), r["ticket_id"]
    assert not threads or {_thread_kind(r["text"]) for r in threads} == set(THREAD_KINDS)


# Per set: threads of each kind per team, the quoted or forwarded ones on one line, and of those the ones with " / ".
THREAD_MIX = {"handwritten": (4, 14, 8), "handwritten_fresh": (2, 7, 4)}


@pytest.mark.parametrize("name", list(THREAD_MIX))
def test_threads_mix_the_three_kinds_and_flattened_exports(sets, name):
    per_kind, n_flat, n_slashed = THREAD_MIX[name]
    threads = [r for r in sets[name] if r["style"] == THREAD]
    kinds = Counter((r["team"], _thread_kind(r["text"])) for r in threads)
    assert kinds == {(t, k): per_kind for t in TEAMS for k in THREAD_KINDS}
    with_history = [r["text"] for r in threads if _thread_kind(r["text"]) != "settled_opener"]
    flattened = [t for t in with_history if "\n" not in t]
    assert len(flattened) == n_flat and sum(" / " in t for t in flattened) == n_slashed   # the rest keep breaks


def test_no_evaluation_thread_ticket_is_a_near_copy_of_another_hand_written_one(sets):
    evaluation = [(r["ticket_id"], r["style"], _words(r["text"])) for r in sets["handwritten"]]
    near = [(a, b) for (a, sa, wa), (b, sb, wb) in combinations(evaluation, 2)
            if THREAD in (sa, sb) and _jaccard(wa, wb) >= 0.4]
    assert near == []


def test_no_fresh_ticket_is_a_near_copy_of_another_hand_written_one(sets):
    fresh = [(r["ticket_id"], _words(r["text"])) for r in sets["handwritten_fresh"]]
    others = [_words(r["text"]) for name in ("handwritten", "handwritten_dev") for r in sets[name]]
    within = [(a, b) for (a, wa), (b, wb) in combinations(fresh, 2) if _jaccard(wa, wb) >= 0.4]
    across = [i for i, w in fresh if max(_jaccard(w, o) for o in others) >= 0.4]
    assert within == [] and across == []
