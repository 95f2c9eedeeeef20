"""Activation patching between a ticket and an edited version: heads and residual stream, both directions, share recovered."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import torch
from torch import Tensor

from ticketnet.interpret.methods.counterfactual import check_eval, check_ticket
from ticketnet.interpret.interventions.units import UNITS, both_units, check_target
from ticketnet.lens.inspection import act_name, finish_blocks, head_outputs, run_from_block, run_with_cache
from ticketnet.nn.transformer import TinyTransformer

DIRECTIONS = ("a→b", "b→a")    # "a→b": activations of run a put into run b (b is the run that is edited)
HEAD_COLUMNS = ("direction", "block", "head", "logit_diff", "prob", "support_logit_diff", "support_prob",
                "share_logit_diff", "share_prob")
RESID_COLUMNS = ("direction", "layer", "layer_name", "position", "token", "source", "source_token", "aligned",
                 "logit_diff", "prob", "support_logit_diff", "support_prob", "share_logit_diff", "share_prob")
MEASURES = ("support_logit_diff", "support_prob", "share_logit_diff", "share_prob")


@dataclass(frozen=True)
class Alignment:
    """Positions of token list a paired with positions of b, in order: matches of the longest common subsequence,
    and between two matches (or the ends) gaps of equal length paired one to one as substitutions."""

    pairs: tuple[tuple[int, int], ...]    # (i in a, j in b), increasing in both
    n_a: int
    n_b: int

    def a_to_b(self) -> list[int | None]:
        out: list[int | None] = [None] * self.n_a
        for i, j in self.pairs:
            out[i] = j
        return out

    def b_to_a(self) -> list[int | None]:
        out: list[int | None] = [None] * self.n_b
        for i, j in self.pairs:
            out[j] = i
        return out

    def flipped(self) -> Alignment:
        return Alignment(tuple((j, i) for i, j in self.pairs), self.n_b, self.n_a)


def align_tokens(a: Sequence, b: Sequence) -> Alignment:
    """Align two token (or id) sequences: longest common subsequence (ties broken towards earlier positions of a),
    then equal-length gaps between matches paired position by position (a word replaced by another); the positions
    of unequal gaps (words inserted or deleted) stay unaligned."""
    a, b = list(a), list(b)
    n, m = len(a), len(b)
    L = [[0] * (m + 1) for _ in range(n + 1)]                          # L[i][j]: LCS of a[i:], b[j:]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            L[i][j] = L[i + 1][j + 1] + 1 if a[i] == b[j] else max(L[i + 1][j], L[i][j + 1])
    matches, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            matches.append((i, j))
            i, j = i + 1, j + 1
        elif L[i + 1][j] >= L[i][j + 1]:
            i += 1
        else:
            j += 1
    pairs, pi, pj = [], 0, 0
    for mi, mj in [*matches, (n, m)]:                                  # the end closes the last gap
        if mi - pi == mj - pj:
            pairs.extend(zip(range(pi, mi), range(pj, mj)))
        if mi < n:
            pairs.append((mi, mj))
        pi, pj = mi + 1, mj + 1
    return Alignment(tuple(pairs), n, m)


@dataclass(frozen=True)
class TicketRun:
    """One ticket run through the lens: its ids (n,), logits (C,) and cache."""

    ids: Tensor
    logits: Tensor                 # (C,)
    cache: dict[str, Tensor]


def ticket_run(model: TinyTransformer, ids: Tensor) -> TicketRun:
    with torch.inference_mode():
        logits, cache = run_with_cache(model, ids[None], torch.zeros(1, ids.numel(), dtype=torch.bool))
    return TicketRun(ids, logits[0], cache)


def patched_residual(model: TinyTransformer, donor: TicketRun, into: TicketRun, layer: int,
                     variants: Sequence[Sequence[tuple[int, int]]]) -> Tensor:
    """Logits (V, C) of run `into` with its residual stream at `layer` replaced at positions i by the donor's at j,
    one variant per list of (i, j). Layer b < L is block b's input (`resid_pre`), layer L the last block's output."""
    L = model.config.n_blocks
    name = act_name("resid_pre", layer) if layer < L else act_name("resid_post", L - 1)
    x_into, x_from = into.cache[name][0], donor.cache[name][0]         # (n_into, d), (n_from, d)
    x = x_into.expand(len(variants), -1, -1).clone()                   # (V, n_into, d)
    flat = [(v, i, j) for v, pairs in enumerate(variants) for i, j in pairs]
    if flat:
        v, i, j = torch.tensor(flat).unbind(1)
        x[v, i] = x_from[j]
    with torch.inference_mode():
        return run_from_block(model, x, layer) if layer < L else finish_blocks(model, x, L)


def patched_heads(model: TinyTransformer, donor: TicketRun, into: TicketRun, block: int,
                  variants: Sequence[Sequence[tuple[int, int, int]]]) -> Tensor:
    """Logits (V, C) of run `into` with head k's output (before W_O) in `block` replaced at position i by the
    donor's at j, one variant per list of (k, i, j); every other head and position keeps its own output."""
    with torch.inference_mode():
        z_into, z_from = head_outputs(model, into.cache, block)[0], head_outputs(model, donor.cache, block)[0]
        V = len(variants)
        z = z_into.expand(V, -1, -1, -1).clone()                       # (V, h, n_into, d_k)
        where = torch.zeros(z.shape[:3], dtype=torch.bool)              # (V, h, n_into)
        flat = [(v, *t) for v, triples in enumerate(variants) for t in triples]
        if flat:
            v, k, i, j = torch.tensor(flat).unbind(1)
            z[v, k, i] = z_from[k, j]
            where[v, k, i] = True
        x = into.cache[act_name("resid_pre", block)].expand(V, -1, -1)
        return run_from_block(model, x, block, z=z, z_where=where)


