"""The eval-mode forward of one encoder layer computed from its own weights: faster than PyTorch's fast path on CPU."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ticketnet.nn.attention import check_additive_mask

SMALL_N = 48   # up to this many tokens, plain batched matmuls beat the fused kernel's set-up (measured, one thread)


def attention_eval(layer: nn.TransformerEncoderLayer, x: Tensor, mask: Tensor | None = None) -> Tensor:
    """x + attention(norm1(x)) of one pre-norm layer in eval mode: (B, n, d) -> (B, n, d).

    `mask` is additive (0 / −inf, broadcastable to (B, h, n, n)); up to SMALL_N tokens plain batched matmuls,
    beyond that PyTorch's fused kernel.
    """
    check_additive_mask(mask, "attention_eval")
    B, n, d = x.shape
    attn = layer.self_attn
    h = attn.num_heads
    d_k = d // h
    qkv = F.linear(layer.norm1(x), attn.in_proj_weight, attn.in_proj_bias)       # (B, n, 3d)
    q, k, v = qkv.view(B, n, 3, h, d_k).permute(2, 0, 3, 1, 4)                   # 3 × (B, h, n, d_k)
    if n > SMALL_N:
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)              # (B, h, n, d_k)
    else:
        s = torch.matmul(q, k.transpose(-1, -2)).mul_(d_k ** -0.5)               # (B, h, n, n)
        if mask is not None:
            s += mask
        o = torch.matmul(torch.softmax(s, dim=-1), v)                            # (B, h, n, d_k)
    return x + attn.out_proj(o.transpose(1, 2).reshape(B, n, d))                 # (B, n, d)


def feed_forward_eval(layer: nn.TransformerEncoderLayer, x: Tensor) -> Tensor:
    """x + linear2(activation(linear1(norm2(x)))) of one pre-norm layer in eval mode: (..., d) -> (..., d)."""
    return x + layer.linear2(layer.activation(layer.linear1(layer.norm2(x))))
