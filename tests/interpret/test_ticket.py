"""interpret_ticket puts every method together, on tickets of every length from one token up."""

import pytest
import torch

from tests.conftest import make_router
from ticketnet.interpret import (
    attention_signals, average_precision, chance_band, eraser, evidence_mask, head_importance,
    Counterfactuals, disagreements, interpret_split, interpret_ticket, kendall_taus, random_tau_baseline,
    top_k_overlap, values_of,
)


def test_interpret_ticket_puts_everything_together():
    router = make_router()
    ti = interpret_ticket(router, "w3 w5 w7 w9 w11 w13 unknownword w2", evidence="w7 w9")
    assert isinstance(ti.counterfactuals, Counterfactuals) and ti.note == ""
    assert ti.tokens[6] == "unknownword" and ti.ids[6] == 1
    assert {"removal", "unk replacement", "rollout", "mean attention b1", "mean attention b2", "b1 h1", "b2 h4",
            "integrated gradients"} <= set(ti.signals)
    assert all(s.shape == (8,) for s in ti.signals.values())
    assert ti.patterns.shape == (2, 4, 8, 8) and ti.max_difference < 1e-5
    assert ti.probs.sum().item() == pytest.approx(1.0, abs=1e-6) and ti.target == ti.predicted
    assert list(ti.agreement.columns) == ["signal", "kendall_tau", "spearman", "top3_overlap"]
    assert "removal" not in set(ti.agreement.signal)
    assert {"position", "token", "removal", "removal TV", "unk TV", "evidence"} <= set(ti.per_token.columns)
    assert ti.per_token.evidence.tolist() == [False, False, True, True, False, False, False, False]
    assert set(ti.aopc.signal) == set(ti.signals) | {"random"}
    assert ti.evidence is not None and len(ti.evidence) == len(ti.signals)


def test_interpret_ticket_with_one_token_explains_instead_of_failing():
    ti = interpret_ticket(make_router(), "w4")
    assert ti.counterfactuals is None and "one-token" in ti.note
    assert len(ti.agreement) == 0 and len(ti.eraser) == 0 and "removal" not in ti.signals
    assert ti.signals["rollout"].tolist() == [1.0]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_every_method_on_tiny_tickets(n):
    router = make_router()
    text = " ".join(f"w{i}" for i in range(n))
    res = interpret_ticket(router, text, evidence="w0", n_draws=20)
    assert res.n == n
    assert (res.counterfactuals is None) == (n == 1)
    if n >= 2:
        assert res.counterfactuals.removed.shape == (n, 5)
    assert len(res.per_token) == n and (len(res.agreement) == 0) == (n == 1)
    if n >= 2:
        finite = res.agreement["kendall_tau"].dropna()
        assert ((finite >= -1) & (finite <= 1)).all()
    ids = router.encode(text).ids
    effect = torch.arange(n, dtype=torch.float64)
    assert kendall_taus(effect[None], effect).shape == (1,)
    assert random_tau_baseline(effect, n_draws=5).shape == (5,)
    assert 0 <= top_k_overlap(effect, effect, 3) <= 1
    assert disagreements(effect, effect, [f"w{i}" for i in range(n)], k=3)
    frame = interpret_split(router, [{"ticket_id": f"X{n}", "text": text, "team": "payments"}])
    assert frame.drop_duplicates("ticket_id")["n"].tolist() == [n]
    if n >= 2:
        assert values_of(frame, "tau", "rollout").between(-1, 1).all()
    assert len(ids) == n
    x = torch.tensor([ids])
    heads = head_importance(router.model, x, torch.zeros_like(x, dtype=torch.bool), torch.tensor([0]))
    assert len(heads) == 8 and heads["support_prob"].notna().all()
    assert attention_signals(res.patterns)["rollout"].sum().item() == pytest.approx(1.0)
    gold = evidence_mask(text, n, "w0")
    assert gold.tolist() == [True] + [False] * (n - 1) and average_precision(res.signals["rollout"], gold) > 0
    if n >= 2:
        assert len(eraser(router.model, torch.tensor(ids), {"rollout": res.signals["rollout"]}, 0)) == 5
        assert chance_band(res.random_tau) is None or -1 <= chance_band(res.random_tau).low <= 1


