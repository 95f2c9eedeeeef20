"""One head worked through softmax(QKᵀ/√d_k + M)V in float64 equals the router's own weights, step by step."""

from __future__ import annotations

import math

import pytest
import torch

from ticketnet.lens.inspection import run_with_cache
from ticketnet.lens.steps import head_steps
from ticketnet.nn.attention import MultiHead

TEXT = "my card was charged twice for the leaf blower, please refund the second payment"


@pytest.fixture(scope="module")
def run():
    from ticketnet.paths import weights_dir
    from ticketnet.router import Router

    r = Router.load(weights_dir() / "router.pt")
    ids, is_pad = r.batch([r.encode(TEXT)])
    with torch.inference_mode():
        _, cache = run_with_cache(r.model, ids, is_pad)
    return r, cache


@pytest.mark.parametrize("block,head", [(0, 0), (1, 3)])
def test_each_step_follows_the_formula_and_ends_at_the_routers_weights(run, block, head):
    r, cache = run
    attn = MultiHead.from_torch(r.model.blocks.layers[block].self_attn)
    X = cache[f"blocks.{block}.ln1"][0]
    own = cache[f"blocks.{block}.attn.pattern"][0, head]
    s = head_steps(attn, X, head, own, block)
    n = X.shape[0]
    assert s.Q.shape == s.K.shape == s.V.shape == (n, attn.d_k) and s.d_k == attn.d_k
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)
    with torch.no_grad():
        assert torch.allclose(s.Q, attn.W_Q(X.clone()).double()[:, cols], atol=1e-5)
    assert torch.allclose(s.scaled, s.scores / math.sqrt(attn.d_k))
    assert torch.equal(s.masked, s.scaled)                           # one ticket: M = 0 everywhere
    assert torch.allclose(s.weights.sum(-1), torch.ones(n, dtype=torch.float64))
    assert torch.allclose(s.out, s.weights @ s.V)
    assert s.difference < 1e-6


def test_a_mask_of_minus_infinity_leaves_those_keys_no_weight(run):
    r, cache = run
    attn = MultiHead.from_torch(r.model.blocks.layers[0].self_attn)
    X = cache["blocks.0.ln1"][0]
    n = X.shape[0]
    mask = torch.zeros(n, n)
    mask[:, -3:] = float("-inf")
    s = head_steps(attn, X, 0, cache["blocks.0.attn.pattern"][0, 0], mask=mask)
    assert float(s.weights[:, -3:].abs().max()) == 0.0
    assert s.difference > 1e-3                                       # the router read those keys: the check shows it


def test_bad_heads_and_shapes_are_refused(run):
    r, cache = run
    attn = MultiHead.from_torch(r.model.blocks.layers[0].self_attn)
    X, own = cache["blocks.0.ln1"][0], cache["blocks.0.attn.pattern"][0, 0]
    with pytest.raises(ValueError, match="head must be in"):
        head_steps(attn, X, attn.h, own)
    with pytest.raises(ValueError, match="attention input"):
        head_steps(attn, X[None], 0, own)
    with pytest.raises(ValueError, match="model_weights"):
        head_steps(attn, X, 0, own[:-1])
