"""The Tiny router's internals by name, one ticket inspected, and runs that start mid-model with one block edited."""

from __future__ import annotations

import torch
from torch import Tensor

from ticketnet.nn.attention import MultiHead, attention, padding_mask
from ticketnet.nn.fast import attention_eval, feed_forward_eval
from ticketnet.nn.transformer import TinyTransformer
from ticketnet.nn.hooks import (  # noqa: F401  (the lens's names: a run's internals, cached)
    act_name, heads_of, run_with_cache, stack_blocks, torch_differences,
)
from ticketnet.router import Inspection, RoutedTicket, Router  # noqa: F401


def inspect_ticket(router: Router, text: str) -> Inspection:
    """Route one ticket with the from-scratch attention and compare every block with PyTorch's (`Router.inspect`)."""
    return router.inspect(text)


# -- running from the middle: a block's input in, logits out, with one block's attention edited -------------------
def attention_parts(model: TinyTransformer, block: int, x: Tensor) -> tuple[MultiHead, Tensor, Tensor, Tensor]:
    """Block `block`'s from-scratch heads and its queries, keys and values for the block input x (B, n, d):
    (MultiHead, Q, K, V), each of Q, K, V (B, h, n, d_k)."""
    layers = model.blocks.layers
    if not 0 <= block < len(layers):
        raise ValueError(f"block must be in 0..{len(layers) - 1} (0-based), got {block}")
    layer = layers[block]
    heads = heads_of(layer)
    a = layer.norm1(x)                                                 # pre-norm
    return heads, heads.split(heads.W_Q(a)), heads.split(heads.W_K(a)), heads.split(heads.W_V(a))


def head_outputs(model: TinyTransformer, cache: dict[str, Tensor], block: int) -> Tensor:
    """Each head's output before W_O, z = pattern · V (B, h, n, d_k), of block `block` from a `run_with_cache` cache."""
    _, _, _, V = attention_parts(model, block, cache[act_name("resid_pre", block)])
    return cache[act_name("pattern", block)] @ V                      # (B, h, n, d_k)


def finish_blocks(model: TinyTransformer, y: Tensor, start: int, is_pad: Tensor | None = None) -> Tensor:
    """Logits (B, C) from block `start`'s input y (B, n, d): blocks start.. in eval mode (`attention_eval`,
    `feed_forward_eval`, as `TinyTransformer.encode_eval`), then pooling and the head. start = n_blocks pools y."""
    if is_pad is None:
        is_pad = torch.zeros(y.shape[:2], dtype=torch.bool, device=y.device)
    mask = None
    if bool(is_pad.any()):
        mask = torch.zeros(is_pad.shape, dtype=y.dtype, device=y.device).masked_fill(
            is_pad, float("-inf"))[:, None, None, :]                   # (B, 1, 1, n) additive
    for layer in model.blocks.layers[start:]:
        y = feed_forward_eval(layer, attention_eval(layer, y, mask))
    return model.head(model.pool(y, is_pad))                           # (B, C)


def run_from_block(model: TinyTransformer, x: Tensor, block: int, is_pad: Tensor | None = None, *,
                   mask: Tensor | None = None, pattern: Tensor | None = None, z: Tensor | None = None,
                   z_where: Tensor | None = None) -> Tensor:
    """Logits (B, C) of a run that starts at block `block` from its input x (B, n, d) (`resid_pre` of a cache),
    with that block's attention edited; the later blocks run unedited.

    `mask` (additive, 0 / −∞, broadcast to (B, h, n, n)) is added to the block's scores besides the padding mask
    (a −∞ cuts one edge, the rest of the row renormalises; a row with every edge cut reads nothing, as
    `attention()` defines); `pattern` (B, h, n, n) replaces the weights outright; `z` (B, h, n, d_k) with
    `z_where` (B, h, n) bool replaces the heads' outputs before W_O where z_where is True (patching, ablation).
    With no edit this is the lens's own run from that block.
    """
    if model.training:
        raise ValueError("run_from_block reads a model in eval mode (dropout off); call model.eval() first")
    if x.dim() != 3 or x.shape[-1] != model.config.d:
        raise ValueError(f"x must be a block input (B, n, {model.config.d}), got {tuple(x.shape)}")
    if (z is None) != (z_where is None):
        raise ValueError("z and z_where go together: the replacement head outputs and where they apply")
    if mask is not None and pattern is not None:
        raise ValueError("give a mask (edges cut before the softmax) or a pattern (weights replaced), not both")
    B, n, d = x.shape
    is_pad = torch.zeros(B, n, dtype=torch.bool, device=x.device) if is_pad is None else is_pad
    heads, Q, K, V = attention_parts(model, block, x)                 # (B, h, n, d_k) each
    if pattern is None:
        full = padding_mask(is_pad, x.dtype)                           # (B, 1, 1, n)
        zz, _ = attention(Q, K, V, full if mask is None else full + mask)   # (B, h, n, d_k)
    else:
        if pattern.shape[-2:] != (n, n):
            raise ValueError(f"pattern must be (B, h, {n}, {n}), got {tuple(pattern.shape)}")
        zz = pattern.to(V.dtype) @ V                                   # (B, h, n, d_k)
    if z is not None:
        zz = torch.where(z_where[..., None], z.to(zz.dtype), zz)
    layer = model.blocks.layers[block]
    y = feed_forward_eval(layer, x + heads.W_O(zz.transpose(1, 2).reshape(B, n, d)))   # (B, n, d) block output
    return finish_blocks(model, y, block + 1, is_pad)