def test_another_target_from_the_memo_equals_a_fresh_run_and_sends_fewer_variants(monkeypatch):
    """What does not depend on the target (removal variants, the logits of phrase coalitions and ERASER variants)
    is taken from the first target's run: the second target's result is the fresh run's, with fewer forward rows."""
    router = make_router()
    text = "w3 w5, w7 w9 but w11 w13. unknownword w2 and w4 w6"
    first = interpret_ticket(router, text, target=0)
    memo: dict = {}
    interpret_ticket(router, text, target=0, memo=memo)
    sent = []
    model_forward = router.model.forward

    def counting(*args, **kwargs):
        sent.append(args[0].shape[0])
        return model_forward(*args, **kwargs)

    monkeypatch.setattr(router.model, "forward", counting)
    fresh = interpret_ticket(router, text, target=1)
    fresh_rows = sum(sent)
    sent.clear()
    again = interpret_ticket(router, text, target=1, counterfactuals=first.counterfactuals, memo=memo)
    assert sum(sent) < fresh_rows / 2
    for name, s in fresh.signals.items():
        assert torch.allclose(again.signals[name], s, atol=1e-5), name
    for table in ("agreement", "aopc", "eraser"):
        a, b = getattr(again, table), getattr(fresh, table)
        assert list(a.columns) == list(b.columns) and len(a) == len(b)
        num = a.select_dtypes("number").columns
        assert (a[num] - b[num]).abs().max().max() <= 1e-5, table


def test_counterfactuals_of_another_ticket_are_refused():
    router = make_router()
    other = interpret_ticket(router, "w3 w5 w7")
    with pytest.raises(ValueError, match="counterfactuals of 3 tokens"):
        interpret_ticket(router, "w3 w5 w7 w9", counterfactuals=other.counterfactuals)


def test_eraser_of_the_chosen_signals_later_equals_the_rows_of_a_full_run():
    """A page that interprets without ERASER and scores only the signals it shows gets the full run's rows for them,
    phrase signals too; a signal scored earlier costs no forward pass the second time (the memo)."""
    from ticketnet.interpret import eraser_table

    router = make_router()
    text = "w3 w5, w7 w9 but w11 w13. unknownword w2 and w4 w6"
    full = interpret_ticket(router, text, target=1)
    memo: dict = {}
    bare = interpret_ticket(router, text, target=1, eraser_signals=(), memo=memo)
    assert len(bare.eraser) == 0 and len(bare.aopc) == 0
    assert not bare.scores["metric"].isin(["comprehensiveness", "sufficiency"]).any()
    assert bare.agreement.equals(full.agreement)
    chosen = ("rollout", "phrase shapley", "random", "integrated gradients")
    got = eraser_table(router.model, bare, chosen, memo=memo)
    want = full.eraser[full.eraser.signal.isin(chosen)].reset_index(drop=True)
    assert list(got.signal.unique()) == [s for s in full.eraser.signal.unique() if s in chosen]
    assert got[["signal", "fraction", "k"]].equals(want[["signal", "fraction", "k"]])
    for m in ("comprehensiveness", "sufficiency"):
        assert (got[m] - want[m]).abs().max() <= 1e-6, m
    size = len(memo)
    again = eraser_table(router.model, bare, chosen[:2], memo=memo)
    assert len(memo) == size and again.equals(got[got.signal.isin(chosen[:2])].reset_index(drop=True))
    assert len(eraser_table(router.model, bare, (), memo=memo)) == 0
    with pytest.raises(ValueError, match="no signal 'b9 h9'"):
        eraser_table(router.model, bare, ("b9 h9",))
    only = interpret_ticket(router, text, target=1, eraser_signals=chosen)
    assert set(only.aopc.signal) == set(chosen)
    one = interpret_ticket(router, "w4", eraser_signals=())
    assert len(eraser_table(router.model, one, ("rollout",))) == 0
