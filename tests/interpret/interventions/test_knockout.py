"""Edge knockout: the engine equals a hand-built renormalised pattern run through the model, on the shipped router."""

import copy

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import make_model
from ticketnet.interpret.interventions.knockout import edge_disagreements, edge_knockout, effect_map
from ticketnet.interpret.interventions.units import logit_difference
from ticketnet.lens.inspection import act_name, run_from_block, run_with_cache

T65052 = ("It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
          "Can you remove the duplicate charge?")


def by_hand(model, ids, block, head, query, key, target):
    """The knocked-out pattern built by hand (weight 0, the row renormalised; a row left empty reads nothing)
    and run from the block through the lens: the edge's support (ticket − cut) in logit difference and probability."""
    n = ids.numel()
    with torch.inference_mode():
        _, cache = run_with_cache(model, ids[None], torch.zeros(1, n, dtype=torch.bool))
        x = cache[act_name("resid_pre", block)]
        p = cache[act_name("pattern", block)].clone()
        row = p[0, head, query].clone()
        row[key] = 0
        p[0, head, query] = row / row.sum() if row.sum() > 0 else row
        cut, base = run_from_block(model, x, block, pattern=p)[0], run_from_block(model, x, block)[0]
    return (float(logit_difference(base, target) - logit_difference(cut, target)),
            float(torch.softmax(base, -1)[target] - torch.softmax(cut, -1)[target]))


@pytest.fixture(scope="module")
def router64(router):
    """The shipped router in float64, so the comparison measures the engine, not float32 rounding."""
    r = copy.copy(router)
    r.model = copy.deepcopy(router.model).double()
    return r


@pytest.mark.parametrize("block", [0, 1])
def test_row_knockout_matches_the_hand_built_pattern_on_the_shipped_router(router, router64, block):
    ids = torch.tensor(router.encode(T65052).ids)
    for r, tol in ((router64, 1e-9), (router, 5e-6)):
        ko = edge_knockout(r.model, ids, block, 2, 5, target=0)
        for key in range(ids.numel()):
            ld, p = by_hand(r.model, ids, block, 2, 5, key, 0)
            assert abs(float(ko.support["logit_diff"][key]) - ld) <= tol
            assert abs(float(ko.support["prob"][key]) - p) <= tol
    assert ko.weights.sum().item() == pytest.approx(1.0, abs=1e-5)
    assert -1 <= ko.tau() <= 1


def test_effect_map_rows_are_the_row_knockouts(router64):
    ids = torch.tensor(router64.encode("My card was charged twice, please refund.").ids)
    em = effect_map(router64.model, ids, 0, 1, target=0)
    n = ids.numel()
    assert em.weights.shape == em.support["logit_diff"].shape == (n, n)
    for q in (0, n - 1):
        row = edge_knockout(router64.model, ids, 0, 1, q, target=0)
        assert (row.support["logit_diff"] - em.support["logit_diff"][q]).abs().max() <= 1e-9
    assert -1 <= em.tau() <= 1


def test_one_two_three_token_tickets_and_refusals(router64):
    m = router64.model
    for n in (1, 2, 3):
        ids = torch.arange(5, 5 + n)
        for block in (0, 1):
            ko = edge_knockout(m, ids, block, 0, n - 1, 0)
            for key in range(n):                                       # n = 1: the row reads nothing at all
                assert abs(float(ko.support["logit_diff"][key]) - by_hand(m, ids, block, 0, n - 1, key, 0)[0]) <= 1e-9
    with pytest.raises(ValueError, match="query"):
        edge_knockout(m, torch.arange(5, 8), 0, 0, 3, 0)
    with pytest.raises(ValueError, match="head"):
        edge_knockout(m, torch.arange(5, 8), 0, 4, 0, 0)
    with pytest.raises(ValueError, match="edge_knockout"):
        effect_map(m, torch.arange(2, 52), 0, 0, 0)


def test_disagreements_name_edges(router):
    ids = torch.tensor(router.encode(T65052).ids)
    ko = edge_knockout(router.model, ids, 0, 0, 3, 0)
    found = edge_disagreements(ko, router.encode(T65052).tokens)
    assert set(found) == {"high_attention_low_effect", "low_attention_high_effect"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=st.lists(st.integers(2, 11), min_size=1, max_size=8), seed=st.integers(0, 2**16),
       block=st.integers(0, 1), head=st.integers(0, 1), at=st.integers(0, 7), target=st.integers(0, 4))
def test_knockout_equals_the_hand_built_pattern_on_random_models(ids, seed, block, head, at, target):
    model = make_model(seed, 12, d=8, h=2, d_ff=16, max_len=12, head_scale=8, peaky=3.0).double()
    ids = torch.tensor(ids)
    q = at % ids.numel()
    ko = edge_knockout(model, ids, block, head, q, target)
    for key in range(ids.numel()):
        ld, p = by_hand(model, ids, block, head, q, key, target)
        assert abs(float(ko.support["logit_diff"][key]) - ld) <= 1e-8
        assert abs(float(ko.support["prob"][key]) - p) <= 1e-8
