"""score_ticket on hand-built signals: τ, ρ and top-3 against the effect, evidence rows, and the ERASER plan."""

import math

import pytest
import torch

from ticketnet.interpret import signals as sg
from ticketnet.interpret.metrics.scores import score_ticket


def test_scores_of_hand_built_signals():
    ids = torch.tensor([5, 6, 7, 8])
    effect = torch.tensor([0.4, 0.3, 0.2, 0.1])
    scores = {"same": effect.clone(), "reversed": -effect, "flat": torch.ones(4)}
    gold = torch.tensor([True, False, False, False])
    got = score_ticket("t", ids, scores, effect, tau=["flat"], agreement=["same", "reversed"], eraser=["same"],
                       evidence=["same", "reversed"], gold=gold, fractions=(0.25, 0.5))
    value = {(s, m): v for t, s, m, v in got.rows if t == "t"}
    assert value[("same", sg.TAU)] == 1.0 and value[("reversed", sg.TAU)] == -1.0
    assert math.isnan(value[("flat", sg.TAU)])                          # a constant signal ranks nothing
    assert value[("same", sg.SPEARMAN)] == pytest.approx(1.0) and value[("reversed", sg.TOP3_OVERLAP)] == 2 / 3
    assert value[("same", sg.AUPRC)] == 1.0 and value[("reversed", sg.AUPRC)] == 0.25
    assert value[("same", sg.TOKEN_F1)] == 1.0 and value[("reversed", sg.TOKEN_F1)] == 0.0
    # ERASER: x∖r and r per fraction, the top tokens by the signal; p(target) hand-made, base 0.9.
    assert [(f, k, removed, kept) for _, f, k, removed, kept in got.plan] == [(0.25, 1, [6, 7, 8], [5]),
                                                                              (0.5, 2, [7, 8], [5, 6])]
    assert got.sequences() == [[6, 7, 8], [5], [7, 8], [5, 6]]
    p = torch.tensor([0.5, 0.8, 0.3, 0.9], dtype=torch.float64)
    aopc = {m: v for _, _, m, v in got.aopc_rows(p, 0.9)}
    assert aopc[sg.COMPREHENSIVENESS] == pytest.approx(((0.9 - 0.5) + (0.9 - 0.3)) / 2)
    assert aopc[sg.SUFFICIENCY] == pytest.approx(((0.9 - 0.8) + (0.9 - 0.9)) / 2)
    table = got.eraser_table(p, torch.tensor(0.9, dtype=torch.float64))
    assert table[sg.COMPREHENSIVENESS].tolist() == pytest.approx([0.4, 0.6])


def test_without_evidence_the_rows_are_there_and_nan_and_tau_needs_an_effect():
    ids, s = torch.tensor([5, 6]), {"a": torch.tensor([1.0, 0.0])}
    rows = score_ticket(None, ids, s, None, evidence=["a"]).rows
    assert [(n, m) for _, n, m, _ in rows] == [("a", sg.AUPRC), ("a", sg.TOKEN_F1)]
    assert all(math.isnan(v) for *_, v in rows)
    with pytest.raises(ValueError, match="removal effect"):
        score_ticket(None, ids, s, None, tau=["a"])
