"""Counterfactual token removal: the ticket's probabilities with each token deleted or replaced by <unk>."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from ticketnet.data.text import UNK_ID
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
    """base[target] − variants[:, target] (n,): positive where the changed token supported the target."""
    _check_variants(base, variants)
    if not 0 <= target < base.shape[0]:
        raise ValueError(f"target must be a team index in 0..{base.shape[0] - 1}, got {target}")
    return base[target] - variants[:, target]


def total_variation(base: Tensor, variants: Tensor) -> Tensor:
    """½ Σ_c |base − variant| (n,) in [0, 1]: how much of the whole team distribution moved, any direction."""
    _check_variants(base, variants)
    return 0.5 * (variants - base[None]).abs().sum(-1)
