"""Recovery of annotated evidence: which tokens a phrase covers, average precision and token F1 of a signal."""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
from torch import Tensor

from ticketnet.data.text import token_spans
from ticketnet.interpret import signals as sig
from ticketnet.interpret._checks import by_score, check_vector


def evidence_mask(text: str, tokens_kept: int, evidence: str) -> Tensor:
    """Gold tokens (tokens_kept,) bool: tokens whose character span overlaps an annotated evidence phrase.

    `evidence` holds `|`-separated substrings of `text`; every occurrence of each counts, matched without
    regard to case, and a phrase not found in the text marks nothing. `tokens_kept` is how many tokens the
    model read (truncation drops the rest).
    """
    spans = token_spans(text)
    if not 0 <= tokens_kept <= len(spans):
        raise ValueError(f"tokens_kept must be in 0..{len(spans)} (the text has {len(spans)} tokens), got {tokens_kept}")
    return spans_evidence_mask(text, spans[:tokens_kept], evidence)


def spans_evidence_mask(text: str, spans: Sequence[tuple[int, int]], evidence: str) -> Tensor:
    """Gold units (len(spans),) bool: each unit (a token, or an encoder's word) whose character span [start, end)
    in `text` overlaps an occurrence of an evidence phrase (`|`-separated, matched without regard to case)."""
    mask = torch.zeros(len(spans), dtype=torch.bool)
    for phrase in (p.strip() for p in evidence.split("|")):
        if not phrase:
            continue
        for m in re.finditer(re.escape(phrase), text, flags=re.IGNORECASE):   # offsets of the original text
            a, b = m.span()
            for i, (s, e) in enumerate(spans):
                if s < b and a < e:
                    mask[i] = True
    return mask


def average_precision(signal: Tensor, gold: Tensor) -> float:
    """Mean of precision@rank over the ranks of the gold tokens when ranked by `signal` (n,); nan without gold."""
    s = check_vector(signal, "signal")
    gold = torch.as_tensor(gold, dtype=torch.bool)
    if gold.shape != s.shape:
        raise ValueError(f"gold {tuple(gold.shape)} must match signal {tuple(s.shape)}")
    hits = gold[by_score(s)].double()                                   # 1 where the ranked token is gold
    if hits.sum() == 0:
        return float("nan")
    precision = hits.cumsum(0) / torch.arange(1, hits.numel() + 1)
    return float((precision * hits).sum() / hits.sum())


def evidence_recovery(signal: Tensor, gold: Tensor) -> dict[str, float]:
    """How well `signal` (n,) finds annotated evidence `gold` (n,) bool: auprc (average precision) and
    token_f1 of the top-|gold| tokens (with as many picks as gold tokens, F1 = precision = recall)."""
    ap = average_precision(signal, gold)
    gold = torch.as_tensor(gold, dtype=torch.bool)
    g = int(gold.sum())
    if g == 0:
        return {sig.AUPRC: float("nan"), sig.TOKEN_F1: float("nan")}
    picked = by_score(check_vector(signal, "signal"))[:g]
    return {sig.AUPRC: ap, sig.TOKEN_F1: float(gold[picked].sum()) / g}
