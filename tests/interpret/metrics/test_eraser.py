"""ERASER comprehensiveness and sufficiency on the keyword model, and the rationale sizes."""

import pytest
import torch

from tests.conftest import P_WITH, P_WITHOUT, TICKET, KeywordModel
from ticketnet.interpret import aopc, eraser, rationale_variants


def test_rationale_variants_keep_reading_order():
    removed, kept = rationale_variants(torch.tensor([5, 6, 7, 8]), torch.tensor([0.1, 0.9, 0.5, 0.9]), 2)
    assert removed.tolist() == [5, 7] and kept.tolist() == [6, 8]
    with pytest.raises(ValueError):
        rationale_variants(torch.tensor([5, 6]), torch.tensor([0.1, 0.9]), 2)


def test_eraser_on_the_keyword_model():
    model = KeywordModel().eval()
    right = (TICKET == 7).double()                                     # the keyword's indicator
    wrong = -right                                                     # anything but the keyword
    df = eraser(model, TICKET, {"right": right, "wrong": wrong}, target=0, fractions=(0.1, 0.5))
    assert model.calls == 1                                            # every variant in one pass
    assert list(df.columns) == ["signal", "fraction", "k", "comprehensiveness", "sufficiency"]
    at = df.set_index(["signal", "k"])
    assert at.loc[("right", 1), "comprehensiveness"] == pytest.approx(P_WITH - P_WITHOUT, abs=1e-6)
    assert at.loc[("right", 1), "sufficiency"] == pytest.approx(0.0, abs=1e-6)
    assert at.loc[("wrong", 5), "comprehensiveness"] == pytest.approx(0.0, abs=1e-6)
    assert at.loc[("wrong", 5), "sufficiency"] == pytest.approx(P_WITH - P_WITHOUT, abs=1e-6)
    table = aopc(df).set_index("signal")
    assert table.loc["right", "comprehensiveness"] == pytest.approx(P_WITH - P_WITHOUT, abs=1e-6)
    assert table.loc["wrong", "sufficiency"] == pytest.approx(P_WITH - P_WITHOUT, abs=1e-6)


def test_eraser_k_is_at_least_one_and_below_n():
    df = eraser(KeywordModel().eval(), torch.tensor([7, 3]), {"s": torch.tensor([1.0, 0.0])}, 0)
    assert set(df["k"]) == {1}
