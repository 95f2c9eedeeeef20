"""Shapley values of a ticket's phrases: exact by enumeration up to 10 phrases, sampled orders beyond, batched."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ticketnet.interpret.methods.counterfactual import check_eval, check_ticket
from ticketnet.interpret.interventions.phrases import (Around, ForwardMemo, Phrase, _check_phrases, batched_logits,
                                                       keep_phrases)
from ticketnet.interpret.interventions.units import check_target, check_unit, in_unit

EXACT_MAX = 10          # 2¹⁰ = 1,024 coalitions in one batched pass; beyond, permutation sampling


@dataclass(frozen=True)
class PhraseShapley:
    """Shapley values of the phrases for f = the target's logit difference (or probability) of the kept phrases."""

    values: Tensor          # (P,) float64, summing to full − empty
    full: float             # f(ticket)
    empty: float            # f(every phrase deleted): one <unk>, or an encoder's specials alone
    unit: str
    method: str             # "exact" or "sampling"
    evaluations: int        # distinct coalitions sent through the model

    @property
    def efficiency_gap(self) -> float:
        """Σ values − (full − empty): 0 up to rounding for both methods."""
        return float(self.values.sum()) - (self.full - self.empty)


def _values_of(model: nn.Module, ids: list[int], phrases: Sequence[Phrase], kept: Tensor, target: int,
               unit: str, memo: ForwardMemo | None = None, around: Around | None = None) -> Tensor:
    """f of each coalition (rows of `kept`, (S, P) bool) -> (S,) float64."""
    seqs = [keep_phrases(ids, phrases, row.tolist(), around) for row in kept]
    return in_unit(batched_logits(model, seqs, memo=memo).double(), target, unit)


def exact_shapley(model: nn.Module, ids: Tensor, phrases: Sequence[Phrase], target: int,
                  unit: str = "logit_diff", memo: ForwardMemo | None = None, around: Around | None = None
                  ) -> PhraseShapley:
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
    f = _values_of(model, ids.tolist(), phrases, kept, target, unit, memo, around)   # (2^P,)
    size = kept.sum(1)                                                 # (2^P,)
    weight = torch.tensor([math.factorial(s) * math.factorial(P - s - 1) / math.factorial(P) if s < P else 0.0
                           for s in range(P + 1)], dtype=torch.float64)
    values = torch.empty(P, dtype=torch.float64)
    for i in range(P):
        without = ~kept[:, i]                                          # S ∌ i
        values[i] = (weight[size[without]] * (f[masks[without] | (1 << i)] - f[without])).sum()
    return PhraseShapley(values, float(f[-1]), float(f[0]), unit, "exact", 2 ** P)


def sample_orders(n_phrases: int, n_samples: int, seed: int) -> Tensor:
    """`n_samples` random orders of the phrases (n_samples, P): the orders Captum's ShapleyValueSampling draws after
    `torch.manual_seed(seed)` (one `torch.randperm` each), from a generator of their own."""
    gen = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(n_phrases, generator=gen) for _ in range(n_samples)])


def sampled_shapley(model: nn.Module, ids: Tensor, phrases: Sequence[Phrase], target: int,
                    unit: str = "logit_diff", n_samples: int = 64, seed: int = 0,
                    memo: ForwardMemo | None = None, around: Around | None = None) -> PhraseShapley:
    """Shapley values estimated over `n_samples` random phrase orders (permutation sampling, Captum's
    ShapleyValueSampling with one feature per phrase, deleted as baseline): phrase i's value is the mean over the
    orders of f(the phrases before it and i) − f(the phrases before it). Every order's prefixes go through the
    model together (distinct ones only, in length-sorted batches), where Captum sends one order at a time; the
    orders are Captum's (`sample_orders`), so are the values, to float rounding (tested against Captum). Each
    order's contributions add up to f(ticket) − f(empty), so the estimate keeps the efficiency property exactly."""
    check_eval(model)
    ids = check_ticket(ids)
    check_target(target, model.config.n_classes)
    check_unit(unit)
    _check_phrases(ids, phrases)
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}")
    P = len(phrases)
    orders = sample_orders(P, n_samples, seed)                          # (S, P): orders[s, k] = k-th phrase added
    rank = torch.empty_like(orders).scatter_(1, orders, torch.arange(P).expand(n_samples, P))   # (S, P) by phrase
    prefixes = rank[:, None, :] <= torch.arange(P)[None, :, None]      # (S, P, P): after k + 1 phrases, kept?
    kept = torch.cat([prefixes.reshape(-1, P), torch.zeros(1, P, dtype=torch.bool)])          # and the empty one
    f = _values_of(model, ids.tolist(), phrases, kept, target, unit, memo, around)             # (S·P + 1,)
    empty = f[-1]
    after = f[:-1].view(n_samples, P)                                  # f after the k-th phrase of each order
    before = torch.cat([empty.expand(n_samples, 1), after[:, :-1]], dim=1)
    values = torch.zeros(P, dtype=torch.float64).index_add_(0, orders.reshape(-1), (after - before).reshape(-1))
    return PhraseShapley(values / n_samples, float(after[0, -1]), float(empty), unit, "sampling",
                         torch.unique(kept, dim=0).shape[0])


def phrase_shapley(model: nn.Module, ids: Tensor, phrases: Sequence[Phrase], target: int, unit: str = "logit_diff",
                   n_samples: int = 64, seed: int = 0, memo: ForwardMemo | None = None,
                   around: Around | None = None) -> PhraseShapley:
    """Exact Shapley values up to EXACT_MAX phrases, sampled orders (Captum's) beyond. `memo`: `batched_logits`';
    `around`: `keep_phrases`' (an encoder's specials, kept in every coalition)."""
    if len(phrases) <= EXACT_MAX:
        return exact_shapley(model, ids, phrases, target, unit, memo, around)
    return sampled_shapley(model, ids, phrases, target, unit, n_samples, seed, memo, around)
