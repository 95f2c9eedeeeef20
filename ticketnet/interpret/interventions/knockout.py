"""Attention-edge knockout: one edge of one head cut (score −∞, row renormalised), and its support for the target."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ticketnet.interpret.metrics.agreement import disagreements, kendall_tau
from ticketnet.interpret.methods.counterfactual import check_eval, check_ticket
from ticketnet.interpret.interventions.units import UNITS, both_units, check_target, check_unit, supports
from ticketnet.nn.attention import attention
from ticketnet.lens.inspection import act_name, attention_parts, finish_blocks, run_with_cache
from ticketnet.nn.transformer import TinyTransformer

MAP_MAX_N = 48          # full effect maps (n² variants) up to this many tokens; longer tickets get the row view
ROWS_PER_CHUNK = 16_384  # variant rows × tokens per batch through the later blocks: stays in cache, bounds memory


@dataclass(frozen=True)
class Knockout:
    """Effects of cutting attention edges of one head in one block, against the uncut ticket."""

    block: int                  # 0-based
    head: int                   # 0-based
    weights: Tensor             # (n,) the row's weights, or (n, n) the head's pattern
    support: dict[str, Tensor]  # unit -> same shape as weights: ticket − edge cut, positive where the edge helped
    base: dict[str, float]      # unit -> the ticket's own value
    query: int | None = None    # the row, for a row knockout

    def tau(self, unit: str = "logit_diff") -> float:
        """Kendall τ between the weights and the edges' support, over every edge shown."""
        return kendall_tau(self.weights.flatten(), self.support[check_unit(unit)].flatten())


def _check(model: TinyTransformer, ids: Tensor, block: int, head: int, target: int) -> Tensor:
    check_eval(model)
    ids = check_ticket(ids)
    cfg = model.config
    if not 0 <= block < cfg.n_blocks:
        raise ValueError(f"block must be in 0..{cfg.n_blocks - 1} (0-based), got {block}")
    if not 0 <= head < cfg.h:
        raise ValueError(f"head must be in 0..{cfg.h - 1} (0-based), got {head}")
    check_target(target, cfg.n_classes)
    if ids.numel() > cfg.max_len:
        raise ValueError(f"{ids.numel()} tokens exceed the position table ({cfg.max_len}); truncate first")
    return ids


