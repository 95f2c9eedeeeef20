"""The shared-block-1 counterfactual engine gives the model's own numbers for every variant, on the shipped router
and on random models, whatever the chunking and threading; peaky attention falls back to the plain path."""

from __future__ import annotations

import threading

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ticketnet.interpret.methods.counterfactual as cf
from tests.conftest import make_model
from ticketnet._runtime.parallel import share_out
from ticketnet.data.text import UNK_ID
from ticketnet.interpret.methods.counterfactual import (
    SHARED_MIN_N, counterfactual_batch, one_token_variants, plain_variant_probs, variant_probs,
)
from ticketnet.nn.transformer import TinyTransformer

TOL = 1e-6


def random_model(seed: int, vocab: int = 40, max_len: int = 80, peaky: float = 1.0) -> TinyTransformer:
    return make_model(seed, vocab, max_len=max_len, head_scale=8, peaky=peaky)   # spread-out probabilities


def assert_same(got: dict, want: dict, tol: float = TOL) -> None:
    assert set(got) == set(want)
    for kind in want:
        assert got[kind].shape == want[kind].shape, kind
        assert (got[kind] - want[kind]).abs().max().item() <= tol, kind


# -- the shipped router ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def long_tickets(router, valid_rows):
    """The longest valid tickets, and one padded out to the position table by repeating words (256 tokens)."""
    rows = sorted(valid_rows, key=lambda r: len(router.encode(r["text"]).ids))
    out = [torch.tensor(router.encode(r["text"]).ids) for r in rows[-3:]]
    words = " ".join([rows[-1]["text"]] * 20)
    out.append(torch.tensor(router.encode(words).ids))
    assert out[-1].numel() == router.model.config.max_len
    return out


def test_engine_matches_the_model_on_every_variant_of_long_tickets(router, long_tickets, monkeypatch):
    monkeypatch.setattr(cf, "_plain", lambda *a: pytest.fail("nothing underflows on the shipped router"))
    for ids in long_tickets:
        got = one_token_variants(router.model, ids, UNK_ID)
        assert_same(got, plain_variant_probs(router.model, ids, UNK_ID))
        assert torch.allclose(got["deleted"].sum(-1), torch.ones(ids.numel()))


def test_chunks_and_threads_do_not_change_the_numbers(router, long_tickets, monkeypatch):
    ids = long_tickets[0]
    whole = one_token_variants(router.model, ids, UNK_ID, workers=1)
    monkeypatch.setattr(cf, "ROWS_PER_CHUNK", 3 * ids.numel())         # three variants per chunk, last one short
    for workers in (1, 2, 3):
        assert_same(one_token_variants(router.model, ids, UNK_ID, workers=workers), whole)   # summation order only


@pytest.mark.parametrize("kinds", [("deleted",), ("replaced",), ("replaced", "deleted")])
def test_one_kind_alone(router, long_tickets, kinds):
    ids = long_tickets[0]
    got = one_token_variants(router.model, ids, UNK_ID, kinds)
    assert set(got) == {"ticket", *kinds}
    assert_same(got, plain_variant_probs(router.model, ids, UNK_ID, kinds))


def test_variant_probs_shares_block1_only_where_it_pays(router, long_tickets, monkeypatch):
    calls = []
    real = cf.one_token_variants
    monkeypatch.setattr(cf, "one_token_variants", lambda *a, **k: calls.append(a[1].numel()) or real(*a, **k))
    long, short = long_tickets[0], long_tickets[0][: SHARED_MIN_N - 1]
    assert_same(variant_probs(router.model, long), plain_variant_probs(router.model, long, UNK_ID))
    assert_same(variant_probs(router.model, short), plain_variant_probs(router.model, short, UNK_ID))
    assert calls == [long.numel()]


# -- random models -----------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), ids=st.lists(st.integers(2, 39), min_size=1, max_size=60), unk=st.integers(1, 39))
def test_engine_matches_the_model_on_random_models(seed, ids, unk):
    model = random_model(seed)
    ids = torch.tensor(ids)
    kinds = ("deleted", "replaced") if ids.numel() >= 2 else ("replaced",)
    assert_same(one_token_variants(model, ids, unk, kinds), plain_variant_probs(model, ids, unk, kinds))


