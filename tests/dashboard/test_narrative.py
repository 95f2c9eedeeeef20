"""The dashboard's sentences and thresholds (issue 10, items 9 and 13): numbers with the digits they need, quoted
tokens, "high effect" relative to the ticket, and the per-ticket position-effect rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dashboard import narrative
from ticketnet.interpret.metrics.disagreement import effect_disagreements


@pytest.mark.parametrize("x, text", [(0.45, "0.45"), (0.017, "0.017"), (0.0031, "0.0031"), (-0.0031, "-0.0031"),
                                     (0.0, "0.00"), (-0.0, "0.00"), (1.5, "1.50"), (3.1e-6, "3.1e-06"),
                                     (-0.00049, "-0.00049"), (0.0999, "0.10"), (0.05, "0.05"), (0.0040, "0.004")])
def test_fmt_shows_the_digits_a_number_needs_and_no_negative_zero(x, text):
    assert narrative.fmt(x) == text


def test_fmt_never_prints_zero_for_a_nonzero_value():
    for x in np.geomspace(1e-9, 10, 200):
        for v in (x, -x):
            assert float(narrative.fmt(v)) != 0.0, v
            assert narrative.fmt(v) not in ("0.00", "-0.00")


def test_tidy_numbers_leaves_no_negative_zero_cell():
    df = pd.DataFrame({"token": ["a", "b"], "removal": [-0.0001, 0.25], "n": [1, 2]})
    out = narrative.tidy_numbers(df, 3)
    assert "%.3f" % out.loc[0, "removal"] == "0.000"
    assert out.loc[1, "removal"] == 0.25 and list(out["n"]) == [1, 2] and df.loc[0, "removal"] == -0.0001
    assert list(out.columns) == list(df.columns) and list(out.dtypes) == list(df.dtypes)
    same_names = pd.DataFrame([[-0.0001, 2.5, "x"]], columns=["p", "p", "token"])
    tidy = narrative.tidy_numbers(same_names, 3)
    assert list(tidy.columns) == ["p", "p", "token"] and "%.3f" % tidy.iloc[0, 0] == "0.000" and tidy.iloc[0, 1] == 2.5


def test_tokens_are_quoted_and_no_possessive_is_built_on_a_token():
    n = 5
    tokens = ["'", "not", "charge", "twice", "."]
    P = torch.full((2, 4, n, n), 0.01)
    P[1, 0, 1, 0] = 0.5                                        # block 2, head 1: 'not' reads the apostrophe
    per_token = pd.DataFrame({"position": range(n), "token": tokens, "removal": [0.0031, 0.0, 0.004, 0.002, -0.001],
                              "rollout": [0.1, 0.1, 0.2, 0.5, 0.1]})
    lines = narrative.statements(per_token, P, tokens, "payments", 1)
    text = "\n".join(lines)
    assert "''" not in text and "''s" not in text and "0.00 " not in text and "0.00)" not in text
    assert lines[0] == ("Head 1 of block 2 puts 0.50 of the weight of “not” on “'”, yet deleting “'” barely moves "
                        "p(payments): it lowers p(payments) by 0.0031 (rank 2 of 5 by effect).")
    assert lines[1].startswith("No single deletion moves p(payments) by 0.05 or more; the largest effect is deleting "
                               "“charge”, which lowers p(payments) by 0.004.")


def test_high_effect_is_relative_to_the_ticket_and_never_tiny():
    tokens = list("abcdef")
    rollout = np.array([0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    # Every deletion under 0.05: nothing is "high effect", however the ranks fall.
    small = effect_disagreements(rollout, np.array([0.0, 0.001, 0.017, 0.002, 0.016, 0.0]), tokens)
    assert small.low_signal_high_effect == [] and small.high_effect == narrative.SMALL_EFFECT
    assert [t for _, t, _, _ in small.high_signal_low_effect] == ["a", "b"]
    # A ticket with a real effect: 0.4 is high, 0.017 is low, and the thresholds scale with the largest change.
    big = effect_disagreements(rollout, np.array([0.017, 0.3, 0.0, 0.1, -0.4, 0.02]), tokens)
    assert [t for _, t, _, _ in big.low_signal_high_effect] == ["e"]
    assert [t for _, t, _, _ in big.high_signal_low_effect] == ["a"]
    assert big.high_effect == pytest.approx(0.2) and big.low_effect == pytest.approx(0.1)


def test_parity_part_names_count_blocks_from_one():
    assert narrative.part_name("blocks.0.attn.pattern") == "block 1 attention weights"
    assert narrative.part_name("blocks.1.resid_post") == "block 2 output"
    assert narrative.part_name("logits") == "logits"
    assert narrative.parity_label("shipped model, padded batch: blocks.0.attn.out") == \
        "shipped model, padded batch: block 1 attention output"


# -- position effects ------------------------------------------------------------------------------------------------
def test_position_effect_rule_on_synthetic_effects():
    n = 20
    word = np.zeros(n)
    word[3] = 0.3
    found = narrative.position_effect(word - 0.3, word)       # every deletion raises p(team) by 0.3 more
    assert found.detected and found.direction == "raises" and found.consistent == n
    assert "unk replacement" in narrative.position_effect_message(found, "product")
    assert not narrative.position_effect(word, word).detected  # deletion and replacement agree
    half = word - np.where(np.arange(n) < n // 2, 0.3, 0.0)  # only half the tokens: under the 60 % share
    assert not narrative.position_effect(half, word).detected
    assert not narrative.position_effect(word - 0.04, word).detected   # consistent but under the median gap
    assert narrative.position_effect_message(narrative.position_effect(word, word), "product") is None


def test_position_effect_on_shipped_tickets(artifacts, router, valid_rows):
    if not artifacts.shipped:
        pytest.skip("the ticket numbers below are the shipped router's")
    from ticketnet.interpret import interpret_ticket

    rows = {r["ticket_id"]: r for r in valid_rows}
    found = {}
    for tid in ("T-53049", "T-65052"):
        ti = interpret_ticket(router, rows[tid]["text"])
        found[tid] = narrative.position_effect(ti.per_token["removal"], ti.per_token["unk replacement"])
    # T-53049 (135 tokens): deleting one token raises p(delivery) by a median of 0.26 (133 of the 135 tokens do so
    # more than their <unk> replacement does).
    assert found["T-53049"].detected and found["T-53049"].direction == "raises"
    assert found["T-53049"].consistent >= 115 and found["T-53049"].median_deletion < -0.18
    # T-65052: deletion and replacement both move p(payments) by under 0.04: no position effect.
    assert not found["T-65052"].detected and abs(found["T-65052"].median_gap) < 0.01


def test_the_pages_unit_names_are_the_library_s_units_in_its_order():
    # narrative keeps its own copy so that the Tickets page imports no torch; the unit toggle's choices are its keys.
    from ticketnet.interpret.interventions.units import UNIT_LABELS, UNITS

    assert narrative.UNIT_NAMES == UNIT_LABELS and tuple(narrative.UNIT_NAMES) == UNITS


# -- issue 23 item 16 -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n, text", [(0, "0 tokens"), (1, "1 token"), (2, "2 tokens"), (60000, "60,000 tokens")])
def test_count_says_one_token_and_separates_thousands(n, text):
    assert narrative.count(n, "token") == text


@pytest.mark.parametrize("counts, text", [
    ((1, 2, 1), ("B fixed 1 ticket (A wrong, B right), broke 2 (A right, B wrong); 1 is wrong in both with different "
                 "teams.")),
    ((3, 1, 3), ("B fixed 3 tickets (A wrong, B right), broke 1 (A right, B wrong); 3 are wrong in both with different "
                 "teams.")),
    ((1200, 0, 0), ("B fixed 1,200 tickets (A wrong, B right), broke 0 (A right, B wrong); 0 are wrong in both with "
                    "different teams.")),
])
def test_the_compare_pages_flips_agree_in_number(counts, text):
    # The walk read "1 are wrong in both".
    assert narrative.flips_sentence(*counts) == text


def test_unknown_words_are_counted_on_the_flags_basis_and_listed_once():
    from ticketnet.card import encode_text
    from ticketnet.data.text import Vocab

    vocab = Vocab(itos=["<pad>", "<unk>", "the", "!", ","])
    enc = encode_text("the b b script script, the § !", vocab, 64)
    assert enc.words == 6 and len(enc.unknown_words) == 4 and enc.unknown == 5     # "§" is an unknown symbol
    sentence = narrative.unknown_sentence(enc)
    assert sentence.startswith("4 of the 6 words read (67%) were never seen in training (b, script)")
    assert "1 other symbol is unknown too" in sentence
    assert "tokens" not in sentence


def test_no_evidence_says_why_in_one_line():
    from dashboard.state import Pick

    assert narrative.no_evidence_sentence(Pick("custom", "hello")).startswith("A typed ticket has no annotated")
    assert "corpus ticket" in narrative.no_evidence_sentence(Pick("custom", "x", corpus_id="T-1")).lower()
    assert narrative.no_evidence_sentence(Pick("T-1", "x", split="valid")).startswith("T-1 has no annotated")
    assert "could not be found" in narrative.no_evidence_sentence(Pick("T-1", "x", split="valid", evidence="zz"))


# -- the answer first ---------------------------------------------------------------------------------------------------
def test_why_names_the_words_whose_deletion_lowers_the_team_most_in_the_pages_unit():
    tokens = ["my", "card", "was", "charged", "twice"]
    assert narrative.why_sentence(tokens, [0.01, 1.2, -0.3, 0.8, 0.4], "payments", "logit_diff") == (
        "Why payments: deleting “card” (1.20), “charged” (0.80) and “twice” (0.40) lowers the log-odds of payments "
        "most (the words the route rests on).")
    assert narrative.why_sentence(tokens, [0.0, 0.3, 0.0, 0.01, 0.0], "payments", "prob").startswith(
        "Why payments: deleting “card” (0.30) lowers p(payments) most (the word the route")
    quiet = narrative.why_sentence(tokens, [0.01, 0.02, 0.0, 0.01, 0.0], "payments", "prob")
    assert quiet.startswith("No single word carries the route to payments") and "under 0.05" in quiet
    assert "single token" in narrative.why_sentence(["refund"], [0.5], "payments")


def test_trust_reads_the_rule_every_page_flags_by():
    from ticketnet.card import Assessment

    def made(**kw):
        base = dict(team="payments", confidence=0.97, probs=[0.97, 0.03], unknown_share=0.0, unknown_words=[],
                    unfamiliar=False, low_confidence=False, truncated=False, min_confidence=0.9687, rule="policy")
        return Assessment(**{**base, **kw})

    assert narrative.trust_sentence(made(), "payments") == (
        "Trust it? The routing policy would auto-route it: its confidence 0.970 clears the threshold for payments "
        "(0.969), fitted on valid for its precision target.")
    assert "would go to a person" in narrative.trust_sentence(made(low_confidence=True), "payments")
    assert "no routing policy is stored" in narrative.trust_sentence(made(rule="calibrated", min_confidence=0.85),
                                                                     "payments")
    assert narrative.trust_sentence(made(unfamiliar=True), "payments").startswith("Trust it? No: the ticket is unlike")


def test_a_share_that_rounds_to_zero_reads_under_one_percent_and_an_address_is_no_link():
    from dashboard.text import md_escape

    assert narrative.share_text(1, 231) == "under 1%" and narrative.share_text(0, 5) == "0%"
    assert narrative.share_text(3, 10) == "30%" and narrative.share_text(0, 0) == "0%"
    assert md_escape("ana@example.com") == "ana\\@example\\.com"      # Markdown makes no mailto link of it


def test_the_unit_sentence_names_an_encoders_parts_and_its_logit_margin():
    from dashboard.narrative import unit_sentence

    tiny = unit_sentence("logit_diff", "payments")
    assert "(token, phrase, edge, head)" in tiny and "positive (red)" in tiny and "log(p / (1 − p))" in tiny
    words = unit_sentence("logit_diff", "payments", "word, phrase", coloured=False, margin=True)
    assert "(word, phrase)" in words and "(red)" not in words and "log(p" not in words
    assert "its logit minus the best other team's" in words
    assert "p(payments), the probability" in unit_sentence("prob", "payments", "word, phrase", False, True)
