"""Effect units and the one sign convention: support = score with the part − score without it, and how to print it."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ticketnet.interpret.signals import UNIT_LABELS, UNITS  # noqa: F401 (the units' names, re-exported)

SUPPORT_RULE = ("support for a team = its score with the part − its score without it: positive where the part helps "
                "the team (removing it lowers the score), negative where it works against the team")


def check_target(target: int, n_classes: int) -> int:
    if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target < n_classes:
        raise ValueError(f"target must be a team index in 0..{n_classes - 1}, got {target!r}")
    return target


def check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS} ('logit_diff' = logit difference, 'prob' = probability), "
                         f"got {unit!r}")
    return unit


def logit_difference(logits: Tensor, target: int) -> Tensor:
    """logit[target] − logsumexp(the other logits), (..., C) -> (...): log(p / (1 − p)) of the target team.

    Unlike p it does not saturate: at p = 0.95 a fall of 0.01 in p is a fall of 0.2 here.
    """
    if logits.dim() < 1 or logits.shape[-1] < 2:
        raise ValueError(f"logits must be (..., C) with at least two teams, got {tuple(logits.shape)}")
    target = check_target(target, logits.shape[-1])
    others = torch.cat([logits[..., :target], logits[..., target + 1:]], dim=-1)   # (..., C − 1)
    return logits[..., target] - torch.logsumexp(others, dim=-1)


def in_unit(logits: Tensor, target: int, unit: str) -> Tensor:
    """The target's logit difference or probability from logits (..., C) -> (...)."""
    if check_unit(unit) == "logit_diff":
        return logit_difference(logits, target)
    check_target(target, logits.shape[-1])
    return torch.softmax(logits, dim=-1)[..., target]


def both_units(logits: Tensor, target: int) -> dict[str, Tensor]:
    """{"logit_diff": (...), "prob": (...)} of the target team from logits (..., C)."""
    return {unit: in_unit(logits, target, unit) for unit in UNITS}


def supports(base_logits: Tensor, variant_logits: Tensor, target: int) -> dict[str, Tensor]:
    """Support of the part each variant removes, in both units, base − variant: base (C,) is the run with every
    part, variants (V, C) each without one part -> (V,); positive where the removed part helped the target."""
    if base_logits.dim() != 1 or variant_logits.dim() != 2 or variant_logits.shape[1] != base_logits.shape[0]:
        raise ValueError(f"need base logits (C,) and variant logits (V, C), got {tuple(base_logits.shape)} and "
                         f"{tuple(variant_logits.shape)}")
    base, var = both_units(base_logits, target), both_units(variant_logits, target)
    return {unit: base[unit] - var[unit] for unit in UNITS}


def support_column(unit: str) -> str:
    """The table column that holds support in `unit`: "support_logit_diff" or "support_prob"."""
    return f"support_{check_unit(unit)}"


def support_title(unit: str, team: str | None = None) -> str:
    """The one wording of every axis title and table header of support: "support for Billing (logit difference)"."""
    return f"support for {team or 'the target'} ({UNIT_LABELS[check_unit(unit)]})"


def share_title(unit: str) -> str:
    """The wording of a patch's share of the change recovered, with its unit: "share recovered (logit difference)"."""
    return f"share recovered ({UNIT_LABELS[check_unit(unit)]})"


def format_effect(value: float, digits: int = 2) -> str:
    """A signed effect with `digits` significant digits however small: 0.00042 -> "+0.00042", never "+0.00".

    Zero prints as "0", nan as "n/a"; values from 0.01 print with up to 3 decimals.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    value = float(value)
    if value == 0:
        return "0"
    if abs(value) >= 0.01:
        return f"{value:+.3f}" if abs(value) < 100 else f"{value:+.1f}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))        # first significant digit, then digits − 1 more
    if decimals > 8:
        return f"{value:+.{digits - 1}e}"
    return f"{value:+.{decimals}f}"
