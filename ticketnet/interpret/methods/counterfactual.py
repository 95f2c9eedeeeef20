"""Team probabilities of every one-token deletion and <unk> replacement of a ticket, block 1 shared across variants."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ticketnet._runtime.parallel import share_out
from ticketnet.data.text import PAD_ID, UNK_ID
from ticketnet.nn.fast import attention_eval, feed_forward_eval
from ticketnet.nn.transformer import TinyTransformer

KINDS = ("deleted", "replaced")
# The two crossovers are measured ones (docs/performance.md, "Settings measured in the code").
SHARED_MIN_N = 40        # below, one plain forward of the variants is faster
PARALLEL_MIN_N = 160     # from here, worker threads beat intra-op threads
ROWS_PER_CHUNK = 2048    # variant rows per chunk: 16 variants of 128 tokens; a chunk's tensors mostly stay in a 2 MB L2
UNDERFLOW = 1e-30        # a normaliser below this lost its terms to exp underflow: that variant runs the plain way
TICKET, EARLIER, UNK = 0, 1, 2   # the three row sets: the ticket, each token one position earlier, <unk> at each position


# -- checks and the plain batch ---------------------------------------------------------------------------
def check_eval(model: nn.Module) -> None:
    if model.training:
        raise ValueError("interpretation reads a model in eval mode (dropout off); call model.eval() first")


def check_ticket(ids: Tensor, min_len: int = 1) -> Tensor:
    """One ticket's ids as a 1-D long tensor, refusing shapes and padding that would silently mislead."""
    if not isinstance(ids, Tensor):
        ids = torch.as_tensor(ids)
    if ids.dim() != 1:
        raise ValueError(f"ids must be one ticket, a 1-D tensor (n,), got shape {tuple(ids.shape)}")
    if ids.dtype != torch.long:
        raise ValueError(f"ids must be token ids (torch.long), got {ids.dtype}")
    if ids.numel() < min_len:
        raise ValueError(f"this needs a ticket of at least {min_len} token(s), got {ids.numel()}")
    if bool(ids.eq(PAD_ID).any()):
        raise ValueError("ids contain <pad> (id 0); pass one ticket without padding")
    return ids


def check_kinds(kinds: tuple[str, ...], n: int) -> None:
    if not kinds or set(kinds) - set(KINDS):
        raise ValueError(f"kinds must name some of {KINDS}, got {tuple(kinds)}")
    if "deleted" in kinds and n < 2:
        raise ValueError("a one-token ticket has nothing left after deleting its token; deletion needs n ≥ 2")


def counterfactual_batch(ids: Tensor, unk_id: int = UNK_ID, kinds: tuple[str, ...] = KINDS) -> tuple[Tensor, Tensor]:
    """One padded batch of the ticket `ids` (n,) and its variants: ids (1 + n·len(kinds), n) and is_pad.

    Row 0 is the ticket, then n rows per kind in the order given: "deleted" row i is the ticket with
    token i deleted (n−1 tokens, later tokens move up one position, one <pad> at the end), "replaced"
    row i the ticket with token i replaced by `unk_id`.
    """
    ids = check_ticket(ids)
    n = ids.numel()
    check_kinds(kinds, n)
    rows, pads = [ids[None]], [torch.zeros(1, n, dtype=torch.bool)]
    for kind in kinds:
        if kind == "deleted":
            keep = ~torch.eye(n, dtype=torch.bool)                     # (n, n): row i drops column i
            deleted = ids.expand(n, n)[keep].view(n, n - 1)             # (n, n−1), order preserved
            rows.append(torch.cat([deleted, deleted.new_full((n, 1), PAD_ID)], dim=1))
            pads.append(torch.arange(n).expand(n, n) == n - 1)          # stated, not inferred from id 0
        else:
            replaced = ids.expand(n, n).clone()
            rows.append(replaced.fill_diagonal_(unk_id))                # (n, n)
            pads.append(torch.zeros(n, n, dtype=torch.bool))
    return torch.cat(rows), torch.cat(pads)


