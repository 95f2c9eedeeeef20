"""The phrase rule on documented examples, phrase and pair deletion batched, redundancy, and the suggested edit."""

import itertools

import pytest
import torch

from tests.conftest import KeywordModel
from ticketnet.interpret.interventions.phrases import (
    has_negation,
    keep_phrases,
    phrase_deletions,
    redundant_pairs,
    split_phrases,
    suggest_edit,
    token_scores,
)

T65052 = ("It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
          "Can you remove the duplicate charge?")


def texts(text, n=None):
    return [p.text for p in split_phrases(text, n)]


def test_the_documented_examples():
    assert texts(T65052) == ["It's not a delivery problem", "and I keep the leaf blower.",
                             "My card was charged twice for one order.", "Can you remove the duplicate charge?"]
    assert texts("It costs £49.99, not 1,000... Help!! Thanks") == ["It costs £49.99,", "not 1,000...", "Help!!",
                                                                     "Thanks"]
    assert texts("Hi, my parcel is late but the box was fine") == ["Hi,", "my parcel is late", "but the box was fine"]
    assert texts("and so on") == ["and", "so on"]                      # a conjunction opens a clause after a word
    assert texts("...hello") == ["...hello"]                           # punctuation alone joins its neighbour
    assert texts("refund") == ["refund"]
    assert texts("") == []


def test_phrases_cover_the_tokens_read_and_truncation():
    ph = split_phrases(T65052, 10)
    assert ph[0].start == 0 and ph[-1].end == 10 and all(a.end == b.start for a, b in itertools.pairwise(ph))
    with pytest.raises(ValueError, match="n_tokens"):
        split_phrases("two words", 3)


class TwoTeams(KeywordModel):
    """KeywordModel with team 1 at logit 1: team 0 (3) wins while a token 7 is read, team 1 without one."""

    def forward(self, ids, is_pad=None):
        logits = super().forward(ids, is_pad)
        logits[:, 1] = 1.0
        return logits


def test_deleting_phrases_and_pairs_in_one_pass_finds_redundancy():
    # KeywordModel: team 0 wins while token 7 is present. Two phrases each holding a 7: deleting one does nothing,
    # deleting both flips the team: the redundancy single deletions cannot see.
    from ticketnet.interpret.interventions.phrases import Phrase
    model = TwoTeams().eval()
    ids = torch.tensor([7, 3, 4, 7, 5, 6])
    ph = [Phrase(0, 2, "a"), Phrase(2, 4, "b"), Phrase(4, 6, "c")]
    df = phrase_deletions(model, ids, ph, target=0)
    assert model.calls == 1                                            # one batched pass
    assert list(df.kind) == ["ticket", "single", "single", "single", "pair", "pair", "pair"]
    singles = df[df.kind == "single"]
    assert not singles.flips.any() and (singles.support_logit_diff.abs() < 1e-6).all()
    red = redundant_pairs(df)
    assert list(zip(red["first"], red["second"])) == [(0, 1)] and red.interaction.iloc[0] > 2.9
    assert keep_phrases([7, 3], [Phrase(0, 2, "x")], [False]) == [1]   # nothing left: one <unk>
    assert token_scores(ph, [1.0, 2.0, 3.0]).tolist() == [1, 1, 2, 2, 3, 3]
    with pytest.raises(ValueError, match="cover"):
        phrase_deletions(model, ids, ph[:2], 0)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tiny_tickets(router, n):
    text = " ".join(["refund", "my", "card"][:n])
    enc = router.encode(text)
    ph = split_phrases(text, len(enc.ids))
    df = phrase_deletions(router.model, torch.tensor(enc.ids), ph, 0)
    assert len(df) == 2 and df.iloc[1].text == text                    # one phrase: the ticket and its deletion


def test_suggested_edits():
    assert suggest_edit(T65052, "My card was charged twice for one order|remove the duplicate charge") == (
        "I keep the leaf blower. My card was charged twice for one order. Can you remove the duplicate charge?")
    assert suggest_edit("This isn't about my password. The battery gets hot. Can you help?") == (
        "The battery gets hot. Can you help?")
    assert suggest_edit("My card was charged correctly, but can I exchange it?", "can I exchange it") == (
        "Can I exchange it?")
    assert suggest_edit("Where is my parcel?") is None
    assert has_negation(["isn", "'", "t"]) and not has_negation(["can", "you"])
