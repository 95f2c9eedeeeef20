"""Patching: everything patched reproduces the other run, nothing patched changes nothing, alignment by LCS."""

import copy

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import make_model
from ticketnet.interpret.interventions.patching import align_tokens, contrast_patching, patched_heads, patched_residual, ticket_run

T65052 = ("It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
          "Can you remove the duplicate charge?")


def test_alignment_matches_then_pairs_equal_gaps():
    al = align_tokens(["a", "b", "c", "d"], ["a", "x", "c", "d"])
    assert al.pairs == ((0, 0), (1, 1), (2, 2), (3, 3))               # b -> x is a substitution
    al = align_tokens(["it", "s", "not", "a", "problem", "and", "i", "keep", "it"], ["i", "keep", "it"])
    assert al.pairs == ((6, 0), (7, 1), (8, 2))
    assert al.a_to_b()[:6] == [None] * 6 and al.b_to_a() == [6, 7, 8]
    assert align_tokens([], ["a"]).pairs == ()
    assert align_tokens(["a", "b"], ["b", "a"]).pairs in (((0, 1),), ((1, 0),))
    assert align_tokens(["x", "y"], ["p", "q"]).pairs == ((0, 0), (1, 1))


@pytest.fixture(scope="module")
def model64(router):
    return copy.deepcopy(router.model).double()


def test_everything_patched_is_the_other_run_and_nothing_patched_changes_nothing(router, model64):
    a = torch.tensor(router.encode(T65052).ids)
    b = a.clone()
    b[3] = router.vocab.stoi.get("returns", 5)                        # same length: all aligned
    ra, rb = ticket_run(model64, a), ticket_run(model64, b)
    everything = [(i, i) for i in range(a.numel())]
    for layer in range(3):
        logits = patched_residual(model64, ra, rb, layer, [everything, []])
        assert (logits[0] - ra.logits).abs().max() <= 1e-9          # b with all of a's stream is a
        assert (logits[1] - rb.logits).abs().max() <= 1e-9          # nothing patched: b
    for block in range(2):
        logits = patched_heads(model64, ra, rb, block, [[]])
        assert (logits[0] - rb.logits).abs().max() <= 1e-9


def test_contrast_patching_on_t65052(router):
    edited = T65052.replace("It's not a delivery problem and ", "")
    ea, eb = router.encode(T65052), router.encode(edited)
    cp = contrast_patching(router.model, torch.tensor(ea.ids), torch.tensor(eb.ids), 0, ea.tokens, eb.tokens)
    assert len(cp.heads) == 2 * 2 * 4
    n_a, n_b = len(ea.ids), len(eb.ids)
    assert len(cp.resid) == 3 * (n_a + n_b)
    ab = cp.resid[cp.resid.direction == "a→b"]
    assert ab.aligned.all()                                            # every token of the edit is in the ticket
    ba = cp.resid[cp.resid.direction == "b→a"]
    assert (~ba.aligned).sum() == 3 * (n_a - n_b) and ba[~ba.aligned].share_logit_diff.isna().all()
    # Block-1 input at an aligned position holds the same token embedding but a different position vector.
    assert cp.heads.share_logit_diff.notna().all()


def test_identical_runs_have_no_change_to_share(router):
    ids = torch.tensor(router.encode("Where is my parcel?").ids)
    cp = contrast_patching(router.model, ids, ids, 1)
    assert cp.heads.share_logit_diff.isna().all()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=st.lists(st.integers(2, 11), min_size=1, max_size=8), data=st.data(), seed=st.integers(0, 2**16))
def test_patching_everything_or_nothing_on_random_models(a, data, seed):
    model = make_model(seed, 12, d=8, h=2, d_ff=16, max_len=12, head_scale=8).double()
    b = [data.draw(st.integers(2, 11)) for _ in a]                     # same length, any tokens
    ra, rb = ticket_run(model, torch.tensor(a)), ticket_run(model, torch.tensor(b))
    everything = [(i, i) for i in range(len(a))]
    for layer in range(3):
        logits = patched_residual(model, ra, rb, layer, [everything, []])
        assert (logits[0] - ra.logits).abs().max() <= 1e-9
        assert (logits[1] - rb.logits).abs().max() <= 1e-9
    full = [[(k, i, i) for k in range(2) for i in range(len(a))]]
    heads_from_a = patched_heads(model, ra, rb, 0, full)[0]            # block 1 heads of a, b's own stream
    assert torch.isfinite(heads_from_a).all()
    assert (patched_heads(model, ra, rb, 1, [[]])[0] - rb.logits).abs().max() <= 1e-9
