"""One head of a router on one ticket, softmax(QKᵀ/√d_k + M)V step by step, in float64 beside the model's own run."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from ticketnet.nn.attention import MultiHead


@dataclass(frozen=True)
class HeadSteps:
    """Every intermediate of one head on one ticket (n tokens or pieces), each as the formula writes it."""

    block: int                 # 0-based
    head: int                  # 0-based
    X: Tensor                  # (n, d) what the block's attention reads: the normalised input (pre-norm) or the
    #                            block input itself (post-norm)
    Q: Tensor                  # (n, d_k) X·W_Q + b_Q, this head's columns
    K: Tensor                  # (n, d_k)
    V: Tensor                  # (n, d_k)
    scores: Tensor             # (n, n) QKᵀ
    scaled: Tensor             # (n, n) QKᵀ / √d_k
    masked: Tensor             # (n, n) + M (0 where a key may be read, −∞ where not)
    weights: Tensor            # (n, n) softmax over each row
    out: Tensor                # (n, d_k) weights · V: the head's output, before the heads are joined and W_O
    model_weights: Tensor      # (n, n) the same head's weights from the router's own forward pass

    @property
    def d_k(self) -> int:
        return int(self.Q.shape[-1])

    @property
    def difference(self) -> float:
        """Largest |weights computed here − the router's own|: float32 rounding, if the copy is right."""
        return float((self.weights - self.model_weights.double()).abs().max())


def head_steps(attn: MultiHead, X: Tensor, head: int, model_weights: Tensor, block: int = 0,
               mask: Tensor | None = None) -> HeadSteps:
    """softmax(QKᵀ/√d_k + M)V of head `head` (0-based) of `attn`, on one ticket's attention input X (n, d), in
    float64 from the module's weights; `mask` (n, n) additive, none by default (one ticket has no padding);
    `model_weights` (n, n), the head's weights as the router computed them, to set beside."""
    if X.dim() != 2 or X.shape[-1] != attn.d:
        raise ValueError(f"X must be one ticket's (n, {attn.d}) attention input, got {tuple(X.shape)}")
    if not 0 <= head < attn.h:
        raise ValueError(f"head must be in 0..{attn.h - 1}, got {head}")
    n, cols = X.shape[0], slice(head * attn.d_k, (head + 1) * attn.d_k)
    if model_weights.shape != (n, n):
        raise ValueError(f"model_weights must be ({n}, {n}), got {tuple(model_weights.shape)}")
    X = X.detach().double()

    def project(lin: torch.nn.Linear) -> Tensor:                           # (n, d) -> (n, d_k)
        W = lin.weight.detach().double()[cols]                              # (d_k, d)
        b = lin.bias.detach().double()[cols] if lin.bias is not None else 0.0
        return X @ W.T + b

    Q, K, V = project(attn.W_Q), project(attn.W_K), project(attn.W_V)
    scores = Q @ K.T                                                         # (n, n)
    scaled = scores / math.sqrt(attn.d_k)
    masked = scaled + (torch.zeros(n, n, dtype=torch.float64) if mask is None else mask.double())
    weights = torch.softmax(masked, dim=-1)
    return HeadSteps(block, head, X, Q, K, V, scores, scaled, masked, weights, weights @ V,
                     model_weights.detach())
