"""ERASER faithfulness (DeYoung et al. 2020): comprehensiveness and sufficiency of a signal's top tokens, and AOPC."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence

import pandas as pd
import torch
from torch import Tensor, nn

from ticketnet.interpret import signals as sig
from ticketnet.interpret._checks import by_score, check_vector
from ticketnet.interpret.methods.counterfactual import check_eval, check_ticket
from ticketnet.nn.batching import length_chunks
from ticketnet.nn.transformer import pad_batch

FRACTIONS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.2, 0.5)   # ERASER's bins (DeYoung et al. 2020), immutable
ERASER_COLUMNS = (sig.SIGNAL, "fraction", "k", *sig.ERASER_METRICS)


def rationale_variants(ids: Tensor, order: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The ticket without its rationale, x∖r (n−k,), and the rationale alone, r (k,), both in reading order.

    The rationale r is the k tokens with the highest `order` scores (n,), equal scores by position.
    """
    ids = check_ticket(ids)
    order = check_vector(order, "order")
    n = ids.numel()
    if order.numel() != n:
        raise ValueError(f"order scores {order.numel()} tokens but the ticket has {n}")
    if not 1 <= k <= n - 1:
        raise ValueError(f"k must be in 1..n−1 = 1..{n - 1} so both variants keep a token, got {k}")
    in_r = torch.zeros(n, dtype=torch.bool)
    in_r[by_score(order)[:k]] = True
    return ids[~in_r], ids[in_r]


def _rationale_size(fraction: float, n: int) -> int:
    # Half-up rounding (Python's round() sends 2.5 to 2); at least one token, and at most n−1 so that
    # x∖r keeps one token for the model to read.
    if not 0 < fraction <= 1:
        raise ValueError(f"fractions must lie in (0, 1], got {fraction}")
    return min(max(1, math.floor(fraction * n + 0.5)), n - 1)


def eraser_plan(ids: Tensor, signals: Mapping[str, Tensor], fractions: Sequence[float]) -> list[tuple]:
    """(signal, fraction, k, x∖r ids list, r ids list) for every signal and fraction of one ticket; the same
    split as `rationale_variants`, done on lists because a whole data split asks for hundreds of thousands."""
    ids = check_ticket(ids, min_len=2)
    return list(_rationale_splits(ids.tolist(), ids.numel(), set, signals, fractions, "tokens"))


def _rationale_splits(tokens: list[int], n_units: int, positions: Callable[[list[int]], set[int]],
                      signals: Mapping[str, Tensor], fractions: Sequence[float], what: str) -> Iterator[tuple]:
    """(signal, fraction, k, x∖r, r) per signal and fraction: r the tokens at `positions` of each signal's top k
    of `n_units` units (`what` names them in errors), both in reading order."""
    sizes = [(f, _rationale_size(f, n_units)) for f in fractions]
    for name, scores in signals.items():
        scores = check_vector(scores, name)
        if scores.numel() != n_units:
            raise ValueError(f"signal {name!r} scores {scores.numel()} {what} but the ticket has {n_units}")
        ranked = by_score(scores).tolist()
        for f, k in sizes:
            top = positions(ranked[:k])
            yield (name, f, k, [t for i, t in enumerate(tokens) if i not in top],
                   [t for i, t in enumerate(tokens) if i in top])


def unique_rows(seqs: list[list[int]]) -> tuple[list[list[int]], list[int]]:
    """Distinct id lists and, per input, its index among them: short tickets repeat variants a lot."""
    index: dict[tuple[int, ...], int] = {}
    where = [index.setdefault(tuple(s), len(index)) for s in seqs]
    return [list(t) for t in index], where


def _eraser_frame(plan: list[tuple], p_row: Tensor, where: list[int], base_at: int, target: int) -> pd.DataFrame:
    p = p_row[:, target]
    base = p[where[base_at]]
    rows = [(name, f, k, float(base - p[where[2 * j]]), float(base - p[where[2 * j + 1]]))
            for j, (name, f, k, _, _) in enumerate(plan)]
    return pd.DataFrame(rows, columns=list(ERASER_COLUMNS))


def eraser(model: nn.Module, ids: Tensor, signals: Mapping[str, Tensor], target: int,
           fractions: Sequence[float] = FRACTIONS) -> pd.DataFrame:
    """ERASER comprehensiveness and sufficiency (DeYoung et al. 2020) of each signal's top tokens.

    For each signal (n,) and fraction, r is its top k = max(1, round(fraction·n)) tokens (at most n−1);
    comprehensiveness = p(target|x) − p(target|x∖r) (high: the model needed r), sufficiency =
    p(target|x) − p(target|r) (low: r alone suffices). All variants of all signals and fractions go
    through ONE batched forward pass. Columns: signal, fraction, k, comprehensiveness, sufficiency.
    """
    check_eval(model)
    ids = check_ticket(ids, min_len=2)
    plan = eraser_plan(ids, signals, fractions)
    seqs = [s for *_, removed, kept in plan for s in (removed, kept)] + [ids.tolist()]
    unique, where = unique_rows(seqs)
    with torch.inference_mode():
        probs = torch.softmax(model(*pad_batch(unique)), dim=-1)       # (distinct variants, C)
    return _eraser_frame(plan, probs, where, len(seqs) - 1, target)


def eraser_by_units(model: nn.Module, ids: Sequence[int], units: Sequence[Sequence[int]],
                    signals: Mapping[str, Tensor], target: int, fractions: Sequence[float] = FRACTIONS,
                    around: tuple[Sequence[int], Sequence[int]] = ((), ())) -> pd.DataFrame:
    """`eraser` with units of several tokens: an encoder's words, each the positions of its pieces in `ids`.

    Each signal scores the units (len(units),); r is its top k = max(1, round(fraction·units)) units (at most
    units−1), x∖r the ticket without r's tokens and r its tokens alone, both in reading order and both between
    `around` (the [CLS] and [SEP] an encoder reads around every ticket, never taken out). The same columns as
    `eraser`, k counted in units; every variant in one batched pass (distinct rows only)."""
    check_eval(model)
    n_units = len(units)
    if n_units < 2:
        raise ValueError(f"ERASER needs at least 2 units so both variants keep one, got {n_units}")
    before, after = list(around[0]), list(around[1])
    plan = [(name, f, k, [*before, *removed, *after], [*before, *kept, *after])
            for name, f, k, removed, kept in _rationale_splits(
                list(ids), n_units, lambda top: {i for u in top for i in units[u]}, signals, fractions, "units")]
    seqs = [s for *_, removed, kept in plan for s in (removed, kept)] + [[*before, *ids, *after]]
    unique, where = unique_rows(seqs)
    probs = torch.empty(len(unique), model.config.n_classes)
    with torch.inference_mode():
        for idx in length_chunks([len(u) for u in unique], max(1, 16_384 // max(map(len, unique)))):
            rows = pad_batch([unique[i] for i in idx], pad_id=getattr(model.config, "pad_id", 0))
            probs[idx] = torch.softmax(model(*rows).float(), dim=-1)
    return _eraser_frame(plan, probs, where, len(seqs) - 1, target)


def aopc(df: pd.DataFrame) -> pd.DataFrame:
    """Area over the perturbation curve per signal: mean comprehensiveness and sufficiency over fractions."""
    missing = {sig.SIGNAL, *sig.ERASER_METRICS} - set(df.columns)
    if missing:
        raise ValueError(f"aopc needs eraser()'s columns; missing {', '.join(sorted(missing))}")
    return df.groupby(sig.SIGNAL, sort=False)[list(sig.ERASER_METRICS)].mean().reset_index()