def _measures(values: dict[str, Tensor], into: dict[str, float], donor: dict[str, float]) -> dict[str, Tensor]:
    """Per unit the patch's support (patched − the run's own value: the donor's activation in place of the run's)
    and its share of the gap to the donor ((patched − into) / (donor − into), nan without a gap)."""
    out = {}
    for u in UNITS:
        gap = donor[u] - into[u]
        out[f"support_{u}"] = values[u] - into[u]
        out[f"share_{u}"] = out[f"support_{u}"] / gap if gap != 0 else torch.full_like(values[u], float("nan"))
    return out


@dataclass(frozen=True)
class ContrastPatching:
    """Both runs, their alignment, and every patch in both directions with the share of the change it recovers."""

    tokens_a: list[str]
    tokens_b: list[str]
    values_a: dict[str, float]     # unit -> the target's value on run a
    values_b: dict[str, float]
    alignment: Alignment
    heads: pd.DataFrame            # HEAD_COLUMNS
    resid: pd.DataFrame            # RESID_COLUMNS; unaligned positions have no source and nan values


def contrast_patching(model: TinyTransformer, ids_a: Tensor, ids_b: Tensor, target: int,
                      tokens_a: Sequence[str] | None = None, tokens_b: Sequence[str] | None = None) -> ContrastPatching:
    """Patch each head's output and each layer's residual stream at each position from one run into the other,
    both directions, and measure the share of the prediction change each recovers.

    Direction "a→b" runs b with one activation taken from a: the patch's support for the target = patched − b
    (score with a's activation − score with b's own), and share = that / (a − b), of the target's logit difference
    (and of its probability); share 1 = the patch alone turns b's prediction into a's. Positions are
    aligned by `align_tokens` (ids); a head patch replaces that head at every aligned position, a residual patch
    one position. Per direction and block one batch of variants runs from that block.
    """
    check_eval(model)
    ids_a, ids_b = check_ticket(ids_a), check_ticket(ids_b)
    check_target(target, model.config.n_classes)
    tokens_a = [str(t) for t in ids_a.tolist()] if tokens_a is None else list(tokens_a)
    tokens_b = [str(t) for t in ids_b.tolist()] if tokens_b is None else list(tokens_b)
    if len(tokens_a) != ids_a.numel() or len(tokens_b) != ids_b.numel():
        raise ValueError("tokens must name each id of their ticket")
    runs = {"a": ticket_run(model, ids_a), "b": ticket_run(model, ids_b)}
    values = {k: {u: float(v) for u, v in both_units(r.logits, target).items()} for k, r in runs.items()}
    alignment = align_tokens(ids_a.tolist(), ids_b.tolist())
    L, h = model.config.n_blocks, model.config.h
    toks = {"a": tokens_a, "b": tokens_b}
    head_rows, resid_rows = [], []
    for direction, (src, dst), al in (("a→b", ("a", "b"), alignment), ("b→a", ("b", "a"), alignment.flipped())):
        pairs = [(j, i) for i, j in al.pairs]                          # (position in dst, position in src)
        source = al.b_to_a()                                           # dst position -> src position or None
        for b in range(L):
            logits = patched_heads(model, runs[src], runs[dst], b, [[(k, i, j) for i, j in pairs] for k in range(h)])
            vals = both_units(logits, target)
            m = _measures(vals, values[dst], values[src])
            head_rows += [(direction, b + 1, k + 1, float(vals["logit_diff"][k]), float(vals["prob"][k]),
                           *(float(m[c][k]) for c in MEASURES)) for k in range(h)]
        for layer in range(L + 1):
            name = f"block {layer + 1} input" if layer < L else f"block {L} output"
            got = {}
            if pairs:
                logits = patched_residual(model, runs[src], runs[dst], layer, [[p] for p in pairs])
                vals = both_units(logits, target)
                m = _measures(vals, values[dst], values[src])
                got = {i: (float(vals["logit_diff"][v]), float(vals["prob"][v]), *(float(m[c][v]) for c in MEASURES))
                       for v, (i, _) in enumerate(pairs)}
            nan6 = (float("nan"),) * 6
            for i in range(len(toks[dst])):
                j = source[i]
                resid_rows.append((direction, layer, name, i, toks[dst][i], j, None if j is None else toks[src][j],
                                   j is not None, *got.get(i, nan6)))
    return ContrastPatching(tokens_a, tokens_b, values["a"], values["b"], alignment,
                            pd.DataFrame(head_rows, columns=list(HEAD_COLUMNS)),
                            pd.DataFrame(resid_rows, columns=list(RESID_COLUMNS)))
