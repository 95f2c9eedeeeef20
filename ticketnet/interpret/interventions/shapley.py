"""Shapley values of a ticket's phrases: exact by enumeration up to 10 phrases (batched), Captum's sampling beyond."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ticketnet.interpret.methods.counterfactual import check_eval, check_ticket
from ticketnet.interpret.interventions.phrases import (ForwardMemo, Phrase, _check_phrases, batched_logits,
                                                       keep_phrases)
from ticketnet.interpret.interventions.units import check_target, check_unit, in_unit

EXACT_MAX = 10          # 2¹⁰ = 1,024 coalitions in one batched pass; beyond, permutation sampling


@dataclass(frozen=True)
class PhraseShapley:
    """Shapley values of the phrases for f = the target's logit difference (or probability) of the kept phrases."""

    values: Tensor          # (P,) float64, summing to full − empty
    full: float             # f(ticket)
    empty: float            # f(every phrase deleted), read as one <unk>
    unit: str
    method: str             # "exact" or "sampling"
    evaluations: int        # distinct coalitions sent through the model

    @property
    def efficiency_gap(self) -> float:
        """Σ values − (full − empty): 0 up to rounding for both methods."""
        return float(self.values.sum()) - (self.full - self.empty)


def _values_of(model: nn.Module, ids: list[int], phrases: Sequence[Phrase], kept: Tensor, target: int,
               unit: str, memo: ForwardMemo | None = None) -> Tensor:
    """f of each coalition (rows of `kept`, (S, P) bool) -> (S,) float64."""
    seqs = [keep_phrases(ids, phrases, row.tolist()) for row in kept]
    return in_unit(batched_logits(model, seqs, memo=memo).double(), target, unit)


def exact_shapley(model: nn.Module, ids: Tensor, phrases: Sequence[Phrase], target: int,
                  unit: str = "logit_diff", memo: ForwardMemo | None = None) -> PhraseShapley:
    """Shapley values by enumerating all 2^P coalitions of phrases in one batched pass (P ≤ EXACT_MAX):
    φ_i = Σ_{S ∌ i} |S|!(P−|S|−1)!/P! · (f(S ∪ {i}) − f(S)), f on the ticket with only the phrases of S kept."""
    check_eval(model)
    ids = check_ticket(ids)
    check_target(target, model.config.n_classes)
    check_unit(unit)
    _check_phrases(ids, phrases)
    P = len(phrases)
    if P > EXACT_MAX:
        raise ValueError(f"exact enumeration needs 2^{P} coalitions; it is done up to {EXACT_MAX} phrases, "
                         "use sampled_shapley beyond")
    masks = torch.arange(2 ** P)
    kept = (masks[:, None] >> torch.arange(P)) & 1 == 1               # (2^P, P) coalition bits
    f = _values_of(model, ids.tolist(), phrases, kept, target, unit, memo)   # (2^P,)
    size = kept.sum(1)                                                 # (2^P,)
    weight = torch.tensor([math.factorial(s) * math.factorial(P - s - 1) / math.factorial(P) if s < P else 0.0
                           for s in range(P + 1)], dtype=torch.float64)
    values = torch.empty(P, dtype=torch.float64)
    for i in range(P):
        without = ~kept[:, i]                                          # S ∌ i
        values[i] = (weight[size[without]] * (f[masks[without] | (1 << i)] - f[without])).sum()
    return PhraseShapley(values, float(f[-1]), float(f[0]), unit, "exact", 2 ** P)


def sampled_shapley(model: nn.Module, ids: Tensor, phrases: Sequence[Phrase], target: int,
                    unit: str = "logit_diff", n_samples: int = 64, seed: int = 0,
                    memo: ForwardMemo | None = None) -> PhraseShapley:
    """Shapley values estimated by Captum's ShapleyValueSampling over `n_samples` random phrase orders, one feature
    per phrase (a feature mask over a 0/1 "kept" vector, baseline 0 = deleted). Each order's marginal contributions
    add up to f(ticket) − f(empty), so the estimate keeps the efficiency property exactly."""
    from captum.attr import ShapleyValueSampling

    check_eval(model)
    ids = check_ticket(ids)
    check_target(target, model.config.n_classes)
    check_unit(unit)
    _check_phrases(ids, phrases)
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}")
    P, toks = len(phrases), ids.tolist()
    calls = [0]

    def forward(kept: Tensor) -> Tensor:                               # (B, P) of 0/1 -> (B,)
        calls[0] += kept.shape[0]
        return _values_of(model, toks, phrases, kept > 0.5, target, unit, memo)

    torch.manual_seed(seed)                                            # Captum draws its orders from torch
    with torch.inference_mode(False):
        svs = ShapleyValueSampling(forward)
        values = svs.attribute(torch.ones(1, P, dtype=torch.float64), baselines=0.0,
                               feature_mask=torch.arange(P)[None], n_samples=n_samples,
                               perturbations_per_eval=P)[0].detach().double()
    ends = _values_of(model, toks, phrases, torch.tensor([[True] * P, [False] * P]), target, unit, memo)
    return PhraseShapley(values, float(ends[0]), float(ends[1]), unit, "sampling", calls[0])


def phrase_shapley(model: nn.Module, ids: Tensor, phrases: Sequence[Phrase], target: int, unit: str = "logit_diff",
                   n_samples: int = 64, seed: int = 0, memo: ForwardMemo | None = None) -> PhraseShapley:
    """Exact Shapley values up to EXACT_MAX phrases, Captum's sampling beyond. `memo`: `batched_logits`'."""
    if len(phrases) <= EXACT_MAX:
        return exact_shapley(model, ids, phrases, target, unit, memo)
    return sampled_shapley(model, ids, phrases, target, unit, n_samples, seed, memo)