def plain_variant_probs(model: nn.Module, ids: Tensor, unk_id: int, kinds: tuple[str, ...] = KINDS) -> dict[str, Tensor]:
    """The ticket and its variants of `kinds` as one padded batch through `model`: one forward pass."""
    batch, is_pad = counterfactual_batch(ids, unk_id, kinds)
    with torch.inference_mode():
        probs = torch.softmax(model(batch, is_pad), dim=-1)            # (1 + n·len(kinds), C)
    n = batch.shape[1]
    return {"ticket": probs[0], **{kind: probs[1 + j * n : 1 + (j + 1) * n] for j, kind in enumerate(kinds)}}


def variant_probs(model: nn.Module, ids: Tensor, unk_id: int = UNK_ID, kinds: tuple[str, ...] = KINDS) -> dict[str, Tensor]:
    """Team probabilities of the ticket `ids` (n,), "ticket" (C,), and of every one-token variant of `kinds`:
    row i of "deleted" (n, C) is the ticket without token i, row i of "replaced" (n, C) with token i → `unk_id`.

    A TinyTransformer reading SHARED_MIN_N tokens or more shares block 1 across the variants
    (`one_token_variants`); shorter tickets and other models go through the model as one padded batch.
    """
    check_eval(model)
    ids = check_ticket(ids)
    check_kinds(kinds, ids.numel())
    if isinstance(model, TinyTransformer) and ids.numel() >= SHARED_MIN_N:
        return one_token_variants(model, ids, unk_id, tuple(kinds))
    return plain_variant_probs(model, ids, unk_id, tuple(kinds))


# -- block 1 shared by all variants -----------------------------------------------------------------------
@dataclass(frozen=True)
class SharedBlock1:
    """What every variant's block-1 attention is assembled from, computed once per ticket.

    Weights `w[ab]` hold exp(q_a[j]·k_b[m]/√d_k − top_a[j]) in (m, j, h) layout for query set a and key
    set b, with top_a[j] the largest score of query j over the pairs some variant uses (so every weight is
    at most 1); `v` carries a trailing 1 so that one weighted sum gives both the numerator and the softmax
    normaliser.
    """

    x: Tensor                 # (3, n, d) block-1 inputs of the three row sets
    w: dict[str, Tensor]      # "tt", "te", "tu", "et", "ee": (m, j, h) un-normalised attention weights
    v: Tensor                 # (3, n, h, d_k + 1) values of each row set, then a 1
    unk_self: Tensor          # (n, d) attention output of the <unk> row itself in replacement variant i
    ticket: Tensor            # (n, h, d_k + 1) the ticket's own weighted sums: its block-1 attention


