"""The per-team phrasebook: every entry well-formed, merged into the generator's tables by name, and used."""

import random
import types
from collections import Counter

import pytest

from ticketnet.data.synth import generator, phrasebook
from ticketnet.data.synth.phrasebook.check import problems
from ticketnet.data.synth.phrases import MINOR_TAILS, SHORT, SUBINTENTS
from ticketnet.data.tickets import TEAMS


@pytest.mark.parametrize("team", TEAMS)
def test_every_phrasebook_entry_uses_known_slots_and_marks_evidence_where_it_must(team):
    assert problems(team) == []


def test_the_checker_reports_what_is_wrong(monkeypatch):
    bad = types.SimpleNamespace(SUBINTENTS=(("x", {"you": ("pay {nope}",), "direct": ("no marks",), "odd": ()}),),
                                SHORT=("[unclosed",), ASIDES="one string")
    monkeypatch.setattr(phrasebook, "_module", lambda team: bad)
    found = "\n".join(problems("payments"))
    for expected in ("unknown slot {nope}", "no [evidence] marked", "unknown kind 'odd'", "unbalanced [evidence]",
                     "ASIDES: a tuple of strings"):
        assert expected in found


def test_sub_intents_merge_by_name_and_unknown_kinds_are_refused(monkeypatch):
    base = (("payments", "declined", {"you": ("retry my card",)}),)
    extra = types.SimpleNamespace(SUBINTENTS=(("declined", {"you": ("retry my card", "take the payment again"),
                                                            "state": ("my card keeps failing",)}),
                                              ("gift_card", {"ask": ("what my gift card balance is",)})))
    monkeypatch.setattr(phrasebook, "_module", lambda team: extra if team == "payments" else types.SimpleNamespace())
    merged = {name: parts for _, name, parts in phrasebook.extend_subintents(base)}
    assert merged["declined"] == {"you": ("retry my card", "take the payment again"), "state": ("my card keeps failing",)}
    assert merged["gift_card"] == {"ask": ("what my gift card balance is",)}
    extra.SUBINTENTS = (("declined", {"yours": ("x",)}),)
    with pytest.raises(ValueError, match="unknown kinds"):
        phrasebook.extend_subintents(base)


def test_every_team_has_a_wide_charter_with_many_ways_to_ask():
    for team in TEAMS:
        subs = [parts for t, _, parts in SUBINTENTS if t == team]
        assert len(subs) >= 18, team
        assert sum(len(items) for parts in subs for items in parts.values()) >= 400, team
        assert len(dict(SHORT)[team]) >= 30, team


def test_two_topic_tickets_mark_the_minor_request_before_after_and_from_behind():
    rng = random.Random(1)
    orders, tails = Counter(), 0
    for i in range(600):
        team = TEAMS[i % 5]
        core = generator._secondary_core(rng, team, TEAMS[(i + 1) % 5], {})
        orders[core[0][0]] += 1
        minor = next(segments for kind, segments in core if kind == "aside")
        tails += any(t and t.strip(" ,-") in minor[-1][0] for t in MINOR_TAILS)
    assert 0.4 <= orders["request"] / 600 <= 0.75, orders          # the main request first or second, both common
    assert tails >= 150, "a softener after the minor request ('..., but that can wait') in a good share"