def test_underflowing_softmax_runs_the_plain_way(monkeypatch):
    model = random_model(3, peaky=400.0)                               # score gaps far beyond exp's range
    ids = torch.randint(2, 40, (50,), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        sb = cf.shared_block1(model, ids, UNK_ID)
    assert float(sb.w["tt"].min()) == 0.0                             # some ticket weights did underflow
    fallback = []
    real = cf._plain
    monkeypatch.setattr(cf, "_plain", lambda m, i, kind, cuts, u: fallback.append((kind, len(cuts))) or real(m, i, kind, cuts, u))
    got = one_token_variants(model, ids, UNK_ID)
    assert fallback, "this model must take the fallback"
    assert all(torch.isfinite(t).all() for t in got.values())
    assert_same(got, plain_variant_probs(model, ids, UNK_ID))


# -- refusals ----------------------------------------------------------------------------------------------
def test_refusals(router):
    model = router.model
    with pytest.raises(ValueError, match="deletion needs n ≥ 2"):
        variant_probs(model, torch.tensor([5]))
    one = variant_probs(model, torch.tensor([5]), kinds=("replaced",))
    assert one["replaced"].shape == (1, len(router.teams))
    with pytest.raises(ValueError, match="kinds"):
        variant_probs(model, torch.tensor([5, 6]), kinds=("swapped",))
    with pytest.raises(ValueError, match="kinds"):
        variant_probs(model, torch.tensor([5, 6]), kinds=())
    with pytest.raises(ValueError, match="position table"):
        one_token_variants(model, torch.full((model.config.max_len + 1,), 5), UNK_ID)
    with pytest.raises(ValueError, match="<pad>"):
        one_token_variants(model, torch.tensor([5, 0, 6]), UNK_ID)
    trained = random_model(0).train()
    with pytest.raises(ValueError, match="eval mode"):
        one_token_variants(trained, torch.tensor([5, 6]), UNK_ID)


def test_counterfactual_batch_of_one_kind():
    ids, is_pad = counterfactual_batch(torch.tensor([5, 6, 7]), unk_id=1, kinds=("replaced",))
    assert ids.tolist() == [[5, 6, 7], [1, 6, 7], [5, 1, 7], [5, 6, 1]]
    assert not is_pad.any()
    with pytest.raises(ValueError, match="kinds"):
        counterfactual_batch(torch.tensor([5, 6]), kinds=("shuffled",))


def test_unk_id_and_dtype(router):
    ids = torch.arange(2, 2 + SHARED_MIN_N)
    for bad in (-1, router.model.config.vocab_size):
        with pytest.raises(ValueError, match="unk_id"):
            one_token_variants(router.model, ids, bad)
    model = random_model(1).double()
    got = one_token_variants(model, ids[:30] % 38 + 2, UNK_ID)
    assert all(t.dtype == torch.float64 for t in got.values())
    assert_same(got, plain_variant_probs(model, ids[:30] % 38 + 2, UNK_ID), tol=1e-12)


# -- worker threads ----------------------------------------------------------------------------------------
def test_share_out_runs_every_chunk_once_and_restores_the_process_wide_thread_count():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen = []
        share_out(lambda share: seen.extend(share), list(range(11)), workers=3)
        assert sorted(seen) == list(range(11))
        assert torch.get_num_threads() == 2
        fresh = []                                                     # what a thread started now would get
        t = threading.Thread(target=lambda: fresh.append(torch.get_num_threads()))
        t.start()
        t.join()
        assert fresh == [2]
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("failing", [4, 5])                          # the caller's share, then a helper's
def test_share_out_raises_a_workers_error_in_the_caller(failing):
    def run(share):
        if failing in share:
            raise RuntimeError(f"chunk {failing} failed")

    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match=f"chunk {failing}"):
        share_out(run, list(range(6)), workers=2)
    assert torch.get_num_threads() == before


def test_share_out_helpers_work_in_the_callers_inference_mode():
    out = torch.empty(0)
    with torch.inference_mode():
        out = torch.zeros(4)                                           # an inference tensor

        def run(share):
            for i in share:
                out[i] = torch.is_inference_mode_enabled()             # writing it needs inference mode

        share_out(run, [0, 1, 2, 3], workers=2)
    assert out.tolist() == [1.0] * 4