def shared_block1(model: TinyTransformer, ids: Tensor, unk_id: int,
                  kinds: tuple[str, ...] = ("deleted", "replaced")) -> SharedBlock1:
    """The block-1 pieces the variants of `kinds` need: deletions use "tt" "te" "et" "ee", replacements "tt" "tu"."""
    layer = model.blocks.layers[0]
    attn = layer.self_attn
    n, h = ids.numel(), attn.num_heads
    d = model.config.d
    d_k = d // h
    scale = d_k ** -0.5
    pos = model.position.weight[:n]                                            # (n, d)
    tok = model.embed(ids)                                                     # (n, d)
    earlier = pos[torch.arange(n).sub(1).clamp(min=0)]                         # row 0 is a placeholder
    x = torch.stack([tok + pos, tok + earlier, model.embed.weight[unk_id] + pos])   # (3, n, d)
    qkv = F.linear(layer.norm1(x), attn.in_proj_weight, attn.in_proj_bias)     # (3, n, 3d)
    q, k, v = qkv.view(3, n, 3, h, d_k).unbind(2)                              # 3 × (3, n, h, d_k)

    def scores(a: int, b: int) -> Tensor:                                      # (m, j, h)
        return torch.einsum("jhc,mhc->mjh", q[a], k[b]).mul(scale).contiguous()

    pairs = {"tt": (TICKET, TICKET)}
    if "deleted" in kinds:
        pairs.update(te=(TICKET, EARLIER), et=(EARLIER, TICKET), ee=(EARLIER, EARLIER))
    if "replaced" in kinds:
        pairs.update(tu=(TICKET, UNK))
    s = {ab: scores(a, b) for ab, (a, b) in pairs.items()}
    for ab in ("te", "ee"):
        if ab in s:
            s[ab][0] = float("-inf")                                           # token 0 never moves up
    if "tu" in s:
        s["tu"].diagonal(0, 0, 1).fill_(float("-inf"))                         # query i never meets <unk> at i
    top = {a: torch.stack([sc.amax(0) for ab, sc in s.items() if ab[0] == a]).amax(0) for a in {ab[0] for ab in s}}
    w = {ab: (sc - top[ab[0]]).exp_() for ab, sc in s.items()}                 # (m, j, h), top: (j, h)
    v1 = torch.cat([v, v.new_ones(3, n, h, 1)], dim=-1)                        # (3, n, h, d_k + 1)
    unk_self = x.new_empty(0)
    if "replaced" in kinds:
        # Row i of replacement variant i: the <unk> query meets the ticket's keys, key i swapped for <unk>'s.
        self_scores = torch.einsum("ihc,mhc->ihm", q[UNK], k[TICKET]).mul(scale)   # (i, h, m)
        own = torch.eye(n, dtype=torch.bool)[:, None, :]                           # (i, 1, m)
        unk_key = torch.einsum("ihc,ihc->ih", q[UNK], k[UNK]).mul(scale)           # (i, h)
        p = torch.softmax(torch.where(own, unk_key[..., None], self_scores), dim=-1)   # (i, h, m)
        o = torch.einsum("ihm,mhc->ihc", p.masked_fill(own, 0.0), v[TICKET])       # (i, h, d_k)
        unk_self = (o + (p * own).sum(-1, keepdim=True) * v[UNK]).reshape(n, d)    # (i, d)
    ticket = torch.einsum("mjh,mhc->jhc", w["tt"], v1[TICKET])                 # (j, h, d_k + 1)
    return SharedBlock1(x=x, w=w, v=v1, unk_self=unk_self, ticket=ticket)


def _before(w: Tensor, v: Tensor, lo: int, hi: int) -> Tensor:
    """Σ_{m<i} w[m]·v[m] for each cut i in [lo, hi): (c, j, h, d_k + 1); the keys before the chunk in one sum.

    Only running sums of the same terms the plain softmax adds: no differences of large sums, so no cancellation
    beyond what attention itself has."""
    wv = w[lo:hi, :, :, None] * v[lo:hi, None]                                  # (c, j, h, d_k + 1)
    out = torch.empty_like(wv)
    out[0] = torch.einsum("mjh,mhc->jhc", w[:lo], v[:lo])                       # the keys before the chunk
    torch.add(out[0], wv[:-1].cumsum(0), out=out[1:])
    return out


def _after(w: Tensor, v: Tensor, lo: int, hi: int) -> Tensor:
    """Σ_{m>i} w[m]·v[m] for each cut i in [lo, hi): (c, j, h, d_k + 1)."""
    wv = w[lo:hi, :, :, None] * v[lo:hi, None]
    out = torch.empty_like(wv)
    out[-1] = torch.einsum("mjh,mhc->jhc", w[hi:], v[hi:])                      # the keys after the chunk
    torch.add(out[-1], wv[1:].flip(0).cumsum(0).flip(0), out=out[:-1])
    return out