def knockout_logits(model: TinyTransformer, ids: Tensor, block: int, heads: Tensor, queries: Tensor,
                    keys: Tensor, chunk_rows: int = ROWS_PER_CHUNK) -> tuple[Tensor, Tensor, Tensor]:
    """Logits of the ticket `ids` (n,) with each edge (heads[v], queries[v], keys[v]) of `block` cut, one variant
    per edge (V,), the ticket's own logits through the same path, and the block's uncut pattern:
    ((V, C), (C,), (h, n, n)). A key of −1 cuts nothing.

    Blocks before `block` run once (`run_with_cache`). In `block` only the variant's query row changes: its
    weights are `attention()` of that head's row with an additive −∞ on the cut key, batched over variants;
    the row's block output is recomputed alone and put into the ticket's block output. The later blocks then
    run batched over the variants; after the last block only the changed row's share of the mean pooling moves.
    """
    n = ids.numel()
    with torch.inference_mode():
        _, cache = run_with_cache(model, ids[None], torch.zeros(1, n, dtype=torch.bool))
        x = cache[act_name("resid_pre", block)]                       # (1, n, d)
        mh, Q, K, V = attention_parts(model, block, x)                 # (1, h, n, d_k) each
        z_base, _ = attention(Q, K, V)                                 # (1, h, n, d_k)
        post = cache[act_name("resid_post", block)][0]                 # (n, d) the block's output, uncut
        layer = model.blocks.layers[block]
        last = block == model.config.n_blocks - 1
        if last:
            normed = model.norm(post)                                  # (n, d)
            pooled_sum = normed.sum(0)                                 # (d,)
        heads, queries = torch.cat([heads, heads.new_zeros(1)]), torch.cat([queries, queries.new_zeros(1)])
        keys = torch.cat([keys, keys.new_full((1,), -1)])              # the last variant cuts nothing: the ticket
        total = heads.numel()
        out = torch.empty(total, model.config.n_classes, dtype=x.dtype)
        per = total if last else max(1, chunk_rows // n)
        for lo in range(0, total, per):
            k, i, j = heads[lo: lo + per], queries[lo: lo + per], keys[lo: lo + per]
            c = k.numel()
            mask = x.new_zeros(c, 1, n)                                # (c, 1, n) additive, one row per variant
            cut = j >= 0
            mask[cut.nonzero()[:, 0], 0, j[cut]] = float("-inf")
            z_row, _ = attention(Q[0, k, i][:, None], K[0, k], V[0, k], mask)   # (c, 1, d_k) the renormalised row
            z = z_base[0, :, i].transpose(0, 1).clone()                # (c, h, d_k) the row's heads, uncut
            z[torch.arange(c), k] = z_row[:, 0]
            row = x[0, i] + mh.W_O(z.reshape(c, -1))                   # (c, d) the row after attention
            row = row + layer.linear2(layer.activation(layer.linear1(layer.norm2(row))))   # ... and its feed-forward
            if last:                                                   # only row i's share of the mean moves
                pooled = (pooled_sum - normed[i] + model.norm(row)) / n   # (c, d)
                out[lo: lo + c] = model.head(pooled)
            else:
                y = post.expand(c, n, -1).clone()                      # (c, n, d)
                y[torch.arange(c), i] = row
                out[lo: lo + c] = finish_blocks(model, y, block + 1)
    return out[:-1], out[-1], cache[act_name("pattern", block)][0]


def _result(logits: Tensor, base: Tensor, target: int, shape: tuple[int, ...]) -> tuple[dict, dict]:
    sup = supports(base, logits, target)
    b = both_units(base, target)
    return {u: sup[u].view(shape) for u in UNITS}, {u: float(b[u]) for u in UNITS}


def edge_knockout(model: TinyTransformer, ids: Tensor, block: int, head: int, query: int, target: int) -> Knockout:
    """Cut each edge query → key j of `head` in `block` in turn, j = 0..n−1, all n in one batched pass from the block.

    `weights` (n,) is the row's attention; `support[unit]` (n,) the ticket − knocked-out value of the target's
    logit difference and probability. Cutting the only edge of a one-token ticket leaves the row reading nothing.
    """
    ids = _check(model, ids, block, head, target)
    n = ids.numel()
    if not 0 <= query < n:
        raise ValueError(f"query must be a position in 0..{n - 1}, got {query}")
    keys = torch.arange(n)
    logits, base, pattern = knockout_logits(model, ids, block, torch.full((n,), head), torch.full((n,), query), keys)
    weights = pattern[head, query]
    support, b = _result(logits, base, target, (n,))
    return Knockout(block, head, weights, support, b, query)


def effect_map(model: TinyTransformer, ids: Tensor, block: int, head: int, target: int,
               max_n: int = MAP_MAX_N) -> Knockout:
    """Every edge i → j of `head` in `block` cut in turn: n² variants batched from the block on.

    `weights` (n, n) is the head's pattern, `support[unit]` (n, n) each edge's support (ticket − edge cut), same axes.
    Refused beyond `max_n` tokens (n² variants of n tokens each grow as n³); use `edge_knockout` per row there.
    """
    ids = _check(model, ids, block, head, target)
    n = ids.numel()
    if n > max_n:
        raise ValueError(f"a full effect map of {n} tokens needs {n * n} variants; maps are made up to {max_n} "
                         "tokens, use edge_knockout for one query row")
    rows, cols = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    logits, base, pattern = knockout_logits(model, ids, block, torch.full((n * n,), head), rows.flatten(),
                                            cols.flatten())
    support, b = _result(logits, base, target, (n, n))
    return Knockout(block, head, pattern[head], support, b)


def edge_disagreements(ko: Knockout, tokens: Sequence[str], unit: str = "logit_diff", k: int = 3) -> dict[str, list]:
    """The row's edges where weight and support disagree most (rank percentiles, see `agreement.disagreements`):
    {"high_attention_low_effect": [(key, token, weight, support)], "low_attention_high_effect": [...]}."""
    if ko.weights.dim() != 1:
        raise ValueError("edge_disagreements reads a row knockout (edge_knockout), not a full effect map")
    return disagreements(ko.weights, ko.support[check_unit(unit)], tokens, k)
