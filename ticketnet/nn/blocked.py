"""Exact attention without the n × n matrix: keys in blocks, an online softmax, queries in blocks."""

# softmax(QKᵀ/√d_k + M)V is computed one (query block × key block) tile at a time. Each query row keeps a
# running maximum m, and an accumulator holding Σ e^(s − m)·v together with Σ e^(s − m) (the normaliser rides
# along as an extra column of ones appended to V, so one matrix product updates both). When a new key block
# raises a row's maximum, the accumulator is rescaled by e^(m_old − m_new) before the block is added; at the
# end the output is the accumulator divided by its normaliser. Scores are kept in base-2 units (Q is scaled
# by log₂e/√d_k, the mask by log₂e) so the exponential is `exp2`, e^x = 2^(x·log₂e): the same numbers, and on
# this project's CPUs exp2 runs faster than exp (docs/research-log.md, "What made the difference"). Nothing larger
# than one tile of scores (block_q × block_k per batch element) is ever allocated, and that tile is reused for
# every step.
#
# Same conventions as `ticketnet.attention.attention`: Q (..., n, d_k), K (..., m, d_k), V (..., m, d_v), an
# additive mask broadcasting to (..., n, m) (0 = may read, −∞ = may not), and a query that may read no key at
# all gets an output of exactly 0. Only the output is returned: the weights are the n × n matrix this
# function exists to avoid.

from __future__ import annotations

import math

import torch
from torch import Tensor

from ticketnet._runtime.parallel import share_out
from ticketnet.nn.attention import check_additive_mask

BLOCK_Q = 1024
BLOCK_K = 1024
LOG2E = 1.4426950408889634


def blocked_attention(Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None,
                      block_q: int = BLOCK_Q, block_k: int = BLOCK_K, workers: int | None = None) -> Tensor:
    """softmax(QKᵀ/√d_k + M)V, exact, holding one (block_q, block_k) score tile per batch element and worker.

    Query blocks are independent, so `workers` threads (default: torch's thread count) each take every
    workers-th block with one intra-op thread of their own.
    """
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"queries and keys must have the same size d_k, got {Q.shape[-1]} and {K.shape[-1]}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"every key needs a value: {K.shape[-2]} keys but {V.shape[-2]} values")
    if block_q < 1 or block_k < 1:
        raise ValueError(f"block sizes must be positive, got {block_q} and {block_k}")
    batch = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    n, m, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    dtype = torch.promote_types(torch.promote_types(Q.dtype, K.dtype), V.dtype)
    B = math.prod(batch)
    out = torch.zeros(*batch, n, d_v, dtype=dtype, device=Q.device)
    if n == 0 or B == 0:
        return out
    if m == 0:
        return out                                                  # nothing to read: every row is fully masked
    scale = LOG2E / math.sqrt(d_k)
    q = (Q.to(dtype) * scale).expand(*batch, n, d_k).reshape(B, n, d_k)       # log₂e/√d_k folded into Q once
    kT = K.to(dtype).expand(*batch, m, d_k).reshape(B, m, d_k).transpose(1, 2)  # (B, d_k, m), a view
    v1 = torch.ones(B, m, d_v + 1, dtype=dtype, device=Q.device)              # [V | 1]: the sum rides along
    v1[..., :d_v] = V.to(dtype).expand(*batch, m, d_v).reshape(B, m, d_v)
    if mask is not None:
        check_additive_mask(mask, "blocked_attention")
        mask = torch.broadcast_to(mask.to(dtype), (*batch, n, m))           # a view: never materialised
    bq, bk = min(block_q, n), min(block_k, m)
    flat_out = out.view(B, n, d_v)
    starts = list(range(0, n, bq))

    def run(share: list[int]) -> None:
        # One score tile and accumulator per worker, reused for every block it handles.
        tile = torch.empty(B, bq, bk, dtype=dtype, device=Q.device)
        acc = torch.empty(B, bq, d_v + 1, dtype=dtype, device=Q.device)
        stats = torch.empty(3, B, bq, 1, dtype=dtype, device=Q.device)      # running max, block max, rescale
        for q0 in share:
            _query_block(q, kT, v1, mask, flat_out, q0, min(q0 + bq, n), bk, tile, acc, stats)

    # Each worker owns whole query blocks with one intra-op thread: no barrier between the cores on every
    # small tile operation, which on a busy 2-core machine cost more than the work itself.
    share_out(run, starts, workers)
    return out


def _query_block(q: Tensor, kT: Tensor, v1: Tensor, mask: Tensor | None, out: Tensor, q0: int, q1: int, bk: int,
                 tile: Tensor, acc: Tensor, stats: Tensor) -> None:
    """Rows q0:q1 of the output: the online softmax over every key block, written into `out` (B, n, d_v)."""
    B, rq, m, d_v = q.shape[0], q1 - q0, kT.shape[-1], out.shape[-1]
    qb = q[:, q0:q1]
    a, mx, bm, c = acc[:, :rq], stats[0, :, :rq], stats[1, :, :rq], stats[2, :, :rq]
    a.zero_()
    mx.fill_(float("-inf"))
    for k0 in range(0, m, bk):
        k1 = min(k0 + bk, m)
        s = tile[:, :rq, : k1 - k0]
        if mask is None:
            torch.bmm(qb, kT[:, :, k0:k1], out=s)
        else:
            mb = mask[..., q0:q1, k0:k1].reshape(B, rq, k1 - k0)           # copies one tile at most
            torch.baddbmm(mb, qb, kT[:, :, k0:k1], beta=LOG2E, out=s)     # log₂e·M + QKᵀ
        torch.amax(s, dim=-1, keepdim=True, out=bm)
        torch.maximum(mx, bm, out=bm)                                      # bm = new running maximum
        # rows that have seen only −∞ so far keep a maximum of −∞; shift them by 0 instead (no NaN)
        safe = bm if mask is None else torch.where(torch.isneginf(bm), 0.0, bm)
        torch.sub(mx, safe, out=c).exp2_()                                # e^(m_old − m_new) ≤ 1
        mx.copy_(bm)
        s.sub_(safe).exp2_()                                               # e^(s − m_new), in place
        a.mul_(c).baddbmm_(s, v1[:, k0:k1])                                # rescale, then add this block
    den = a[..., d_v:]
    o = out[:, q0:q1]
    torch.div(a[..., :d_v], den, out=o)
    if mask is not None:
        o.masked_fill_(den == 0, 0.0)                                      # a row with nothing to read: 0