def _normalised(num: Tensor) -> tuple[Tensor, Tensor]:
    """Attention outputs (c, rows, d) from weighted sums (c, rows, h, d_k + 1), and which variants underflowed."""
    c, rows, h, _ = num.shape
    z = num[..., -1:]                                                          # (c, rows, h, 1)
    return (num[..., :-1] / z).reshape(c, rows, -1), (z < UNDERFLOW).flatten(1).any(1)


def ticket_block1(sb: SharedBlock1) -> tuple[Tensor, Tensor, Tensor]:
    """Block-1 inputs (1, n, d) and attention output (1, n, d) of the ticket as written, and its underflow (1,)."""
    o, bad = _normalised(sb.ticket[None])
    return sb.x[TICKET][None], o, bad


def replacement_block1(sb: SharedBlock1, lo: int, hi: int) -> tuple[Tensor, Tensor, Tensor]:
    """Block-1 inputs (c, n, d) and attention outputs (c, n, d) of replacement variants lo..hi−1, and
    which of them underflowed (c,)."""
    c, n = hi - lo, sb.x.shape[1]
    w, v = sb.w, sb.v
    num = _before(w["tt"], v[TICKET], lo, hi) + _after(w["tt"], v[TICKET], lo, hi)   # every key but i
    num += w["tu"][lo:hi, :, :, None] * v[UNK, lo:hi, None]                   # and <unk>'s key in its place
    at = (torch.arange(c), torch.arange(lo, hi))
    num[at] = 1.0                                                              # row i is not made here ...
    o, bad = _normalised(num)
    o[at] = sb.unk_self[lo:hi]                                                 # ... but in shared_block1
    x = sb.x[TICKET].expand(c, n, -1).clone()
    x[at] = sb.x[UNK, lo:hi]
    return x, o, bad


def deletion_block1(sb: SharedBlock1, lo: int, hi: int) -> tuple[Tensor, Tensor, Tensor]:
    """Block-1 inputs (c, n − 1, d) and attention outputs of deletion variants lo..hi−1, and underflows (c,).

    Row j < i is token j in place and meets keys m < i in place and m > i moved up; row j > i is token j
    moved up, meeting the same keys.
    """
    c, n = hi - lo, sb.x.shape[1]
    w, v = sb.w, sb.v
    in_place = torch.arange(n)[None, :] < torch.arange(lo, hi)[:, None]        # (c, n): row j before cut i
    keep = torch.arange(n)[None, :] != torch.arange(lo, hi)[:, None]           # (c, n): row i is gone
    num = torch.where(in_place[..., None, None],
                      _before(w["tt"], v[TICKET], lo, hi) + _after(w["te"], v[EARLIER], lo, hi),
                      _before(w["et"], v[TICKET], lo, hi) + _after(w["ee"], v[EARLIER], lo, hi))
    o, bad = _normalised(num[keep].view(c, n - 1, *num.shape[2:]))
    x = torch.where(in_place[..., None], sb.x[TICKET], sb.x[EARLIER])[keep].view(c, n - 1, -1)
    return x, o, bad


def finish(model: TinyTransformer, x: Tensor, o: Tensor) -> Tensor:
    """Team probabilities (c, C) of variants from their block-1 inputs x and attention outputs o (c, rows, d)."""
    first, *rest = model.blocks.layers
    y = feed_forward_eval(first, x + first.self_attn.out_proj(o))             # (c, rows, d)
    for layer in rest:
        y = feed_forward_eval(layer, attention_eval(layer, y))
    no_pad = torch.zeros(y.shape[:2], dtype=torch.bool)
    return torch.softmax(model.head(model.pool(y, no_pad)), dim=-1)           # (c, C)


def _plain(model: TinyTransformer, ids: Tensor, kind: str, cuts: Tensor, unk_id: int) -> Tensor:
    """Probabilities of the variants at `cuts` run through the model as written (the rare underflow fallback:
    it runs all n variants of that kind and keeps the ones asked for)."""
    if kind == "ticket":
        return torch.softmax(model(ids[None]), dim=-1)
    return plain_variant_probs(model, ids, unk_id, (kind,))[kind][cuts]


