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
SETS = {"handwritten": ("H", 330), "handwritten_dev": ("D", 450)}


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9']+", text.lower()))


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b)


@pytest.fixture(scope="module")
def sets() -> dict[str, list[dict]]:
    return {name: load_split(DATA / f"{name}.csv") for name in SETS}


@pytest.mark.parametrize("name", SETS)
def test_ids_counts_and_balance(sets, name):
    prefix, n = SETS[name]
    rows = sets[name]
    assert [r["ticket_id"] for r in rows] == [f"{prefix}-{i:03d}" for i in range(1, n + 1)]
    cells = Counter((r["team"], r["style"]) for r in rows)
    assert set(cells) == {(t, s) for t in TEAMS for s in STYLES}
    assert set(cells.values()) == {n // (len(TEAMS) * len(STYLES))}


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
