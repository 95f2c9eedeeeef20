"""Token scores read off attention weights: received attention, rollout, and the per-head and per-block signals."""

from __future__ import annotations

import torch
from torch import Tensor

from ticketnet.interpret import signals


def received_attention(pattern: Tensor) -> Tensor:
    """Mean weight each key token receives over all query rows: pattern (h, n, n) -> (h, n).

    These are the vertical bands of an attention map; each head's row of the result sums to 1.
    """
    if pattern.dim() != 3 or pattern.shape[-1] != pattern.shape[-2]:
        raise ValueError(f"pattern must be one ticket's (h, n, n) attention weights, got {tuple(pattern.shape)}")
    return pattern.mean(dim=-2)


def attention_rollout(patterns: Tensor) -> Tensor:
    """Attention rollout (Abnar & Zuidema 2020) of patterns (L, h, n, n) -> (n, n), rows summing to 1.

    Per block A = ½·mean_h(W) + ½·I (the identity stands for the residual connection), rows re-normalised;
    then R = A_L ⋯ A_1, so R[i, j] is the share of input token j in position i's output of the last block.
    """
    if patterns.dim() != 4 or patterns.shape[-1] != patterns.shape[-2]:
        raise ValueError(f"patterns must be (L, h, n, n) attention weights, got {tuple(patterns.shape)}")
    n = patterns.shape[-1]
    eye = torch.eye(n, dtype=patterns.dtype, device=patterns.device)
    rollout = eye
    for W in patterns:                                                 # block 1 first, so later blocks multiply on the left
        A = 0.5 * W.mean(0) + 0.5 * eye
        A = A / A.sum(-1, keepdim=True)
        rollout = A @ rollout
    return rollout


def rollout_to_pooled(rollout: Tensor) -> Tensor:
    """Share of each input token in the mean-pooled representation, rollout (n, n) -> (n,), summing to 1.

    The model averages all real positions before its head, so the pooled vector's share is the mean row.
    """
    if rollout.dim() != 2 or rollout.shape[0] != rollout.shape[1]:
        raise ValueError(f"rollout must be (n, n), got {tuple(rollout.shape)}")
    return rollout.mean(0)


def attention_signals(patterns: Tensor) -> dict[str, Tensor]:
    """Attention-derived token scores (n,) from one ticket's patterns (L, h, n, n): rollout, per-block mean
    of the received attention, and per head ("b2 h1" = block 2, head 1), all 1-based."""
    if patterns.dim() != 4:
        raise ValueError(f"patterns must be (L, h, n, n), got {tuple(patterns.shape)}")
    received = [received_attention(p) for p in patterns]               # L × (h, n)
    # Keys in the order of signals.attention_signals, which the split's rows follow.
    out = {signals.ROLLOUT.name: rollout_to_pooled(attention_rollout(patterns))}
    out.update({signals.mean_attention(b + 1).name: r.mean(0) for b, r in enumerate(received)})
    out.update({signals.head_attention(b + 1, i + 1).name: r[i] for b, r in enumerate(received)
                for i in range(r.shape[0])})
    return out
