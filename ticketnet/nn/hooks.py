"""The Tiny router's forward with the from-scratch MultiHead, every internal cached by name (TransformerLens-style)."""

from __future__ import annotations

import weakref

import torch
from torch import Tensor

from ticketnet.data.text import PAD_ID
from ticketnet.nn.attention import MultiHead, padding_mask
from ticketnet.nn.fast import feed_forward_eval
from ticketnet.nn.transformer import TinyTransformer


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


_HEADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def heads_of(layer: torch.nn.TransformerEncoderLayer) -> MultiHead:
    """The layer's attention as a from-scratch MultiHead, copied once and again only when its weights change
    (copying costs more than a small batch's forward, and interventions ask for it many times per click; see
    docs/performance.md, "Settings measured in the code")."""
    attn = layer.self_attn
    key = tuple((p.data_ptr(), p._version) for p in attn.parameters())
    hit = _HEADS.get(layer)
    if hit is None or hit[0] != key:
        with torch.inference_mode(False), torch.no_grad():
            hit = (key, MultiHead.from_torch(attn).requires_grad_(False))
        _HEADS[layer] = hit
    return hit[1]
