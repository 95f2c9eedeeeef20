"""Run the router block by block with the from-scratch MultiHead, cache every internal by name, and check it against PyTorch."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import torch
from torch import Tensor

from ticketnet.data.text import PAD_ID
from ticketnet.nn.attention import MultiHead, attention, padding_mask
from ticketnet.nn.fast import attention_eval, feed_forward_eval
from ticketnet.nn.transformer import TinyTransformer
from ticketnet.router import Encoded, Router


def act_name(name: str, block: int | None = None) -> str:
    """The cache key of an internal: act_name("pattern", 1) -> "blocks.1.attn.pattern" (TransformerLens-style).

    Block-level names: resid_pre, ln1, pattern, attn_out, resid_mid, resid_post; model-level: embed, pooled.
    """
    if name in ("embed", "pooled"):
        if block is not None:
            raise ValueError(f"{name!r} belongs to the whole model, not to a block")
        return name
    if name not in _BLOCK_NAMES:
        raise ValueError(f"unknown internal {name!r}; expected embed, pooled or one of {', '.join(_BLOCK_NAMES)}")
    if block is None or block < 0:
        raise ValueError(f"{name!r} needs a block index (0-based), got {block!r}")
    return f"blocks.{block}.{_BLOCK_NAMES[name]}"


_BLOCK_NAMES = {"resid_pre": "resid_pre", "ln1": "ln1", "pattern": "attn.pattern", "attn_out": "attn.out",
                "resid_mid": "resid_mid", "resid_post": "resid_post"}


def stack_blocks(cache: dict[str, Tensor], name: str, n_blocks: int) -> Tensor:
    """One internal of every block stacked on a new axis 1: (B, ...) per block -> (B, n_blocks, ...)."""
    return torch.stack([cache[act_name(name, i)] for i in range(n_blocks)], 1)


def run_with_cache(model: TinyTransformer, ids: Tensor, is_pad: Tensor | None = None,
                   head_mask: Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
    """Logits (B, teams) computed with the from-scratch attention, and a cache of named internals.

    Names follow TransformerLens: `embed` (B, n, d), `blocks.{i}.resid_pre`, `blocks.{i}.ln1`,
    `blocks.{i}.attn.pattern` (B, h, n, n), `blocks.{i}.attn.out`, `blocks.{i}.resid_mid`,
    `blocks.{i}.resid_post`, `pooled` (B, d). `head_mask` (n_blocks, h) scales each head's output
    (0 removes the head). Run under torch.no_grad()/inference_mode unless gradients are wanted.
    """
    if model.training:
        raise ValueError("run_with_cache reads a model in eval mode (dropout off); call model.eval() first")
    is_pad = ids.eq(PAD_ID) if is_pad is None else is_pad
    x = model.embeddings(ids)                                          # (B, n, d)
    mask = padding_mask(is_pad, x.dtype)                               # (B, 1, 1, n)
    cache: dict[str, Tensor] = {"embed": x}
    for i, layer in enumerate(model.blocks.layers):
        heads = MultiHead.from_torch(layer.self_attn)
        a = layer.norm1(x)                                             # pre-norm: normalise, then attend
        attn_out, pattern = heads(a, a, mask, None if head_mask is None else head_mask[i])
        mid = x + attn_out                                             # (B, n, d) first residual
        post = feed_forward_eval(layer, mid)                           # mid + feed-forward(norm2(mid))
        cache.update({act_name("resid_pre", i): x, act_name("ln1", i): a, act_name("pattern", i): pattern,
                      act_name("attn_out", i): attn_out, act_name("resid_mid", i): mid,
                      act_name("resid_post", i): post})
        x = post
    cache["pooled"] = model.pool(x, is_pad)                            # (B, d)
    return model.head(cache["pooled"]), cache


@torch.no_grad()
def torch_differences(model: TinyTransformer, ids: Tensor, is_pad: Tensor, cache: dict[str, Tensor],
                      logits: Tensor) -> dict[str, float]:
    """Largest |from-scratch − PyTorch| per block (attention weights, attention output, block output) and for
    the logits, over real (non-padding) query rows, with PyTorch's own layers fed the same block inputs."""
    real = ~is_pad                                                     # (B, n)
    diffs: dict[str, float] = {}
    for i, layer in enumerate(model.blocks.layers):
        x, a = cache[act_name("resid_pre", i)], cache[act_name("ln1", i)]
        out_pt, w_pt = layer.self_attn(a, a, a, key_padding_mask=is_pad, need_weights=True,
                                       average_attn_weights=False)
        post_pt = layer(x, src_key_padding_mask=is_pad)
        pattern, attn_out, post = act_name("pattern", i), act_name("attn_out", i), act_name("resid_post", i)
        diffs[pattern] = (cache[pattern] - w_pt).abs().amax(dim=(1, 3))[real].max().item()
        diffs[attn_out] = (cache[attn_out] - out_pt).abs().amax(-1)[real].max().item()
        diffs[post] = (cache[post] - post_pt).abs().amax(-1)[real].max().item()
    torch_logits = model.head(model.pool(model.blocks(cache["embed"], src_key_padding_mask=is_pad), is_pad))
    diffs["logits"] = (logits - torch_logits).abs().max().item()   # against nn.TransformerEncoder itself
    return diffs


class RoutedTicket:
    """What a routed ticket's results share: `probs` (teams,) and `differences` from PyTorch, read the same way."""

    probs: Tensor
    differences: dict[str, float]

    @property
    def predicted(self) -> int:
        return int(self.probs.argmax())

    @property
    def max_difference(self) -> float:
        return max(self.differences.values())


@dataclass
class Inspection(RoutedTicket):
    """Everything the dashboard shows about one ticket's forward pass."""

    encoded: Encoded
    probs: Tensor            # (teams,)
    patterns: Tensor         # (n_blocks, h, n, n) from-scratch attention weights
    block_outputs: Tensor    # (n_blocks, n, d)
    differences: dict[str, float]

    @property
    def tokens(self) -> list[str]:
        return self.encoded.tokens


@torch.inference_mode()
def inspect_ticket(router: Router, text: str) -> Inspection:
    """Route one ticket with the from-scratch attention and compare every block with PyTorch's."""
    enc = router.encode(text)
    ids = torch.tensor([enc.ids])
    is_pad = torch.zeros_like(ids, dtype=torch.bool)
    logits, cache = run_with_cache(router.model, ids, is_pad)
    n_blocks = router.model.config.n_blocks
    return Inspection(
        encoded=enc,
        probs=torch.softmax(logits[0], dim=-1),
        patterns=stack_blocks(cache, "pattern", n_blocks)[0],
        block_outputs=stack_blocks(cache, "resid_post", n_blocks)[0],
        differences=torch_differences(router.model, ids, is_pad, cache, logits),
    )


# -- running from the middle: a block's input in, logits out, with one block's attention edited -------------------
_HEADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def heads_of(layer: torch.nn.TransformerEncoderLayer) -> MultiHead:
    """The layer's attention as a from-scratch MultiHead, copied once and again only when its weights change
    (copying costs about 2 ms, more than a small batch's forward; interventions ask for it many times per click)."""
    attn = layer.self_attn
    key = tuple((p.data_ptr(), p._version) for p in attn.parameters())
    hit = _HEADS.get(layer)
    if hit is None or hit[0] != key:
        with torch.inference_mode(False), torch.no_grad():
            hit = (key, MultiHead.from_torch(attn).requires_grad_(False))
        _HEADS[layer] = hit
    return hit[1]


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
