"""Evidence masks from annotated phrases, average precision and token F1 by hand."""

import math

import pytest
import torch

from ticketnet.interpret import average_precision, evidence_mask, evidence_recovery


def test_evidence_mask_on_a_known_text():
    text = "My card was CHARGED twice for order 123."
    # tokens: my card was charged twice for order 123 .
    mask = evidence_mask(text, 9, "charged twice | order 123")
    assert mask.tolist() == [False, False, False, True, True, False, True, True, False]
    assert evidence_mask(text, 5, "charged twice|order 123").tolist() == [False, False, False, True, True]
    assert not evidence_mask(text, 9, "").any()
    assert not evidence_mask(text, 9, "not in the text").any()
    with pytest.raises(ValueError):
        evidence_mask(text, 10, "card")


def test_average_precision_and_token_f1_by_hand():
    signal = torch.tensor([0.9, 0.8, 0.7, 0.6])
    gold = torch.tensor([True, False, True, False])                    # gold at ranks 1 and 3
    assert average_precision(signal, gold) == pytest.approx((1 + 2 / 3) / 2)
    assert evidence_recovery(signal, gold) == {"auprc": pytest.approx(5 / 6), "token_f1": 0.5}
    assert evidence_recovery(signal, torch.tensor([True, True, False, False]))["auprc"] == 1.0
    empty = evidence_recovery(signal, torch.zeros(4, dtype=torch.bool))
    assert math.isnan(empty["auprc"]) and math.isnan(empty["token_f1"])
