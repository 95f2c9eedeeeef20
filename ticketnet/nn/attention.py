"""Scaled dot-product attention and multi-head attention written from softmax(QKᵀ/√d_k + M)V."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def check_additive_mask(mask: Tensor | None, who: str) -> None:
    """Refuse boolean and integer masks: added to the scores they would shift them by 1/0 instead of blocking."""
    if mask is not None and not mask.is_floating_point():
        raise TypeError(
            f"{who} takes an additive float mask (0 where a query may read a key, −inf where it may not), "
            f"got a {mask.dtype} mask; added as 1/0 it would block nothing. For a boolean mask in PyTorch's "
            "convention (True = may not read), pass torch.zeros(m.shape).masked_fill(m, float('-inf'))")


def attention(Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """softmax(Q Kᵀ / √d_k + M) V for Q (..., n, d_k), K (..., m, d_k), V (..., m, d_v).

    `mask` is additive and broadcasts to (..., n, m): 0 where a query may read a key, −∞ where it may not.
    A boolean or integer mask is refused with a TypeError that says how to convert it (see the lesson's
    boolean-mask pitfall: added to the scores, True/False would shift them by 1/0 and block nothing).
    A query whose every key is masked has no distribution to take; we define its weights and its output
    as exactly 0 (plain softmax would return NaN there, and the NaN would reach the gradients of the
    other rows through the shared projections). Returns the output (..., n, d_v) and weights (..., n, m).
    """
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"queries and keys must have the same size d_k, got {Q.shape[-1]} and {K.shape[-1]}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"every key needs a value: {K.shape[-2]} keys but {V.shape[-2]} values")
    check_additive_mask(mask, "attention()")
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)        # (..., n, m)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)               # (..., n, m), rows sum to 1
        return weights @ V, weights                           # (..., n, d_v), (..., n, m)
    scores = scores + mask                                    # −∞ where a query may not read
    dead = torch.isneginf(scores).all(dim=-1, keepdim=True)   # (..., n, 1) rows with nothing to read
    scores = scores.masked_fill(dead, 0.0)                    # keep softmax finite on those rows ...
    weights = torch.softmax(scores, dim=-1).masked_fill(dead, 0.0)  # ... then give them no weight at all
    return weights @ V, weights                               # (..., n, d_v), (..., n, m)


def causal_mask(n: int, dtype: torch.dtype = torch.float32, device: torch.device | str | None = None) -> Tensor:
    """(n, n) additive mask with −∞ above the diagonal: token i reads tokens 0..i."""
    return torch.triu(torch.full((n, n), float("-inf"), dtype=dtype, device=device), diagonal=1)


def padding_mask(is_pad: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """(B, 1, 1, m) additive mask from a boolean (B, m) padding flag (True = padding, may not be read)."""
    if is_pad.dtype != torch.bool or is_pad.dim() != 2:
        raise ValueError(f"is_pad must be a boolean (B, m) tensor, got {tuple(is_pad.shape)} {is_pad.dtype}")
    mask = torch.zeros(is_pad.shape, dtype=dtype, device=is_pad.device)
    return mask.masked_fill(is_pad, float("-inf"))[:, None, None, :]


class MultiHead(nn.Module):
    """h heads of size d_k = d / h: project with W_Q, W_K, W_V, attend per head, concatenate, project with W_O."""

    def __init__(self, d: int, h: int, bias: bool = True):
        super().__init__()
        if d <= 0 or h <= 0 or d % h:
            raise ValueError(f"the width d={d} must split evenly into h={h} heads")
        self.d, self.h, self.d_k = d, h, d // h
        self.W_Q, self.W_K, self.W_V, self.W_O = (nn.Linear(d, d, bias=bias) for _ in range(4))

    def split(self, X: Tensor) -> Tensor:
        """(B, n, d) -> (B, h, n, d_k): the d columns cut into h slices of d_k."""
        B, n, _ = X.shape
        return X.view(B, n, self.h, self.d_k).transpose(1, 2)

    def forward(self, Xq: Tensor, Xkv: Tensor | None = None, mask: Tensor | None = None,
                head_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Attend from Xq (B, n, d) to Xkv (B, m, d) (default: Xq itself).

        `mask` is additive (float, 0 / −∞; boolean masks are refused, as in `attention`) and broadcasts to
        (B, h, n, m); `head_mask` (h,) scales each head's output
        before the heads are joined (0 switches a head off). Returns (B, n, d) and weights (B, h, n, m).
        """
        Xkv = Xq if Xkv is None else Xkv
        if Xq.dim() != 3 or Xkv.dim() != 3 or Xq.shape[-1] != self.d or Xkv.shape[-1] != self.d:
            raise ValueError(f"MultiHead({self.d}, {self.h}) expects (B, n, {self.d}) inputs, "
                             f"got {tuple(Xq.shape)} and {tuple(Xkv.shape)}")
        Q = self.split(self.W_Q(Xq))                          # (B, h, n, d_k)
        K = self.split(self.W_K(Xkv))                         # (B, h, m, d_k)
        V = self.split(self.W_V(Xkv))                         # (B, h, m, d_k)
        O, weights = attention(Q, K, V, mask)                 # (B, h, n, d_k), (B, h, n, m)
        if head_mask is not None:
            O = O * head_mask.to(O.dtype).view(1, self.h, 1, 1)
        B, _, n, _ = O.shape
        O = O.transpose(1, 2).reshape(B, n, self.d)           # (B, n, h·d_k): heads side by side
        return self.W_O(O), weights                           # (B, n, d), (B, h, n, m)

    @classmethod
    def from_torch(cls, mha: nn.MultiheadAttention) -> "MultiHead":
        """A MultiHead holding a copy of `mha`'s weights (its stacked in_proj split in three, and out_proj)."""
        if not mha._qkv_same_embed_dim:
            raise ValueError("from_torch needs an nn.MultiheadAttention whose keys and values have width d")
        # These append learned (or zero) keys and values that softmax(QKᵀ/√d_k + M)V over the input has no
        # place for; a copy without them would give different outputs, so refuse rather than copy wrongly.
        extras = [name for name, on in (("add_bias_kv=True", mha.bias_k is not None),
                                        ("add_zero_attn=True", mha.add_zero_attn)) if on]
        if extras:
            raise ValueError(f"from_torch cannot reproduce an nn.MultiheadAttention built with {' and '.join(extras)}: "
                             "MultiHead attends over the input tokens only; build it without them")
        bias = mha.in_proj_bias is not None
        p = next(mha.parameters())
        mine = cls(mha.embed_dim, mha.num_heads, bias=bias).to(dtype=p.dtype, device=p.device)
        with torch.no_grad():
            for lin, W in zip((mine.W_Q, mine.W_K, mine.W_V), mha.in_proj_weight.chunk(3)):
                lin.weight.copy_(W)
            if bias:
                for lin, b in zip((mine.W_Q, mine.W_K, mine.W_V), mha.in_proj_bias.chunk(3)):
                    lin.bias.copy_(b)
                mine.W_O.bias.copy_(mha.out_proj.bias)
            mine.W_O.weight.copy_(mha.out_proj.weight)
        return mine

    def to_torch(self) -> nn.MultiheadAttention:
        """An nn.MultiheadAttention (batch_first) holding a copy of these weights."""
        bias = self.W_Q.bias is not None
        p = self.W_Q.weight
        mha = nn.MultiheadAttention(self.d, self.h, bias=bias, batch_first=True).to(dtype=p.dtype, device=p.device)
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([self.W_Q.weight, self.W_K.weight, self.W_V.weight]))
            if bias:
                mha.in_proj_bias.copy_(torch.cat([self.W_Q.bias, self.W_K.bias, self.W_V.bias]))
                mha.out_proj.bias.copy_(self.W_O.bias)
            mha.out_proj.weight.copy_(self.W_O.weight)
        return mha