def one_token_variants(model: TinyTransformer, ids: Tensor, unk_id: int, kinds: tuple[str, ...] = ("deleted", "replaced"),
                       workers: int | None = None) -> dict[str, Tensor]:
    """Team probabilities of the ticket `ids` (n,) as written, "ticket" (C,), and of each variant of `kinds`:
    row i of "deleted" (n, C) is the ticket without token i, row i of "replaced" (n, C) the ticket with
    token i replaced by `unk_id`.

    Deleting token i or replacing it leaves every other token's block-1 input unchanged (a deletion moves the
    later tokens up one position, so each token has just two possible inputs). Block 1's queries, keys and
    values are therefore computed once for 3n rows, not for n² variant rows, and row j of variant i attends
    over the ticket's keys with key i left out or swapped: prefix sums over the keys before i plus suffix sums
    over the keys after it, O(n²·d) for all variants instead of O(n³·d) (plus one pass over the keys per chunk).
    From block 1's attention output on every variant row differs, so the rest runs as a batch of variants.

    Chunks of at most ROWS_PER_CHUNK variant rows, at least one per worker, go to `workers` threads
    (default: torch's thread count from PARALLEL_MIN_N tokens, else one thread with torch's intra-op
    threads); the ticket itself rides along with the first replacement chunk. A variant whose softmax
    normaliser underflowed runs through the model as written.
    """
    check_eval(model)
    ids = check_ticket(ids)
    n = ids.numel()
    check_kinds(kinds, n)
    if not 0 <= unk_id < model.config.vocab_size:
        raise ValueError(f"unk_id must be a token id in 0..{model.config.vocab_size - 1}, got {unk_id}")
    if n > model.config.max_len:
        raise ValueError(f"{n} tokens exceed the position table ({model.config.max_len}); truncate first")
    with torch.inference_mode():
        sb = shared_block1(model, ids, unk_id, kinds)
    C, dtype = model.config.n_classes, sb.x.dtype
    out = {"ticket": torch.empty(1, C, dtype=dtype), **{kind: torch.empty(n, C, dtype=dtype) for kind in kinds}}
    if workers is None:
        workers = torch.get_num_threads() if n >= PARALLEL_MIN_N else 1
    workers = max(1, workers)
    per = max(1, min(ROWS_PER_CHUNK // n, -(-n // workers)))                  # and at least a chunk per worker
    chunks = [(kind, lo, min(lo + per, n)) for lo in range(0, n, per) for kind in kinds]
    if "replaced" not in kinds:
        chunks.append(("ticket", 0, 1))
    block1 = {"deleted": deletion_block1, "replaced": replacement_block1}

    def run(share: list[tuple[str, int, int]]) -> None:
        with torch.inference_mode():                                           # grad mode is per thread
            for kind, lo, hi in share:
                parts = [ticket_block1(sb) if kind == "ticket" else block1[kind](sb, lo, hi)]
                if kind == "replaced" and lo == 0:
                    parts.append(ticket_block1(sb))                            # one more row, same length
                x, o, bad = (torch.cat(t) for t in zip(*parts))
                probs = finish(model, x, o)
                out[kind][lo:hi] = probs[: hi - lo]
                if len(parts) == 2:
                    out["ticket"][:] = probs[hi - lo :]
                for name, at, flags in ((kind, lo, bad[: hi - lo]), ("ticket", 0, bad[hi - lo :])):
                    if bool(flags.any()):
                        cuts = torch.arange(at, at + len(flags))[flags]
                        out[name][cuts] = _plain(model, ids, name, cuts, unk_id)

    share_out(run, chunks, workers)
    out["ticket"] = out["ticket"][0]
    return out
