"""Counterfactual token removal: the ticket's probabilities with each token deleted or replaced by <unk>, and each
token's support for the target (ticket − variant)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ticketnet.data.text import UNK_ID
from ticketnet.interpret.interventions.units import check_target, check_unit
from ticketnet.interpret.methods.counterfactual import variant_probs


@dataclass
class Counterfactuals:
    """Team probabilities of one ticket and of its one-token variants."""

    base: Tensor      # (C,) the ticket as written
    removed: Tensor   # (n, C) row i: token i deleted
    replaced: Tensor  # (n, C) row i: token i replaced by <unk>


def counterfactual_probs(model: nn.Module, ids: Tensor, unk_id: int = UNK_ID) -> Counterfactuals:
    """Probabilities of the ticket `ids` (n,) and of all its 2n one-token variants, computed together, never one
    variant at a time (`ticketnet.interpret.methods.counterfactual.variant_probs`: one padded batch for short tickets; from 40
    tokens block 1 once for all variants, the rest in cache-sized chunks)."""
    probs = variant_probs(model, ids, unk_id)
    return Counterfactuals(base=probs["ticket"], removed=probs["deleted"], replaced=probs["replaced"])


def _check_variants(base: Tensor, variants: Tensor) -> None:
    if base.dim() != 1 or variants.dim() != 2 or variants.shape[1] != base.shape[0]:
        raise ValueError(f"base must be (C,) and variants (n, C), got {tuple(base.shape)} and {tuple(variants.shape)}")


def probability_drop(base: Tensor, variants: Tensor, target: int) -> Tensor:
    """Support in probability, base[target] − variants[:, target] (n,): positive where the changed token supported
    the target. The removal signal the agreement, ERASER and split-wide runs rank."""
    _check_variants(base, variants)
    if not 0 <= target < base.shape[0]:
        raise ValueError(f"target must be a team index in 0..{base.shape[0] - 1}, got {target}")
    return base[target] - variants[:, target]


def _log_odds(probs: Tensor, target: int) -> Tensor:
    """log p[target] − log Σ_{c ≠ target} p[c] (...): the logit difference, without 1 − p losing a confident p."""
    p = probs.double()
    others = torch.cat([p[..., :target], p[..., target + 1:]], dim=-1).sum(-1)
    return torch.log(p[..., target]) - torch.log(others)


def removal_support(base: Tensor, variants: Tensor, target: int, unit: str = "logit_diff") -> Tensor:
    """Each token's support for the target (n,), ticket − variant, from probabilities base (C,) and variants (n, C):
    in logit difference (float64, from the probabilities) or in probability (`probability_drop`)."""
    _check_variants(base, variants)
    check_target(target, base.shape[0])
    if check_unit(unit) == "prob":
        return probability_drop(base, variants, target)
    return _log_odds(base, target) - _log_odds(variants, target)


def total_variation(base: Tensor, variants: Tensor) -> Tensor:
    """½ Σ_c |base − variant| (n,) in [0, 1]: how much of the whole team distribution moved, any direction."""
    _check_variants(base, variants)
    return 0.5 * (variants - base[None]).abs().sum(-1)
