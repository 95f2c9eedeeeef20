"""The from-scratch attention against the lesson's worked example and against PyTorch's own layers."""

import math

import pytest
import torch

from ticketnet.nn.attention import MultiHead, attention, causal_mask

# 'damaged on arrival', d = 4, d_k = 2: the lesson's X and weight matrices.
X = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
W_Q = torch.tensor([[0.5, 0.5], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
W_K = torch.tensor([[1.0, 0.0], [0.0, 0.5], [0.0, 2.0], [0.0, 0.0]])
W_V = torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
Q, K, V = X @ W_Q, X @ W_K, X @ W_V


def close3(t, expected):
    assert torch.allclose(t, torch.tensor(expected, dtype=t.dtype), atol=5e-4), t


def test_projections_and_scores_match_the_lesson():
    close3(Q, [[0.5, 1.5], [0, 0], [1, 0]])
    close3(K, [[1, 0], [0, 0.5], [0, 2]])
    close3(V, [[2, 0], [0, 0], [0, 1]])
    close3(Q @ K.T / math.sqrt(2), [[0.354, 0.530, 2.121], [0, 0, 0], [0.707, 0, 0]])


def test_worked_example_without_mask():
    out, w = attention(Q, K, V)
    close3(w, [[0.124, 0.148, 0.728], [0.333, 0.333, 0.333], [0.503, 0.248, 0.248]])
    close3(out, [[0.248, 0.728], [0.667, 0.333], [1.007, 0.248]])


def test_worked_example_with_causal_mask():
    out, w = attention(Q, K, V, causal_mask(3))
    close3(w, [[1, 0, 0], [0.5, 0.5, 0], [0.503, 0.248, 0.248]])
    close3(out, [[2, 0], [1, 0], [1.007, 0.248]])


def test_worked_example_with_arrival_as_padding():
    out, w = attention(Q, K, V, torch.tensor([0.0, 0.0, float("-inf")]))
    close3(w, [[0.456, 0.544, 0], [0.5, 0.5, 0], [0.670, 0.330, 0]])
    assert (w[:, 2] == 0).all()  # exactly zero, not just small


def test_minus_infinity_versus_zero_scores():
    scaled = torch.tensor([0.354, 0.530, 2.121])
    close3(torch.softmax(scaled + torch.tensor([0.0, float("-inf"), float("-inf")]), 0), [1, 0, 0])
    close3(torch.softmax(torch.tensor([0.354, 0.0, 0.0]), 0), [0.416, 0.292, 0.292])


def test_embeddings_four_times_larger_saturate():
    _, w = attention(4 * X @ W_Q, 4 * X @ W_K, 4 * X @ W_V)
    close3(w, [[0, 0, 1], [0.333, 0.333, 0.333], [1, 0, 0]])


def test_fully_masked_row_is_zero_and_leaks_no_nan():
    q = torch.randn(2, 4, 8, requires_grad=True)
    k, v = torch.randn(2, 5, 8), torch.randn(2, 5, 3)
    mask = torch.zeros(2, 4, 5)
    mask[0, 1] = float("-inf")  # query 1 of sequence 0 may read nothing
    out, w = attention(q, k, v, mask)
    assert (w[0, 1] == 0).all() and (out[0, 1] == 0).all()
    assert torch.allclose(w.sum(-1)[mask.isneginf().all(-1).logical_not()], torch.ones(7))
    out.sum().backward()
    assert torch.isfinite(q.grad).all()


def test_shape_errors_are_explained():
    with pytest.raises(ValueError, match="same size d_k"):
        attention(torch.randn(3, 4), torch.randn(3, 5), torch.randn(3, 2))
    with pytest.raises(ValueError, match="split evenly"):
        MultiHead(10, 3)


@pytest.mark.parametrize("d,h,count", [(64, 4, 16_640), (64, 1, 16_640), (64, 8, 16_640), (512, 8, 1_050_624)])
def test_parameter_count_is_4d2_plus_4d_whatever_h(d, h, count):
    assert sum(p.numel() for p in MultiHead(d, h).parameters()) == count == 4 * d * d + 4 * d


# Property-based: any shapes, any mask pattern.
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), m=st.integers(1, 9), d_k=st.integers(1, 8), seed=st.integers(0, 2**16),
       data=st.data())
def test_rows_sum_to_one_and_masked_keys_get_exactly_zero(n, m, d_k, seed, data):
    g = torch.Generator().manual_seed(seed)
    Q, K, V = torch.randn(n, d_k, generator=g) * 3, torch.randn(m, d_k, generator=g) * 3, torch.randn(m, 2, generator=g)
    hidden = torch.tensor(data.draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=n, max_size=n)))
    mask = torch.zeros(n, m).masked_fill(hidden, float("-inf"))
    out, w = attention(Q, K, V, mask)
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    assert (w[hidden] == 0).all()
    dead = hidden.all(-1)
    assert torch.allclose(w.sum(-1)[~dead], torch.ones(int((~dead).sum())), atol=1e-6)
    assert (w[dead] == 0).all() and (out[dead] == 0).all()


@settings(max_examples=30, deadline=None)
@given(B=st.integers(1, 3), n=st.integers(1, 8), h=st.sampled_from([1, 2, 4]), seed=st.integers(0, 2**16))
def test_multihead_matches_pytorch_for_any_shape(B, n, h, seed):
    torch.manual_seed(seed)
    mine = MultiHead(8, h)
    ref = mine.to_torch()
    X = torch.randn(B, n, 8)
    with torch.no_grad():
        o1, w1 = mine(X)
        o2, w2 = ref(X, X, X, average_attn_weights=False)
    assert (o1 - o2).abs().max() < 1e-5 and (w1 - w2).abs().max() < 1e-6


# -- masks and modules the from-scratch attention must refuse rather than get wrong ------------------------
@pytest.mark.parametrize("dtype", [torch.bool, torch.long])
def test_boolean_and_integer_masks_are_refused_with_the_conversion(dtype):
    # Added as 1/0, such a mask blocks nothing: 0.72 of the weight lands on the "blocked" keys.
    future = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1).to(dtype)
    with pytest.raises(TypeError, match="masked_fill"):
        attention(Q, K, V, future)
    with pytest.raises(TypeError, match="additive float mask"):
        MultiHead(4, 2)(X[None], mask=future)
    converted = torch.zeros(3, 3).masked_fill(future.bool(), float("-inf"))
    assert torch.equal(attention(Q, K, V, converted)[1], attention(Q, K, V, causal_mask(3))[1])


def test_eval_paths_share_the_refusal():
    from torch import nn

    from ticketnet.nn.blocked import blocked_attention
    from ticketnet.nn.fast import attention_eval

    mask = torch.zeros(3, 3, dtype=torch.bool)
    with pytest.raises(TypeError, match="blocked_attention takes an additive float mask"):
        blocked_attention(Q, K, V, mask)
    layer = nn.TransformerEncoderLayer(4, 2, 8, batch_first=True, norm_first=True).eval()
    with pytest.raises(TypeError, match="attention_eval takes an additive float mask"):
        attention_eval(layer, X[None], mask)


@pytest.mark.parametrize("kwargs", [{"add_bias_kv": True}, {"add_zero_attn": True},
                                    {"add_bias_kv": True, "add_zero_attn": True}])
def test_from_torch_refuses_extra_keys_it_cannot_reproduce(kwargs):
    from torch import nn

    mha = nn.MultiheadAttention(8, 2, batch_first=True, **kwargs)
    with pytest.raises(ValueError, match="cannot reproduce .*" + next(iter(kwargs))):
        MultiHead.from_torch(mha)
