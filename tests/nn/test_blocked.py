"""blocked_attention equals the readable attention(): shapes, block sizes, masks, fully masked rows."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ticketnet.nn.attention import attention, causal_mask, padding_mask
from ticketnet.nn.blocked import blocked_attention

TOL = {torch.float32: 1e-5, torch.float64: 1e-12}


def close(Q, K, V, mask=None, **blocks):
    ours = blocked_attention(Q, K, V, mask, **blocks)
    ref, _ = attention(Q, K, V, mask)
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    diff = (ours - ref).abs().max().item() if ref.numel() else 0.0
    assert not torch.isnan(ours).any()
    assert diff <= TOL[Q.dtype], diff
    return ours


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), m=st.integers(1, 40), d_k=st.integers(1, 12), d_v=st.integers(1, 9),
       bq=st.integers(1, 17), bk=st.integers(1, 17), batch=st.lists(st.integers(1, 3), max_size=2),
       seed=st.integers(0, 2**16), f64=st.booleans())
def test_equals_readable_attention_on_random_shapes(n, m, d_k, d_v, bq, bk, batch, seed, f64):
    g = torch.Generator().manual_seed(seed)
    dt = torch.float64 if f64 else torch.float32
    Q = torch.randn(*batch, n, d_k, generator=g, dtype=dt) * 2
    K = torch.randn(*batch, m, d_k, generator=g, dtype=dt) * 2
    V = torch.randn(*batch, m, d_v, generator=g, dtype=dt)
    close(Q, K, V, block_q=bq, block_k=bk)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), m=st.integers(1, 30), bq=st.integers(1, 11), bk=st.integers(1, 11),
       seed=st.integers(0, 2**16), p=st.floats(0.0, 1.0))
def test_random_masks_including_fully_masked_rows(n, m, bq, bk, seed, p):
    g = torch.Generator().manual_seed(seed)
    Q, K, V = torch.randn(2, n, 8, generator=g), torch.randn(2, m, 8, generator=g), torch.randn(2, m, 4, generator=g)
    hidden = torch.rand(2, n, m, generator=g) < p
    mask = torch.zeros(2, n, m).masked_fill(hidden, float("-inf"))
    out = close(Q, K, V, mask, block_q=bq, block_k=bk)
    dead = hidden.all(-1)
    assert (out[dead] == 0).all()


def test_causal_and_padding_masks_broadcast():
    g = torch.Generator().manual_seed(0)
    lengths = torch.tensor([7, 5, 3])
    is_pad = torch.arange(7)[None, :] >= lengths[:, None]
    Q, K, V = (torch.randn(3, 4, 7, 16, generator=g) for _ in range(3))      # (B, h, n, d_k)
    for mask in (causal_mask(7), padding_mask(is_pad), causal_mask(7) + padding_mask(is_pad)):
        for bq, bk in ((1, 1), (2, 3), (7, 7), (64, 64)):
            close(Q, K, V, mask, block_q=bq, block_k=bk)


def test_finite_additive_masks_and_float64():
    g = torch.Generator().manual_seed(1)
    Q, K, V = (torch.randn(5, 9, 6, generator=g, dtype=torch.float64) for _ in range(3))
    bias = torch.randn(9, 9, generator=g, dtype=torch.float64) * 3          # a finite bias, like ALiBi
    close(Q, K, V, bias, block_q=4, block_k=2)


def test_a_long_sequence_across_many_blocks():
    g = torch.Generator().manual_seed(2)
    Q, K, V = (torch.randn(1, 1000, 64, generator=g) for _ in range(3))
    close(Q, K, V, block_q=96, block_k=128)
    close(Q, K, V, causal_mask(1000), block_q=96, block_k=128)
    Q, K, V = Q.double(), K.double(), V.double()                              # large scores: the running max matters
    close(Q * 10, K * 10, V, block_q=300, block_k=77)                       # (float32 rounding of scores ~800 is ~1e-4)


def test_every_row_masked_and_empty_inputs():
    Q, K, V = torch.randn(4, 8), torch.randn(6, 8), torch.randn(6, 3)
    out = blocked_attention(Q, K, V, torch.full((4, 6), float("-inf")), block_k=4)
    assert torch.equal(out, torch.zeros(4, 3))
    assert blocked_attention(Q[:0], K, V).shape == (0, 3)
    assert torch.equal(blocked_attention(Q, K[:0], V[:0]), torch.zeros(4, 3))


def test_bad_inputs_are_refused():
    Q, K, V = torch.randn(4, 8), torch.randn(6, 8), torch.randn(6, 3)
    with pytest.raises(ValueError):
        blocked_attention(Q, torch.randn(6, 7), V)
    with pytest.raises(ValueError):
        blocked_attention(Q, K, torch.randn(5, 3))
    with pytest.raises(ValueError):
        blocked_attention(Q, K, V, block_q=0)
    with pytest.raises(TypeError):
        blocked_attention(Q, K, V, torch.ones(4, 6, dtype=torch.bool))


def test_never_allocates_the_full_score_matrix():
    # Count the elements of every tensor the function allocates through torch's dispatcher.
    from torch.utils._python_dispatch import TorchDispatchMode

    class Biggest(TorchDispatchMode):
        largest = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in seen:
                    Biggest.largest = max(Biggest.largest, t.untyped_storage().nbytes() // t.element_size())
            return out

    n, d = 512, 16
    Q, K, V = (torch.randn(1, n, d) for _ in range(3))
    # a padding-style mask (1, 1, n) broadcasts to (n, n) without being built
    mask = torch.zeros(1, 1, n).masked_fill(torch.arange(n) >= n - 5, float("-inf"))
    seen = {t.untyped_storage().data_ptr() for t in (Q, K, V, mask)}
    with Biggest():
        blocked_attention(Q, K, V, mask, block_q=64, block_k=128)
    assert Biggest.largest <= max(64 * 128, n * (d + 1)) < n * n


def test_worker_threads_give_the_same_numbers():
    import torch

    from ticketnet.nn.attention import attention, causal_mask
    from ticketnet.nn.blocked import blocked_attention

    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 300, 16, generator=g) for _ in range(3))
    mask = causal_mask(300)
    one = blocked_attention(q, k, v, mask, block_q=64, block_k=48, workers=1)
    three = blocked_attention(q, k, v, mask, block_q=64, block_k=48, workers=3)
    assert torch.equal(one, three)                      # same blocks, same arithmetic, any thread
    assert (one - attention(q, k, v, mask)[0]).abs().max() < 1e-5
