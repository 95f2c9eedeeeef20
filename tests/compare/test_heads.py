"""Per-head attention divergence and deletion agreement between two routers, against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import jensenshannon
from scipy.stats import kendalltau

from tests.conftest import KEYWORD_ID, keyword_transformer, make_router

TEXTS = ("w3 w5 w7 w1 w9 w2", "w4 w4 w8", "w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21", "w6",
         "w1 w2 w3 w1 w2 w3 w30 w31")


def _loop_divergence(router_a, router_b, texts) -> np.ndarray:
    """The same mean, one ticket at a time: each router's own unpadded inspection, scipy's Jensen–Shannon distance
    squared (natural log) per query row, averaged over the rows, then over the tickets."""
    from ticketnet.lens.inspection import inspect_ticket

    n_blocks, h = router_a.model.config.n_blocks, router_a.model.config.h
    total = np.zeros((n_blocks, h))
    for text in texts:
        pa, pb = inspect_ticket(router_a, text).patterns.double().numpy(), inspect_ticket(router_b, text).patterns.double().numpy()
        n = pa.shape[-1]
        for block in range(n_blocks):
            for head in range(h):
                total[block, head] += np.mean([jensenshannon(pa[block, head, i], pb[block, head, i]) ** 2
                                               for i in range(n)])
    return total / len(texts)


def _matrix(df) -> np.ndarray:
    return df.pivot(index="block", columns="head", values="jsd").to_numpy()


def test_identical_routers_diverge_nowhere():
    from ticketnet.compare import attention_divergence

    r = make_router(0)
    out = attention_divergence(r, r, TEXTS)
    assert list(out.columns) == ["block", "head", "jsd", "tickets"]
    assert len(out) == 8 and (out["tickets"] == len(TEXTS)).all()
    assert (out["jsd"] == 0).all()


def test_the_batched_pass_equals_a_loop_over_tickets_and_is_symmetric():
    from ticketnet.compare import attention_divergence

    a, b = make_router(0, peaky=3.0), make_router(1)
    ab = attention_divergence(a, b, TEXTS)
    assert ab["jsd"].gt(1e-4).all(), "two random routers should read differently"
    np.testing.assert_allclose(_matrix(ab), _loop_divergence(a, b, TEXTS), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_matrix(attention_divergence(b, a, TEXTS)), _matrix(ab), rtol=0, atol=1e-12)


def test_every_ticket_weighs_the_same_not_every_row():
    from ticketnet.compare import attention_divergence

    a, b = make_router(0, peaky=3.0), make_router(1)
    per_ticket = [_matrix(attention_divergence(a, b, [t])) for t in TEXTS]
    np.testing.assert_allclose(_matrix(attention_divergence(a, b, TEXTS)), np.mean(per_ticket, axis=0),
                               rtol=1e-5, atol=1e-9)   # float32 batches of other shapes: not bit-equal


def test_jensen_shannon_is_bounded_by_ln2_and_matches_scipy():
    from ticketnet.compare import jensen_shannon

    disjoint = jensen_shannon(torch.tensor([0.5, 0.5, 0.0, 0.0]), torch.tensor([0.0, 0.0, 0.3, 0.7]))
    assert float(disjoint) == pytest.approx(math.log(2), abs=1e-12)
    gen = torch.Generator().manual_seed(0)
    p = torch.softmax(3 * torch.randn(200, 17, generator=gen), -1)
    q = torch.softmax(3 * torch.randn(200, 17, generator=gen), -1)
    p[:50, 10:] = 0                                      # zero weights, as padding keys have
    p = p / p.sum(-1, keepdim=True)
    js = jensen_shannon(p, q).numpy()
    assert (js >= 0).all() and (js <= math.log(2)).all()
    expected = np.array([jensenshannon(x, y) ** 2 for x, y in zip(p.double().numpy(), q.double().numpy())])
    np.testing.assert_allclose(js, expected, rtol=1e-5, atol=1e-9)
    np.testing.assert_array_equal(jensen_shannon(q, p).numpy(), js)
    assert (jensen_shannon(p, p).numpy() == 0).all()


def test_routers_of_different_shapes_are_refused_with_one_line():
    from ticketnet.compare import attention_divergence, head_changes  # noqa: F401

    with pytest.raises(ValueError, match=r"different shapes \(A: 2 block\(s\) of 4 heads, B: 2 block\(s\) of 2 "
                                         r"heads\)") as caught:
        attention_divergence(make_router(0), make_router(0, h=2, d=16), TEXTS)
    assert "\n" not in str(caught.value)


def test_no_tickets_is_refused():
    from ticketnet.compare import attention_divergence

    with pytest.raises(ValueError, match="at least one ticket"):
        attention_divergence(make_router(0), make_router(1), [])


def test_a_router_against_itself_has_tau_one_and_equal_effects():
    from ticketnet.compare import deletion_agreement

    r = make_router(2, head_scale=20.0)
    found = deletion_agreement(r, r, TEXTS[0])
    assert found.tau == pytest.approx(1.0)
    np.testing.assert_array_equal(found.support_a, found.support_b)
    assert found.team_a == found.team_b and found.tokens == TEXTS[0].split()
    assert list(found.frame().columns) == ["position", "token", "support_a", "support_b"]


def test_deletion_effects_follow_the_sign_convention_and_each_routers_own_team():
    from ticketnet import Router, Vocab
    from ticketnet.compare import deletion_agreement

    words = ["<pad>", "<unk>", *(f"k{i}" for i in range(2, 12))]
    keyword = Router(keyword_transformer(), Vocab(itos=words), ("alpha", "beta", "gamma"))
    other = make_router(3, vocab=12, n_classes=3, head_scale=20.0)
    other = Router(other.model, Vocab(itos=words), ("alpha", "beta", "gamma"))
    text = f"k3 k4 {words[KEYWORD_ID]} k5 k6"
    found = deletion_agreement(keyword, other, text)
    assert found.team_a == "alpha"                      # the keyword helps team 0
    assert found.support_a[2] > 0 and found.support_a[2] == found.support_a.max()
    # independent: p(alpha) with the keyword minus p(alpha) without it, in logit difference
    with torch.no_grad():
        probs = torch.softmax(keyword.model(torch.tensor([[3, 4, KEYWORD_ID, 5, 6], [3, 4, 5, 6, 0]])), -1).double()
    logit = torch.log(probs[:, 0]) - torch.log(1 - probs[:, 0])
    assert found.support_a[2] == pytest.approx(float(logit[0] - logit[1]), rel=1e-5)
    with torch.no_grad():
        b_team = other.teams[int(other.model(torch.tensor([[3, 4, KEYWORD_ID, 5, 6]])).argmax())]
    assert found.team_b == b_team
    expected = kendalltau(found.support_a, found.support_b).statistic
    assert found.tau == pytest.approx(expected)


def test_routers_with_other_vocabularies_are_aligned_on_word_positions():
    from ticketnet import Router, Vocab
    from ticketnet.compare import attention_divergence, deletion_agreement, shared_reading

    a = make_router(0)
    # B knows the same words under other ids, and not w5 at all: it reads <unk> there, at the same position
    words = [w for w in a.vocab.itos[2:] if w != "w5"][::-1]
    b = Router(make_router(1).model, Vocab(itos=["<pad>", "<unk>", *words]), a.teams)
    reading = shared_reading(a, b, TEXTS[0])
    assert reading.tokens == TEXTS[0].split()
    assert reading.a.ids == a.encode(TEXTS[0]).ids and reading.b.ids == b.encode(TEXTS[0]).ids
    assert reading.b.ids[1] == 1 and reading.a.ids[1] != 1 and reading.b.unknown == 1
    assert reading.a.ids != reading.b.ids
    found = deletion_agreement(a, b, TEXTS[0])
    alone = deletion_agreement(b, b, TEXTS[0])          # B's effects are B's, whoever it is compared with
    np.testing.assert_array_equal(found.support_b, alone.support_b)
    np.testing.assert_allclose(_matrix(attention_divergence(a, b, TEXTS)), _loop_divergence(a, b, TEXTS),
                               rtol=1e-5, atol=1e-7)


def test_a_shorter_position_table_cuts_both_readings_to_the_shared_tokens():
    from ticketnet.compare import attention_divergence, deletion_agreement, shared_reading

    long_text = " ".join(f"w{i}" for i in range(20))
    a, b = make_router(0, max_len=64), make_router(1, max_len=8)
    reading = shared_reading(a, b, long_text)
    assert len(reading.tokens) == 8 and reading.a.ids == a.encode(long_text).ids[:8]
    assert len(deletion_agreement(a, b, long_text).support_a) == 8
    cut = " ".join(long_text.split()[:8])
    np.testing.assert_allclose(_matrix(attention_divergence(a, b, [long_text])),
                               _loop_divergence(a, b, [cut]), rtol=1e-5, atol=1e-7)


def test_a_one_token_ticket_has_no_deletion_effects():
    from ticketnet.compare import deletion_agreement

    with pytest.raises(ValueError, match="at least two tokens"):
        deletion_agreement(make_router(0), make_router(1), "w3")


def test_head_changes_put_each_routers_importance_beside_the_divergence():
    from ticketnet.compare import attention_divergence, head_changes, head_importance_on
    from ticketnet.interpret.methods.heads import head_importance_by_length

    a, b = make_router(0, head_scale=20.0), make_router(1, head_scale=20.0)
    teams = [a.teams[i % 5] for i in range(len(TEXTS))]
    imp_a = head_importance_on(a, TEXTS, teams)
    expected = head_importance_by_length(a.model, [a.encode(t).ids for t in TEXTS], [a.teams.index(t) for t in teams])
    np.testing.assert_allclose(imp_a["accuracy_drop"], expected["accuracy_drop"])
    out = head_changes(attention_divergence(a, b, TEXTS), imp_a, None)
    assert list(out.columns) == ["block", "head", "jsd", "tickets", "accuracy_drop_a", "support_logit_diff_a"]
    np.testing.assert_allclose(out["support_logit_diff_a"], expected["support_logit_diff"])


def test_head_importance_reads_only_the_tickets_whose_team_the_router_knows():
    from ticketnet.compare import head_importance_on
    from ticketnet.interpret.methods.heads import head_importance_by_length

    r = make_router(0, head_scale=20.0)
    teams = [r.teams[0], "not a team", r.teams[1], "not a team", r.teams[2]]
    got = head_importance_on(r, TEXTS, teams)
    kept = [0, 2, 4]
    expected = head_importance_by_length(r.model, [r.encode(TEXTS[i]).ids for i in kept], [0, 1, 2])
    np.testing.assert_allclose(got["support_prob"], expected["support_prob"])
    with pytest.raises(ValueError, match="knows none"):
        head_importance_on(r, TEXTS, ["nobody"] * len(TEXTS))


def test_the_shape_check_reads_router_json_configs_without_weights():
    from ticketnet.compare import shape_mismatch

    a, b = make_router(0), make_router(0, h=2, d=16)
    assert shape_mismatch(a.model.config.to_dict(), b.model.config.to_dict()) == shape_mismatch(a, b)
    assert shape_mismatch(a, b).startswith("the routers have different shapes")
    assert shape_mismatch(a.model.config.to_dict(), make_router(4, d=32, d_ff=16).model.config.to_dict()) is None
