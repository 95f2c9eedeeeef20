"""What a partition's scan returns, and the ticket columns both router kinds write the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ticketnet.policy.conformal import team_set_labels
from ticketnet.policy.policy import DECIMALS, load_policy

TOP_K = 3                                  # top tokens (words) kept per ticket, by deletion effect and by rollout


@dataclass
class PartitionResult:
    tickets: pd.DataFrame                  # one row per ticket
    partial: dict                          # ticket_partial's sums
    token_sums: pd.DataFrame | None        # token_partial's sums (effects and full)
    effect_hist: pd.DataFrame | None
    occurrences: pd.DataFrame | None       # every token occurrence, only when asked for (tests compare with it)


def top_values(values: torch.Tensor, tokens: Sequence[str], prefix: str) -> dict:
    """The TOP_K highest `values` (ties: earlier position first) as prefix_1.., prefix_1_value.."""
    order = torch.argsort(values.double(), descending=True, stable=True)[:TOP_K].tolist()
    out = {}
    for k in range(TOP_K):
        out[f"{prefix}_{k + 1}"] = tokens[order[k]] if k < len(order) else None
        out[f"{prefix}_{k + 1}_value"] = float(values[order[k]]) if k < len(order) else float("nan")
    return out


def add_policy_columns(tickets: pd.DataFrame, meta: dict, teams: Sequence[str], probs: Sequence) -> None:
    """The stored policy's decision, shortlist and its size (`auto`, `team_set`, `set_size`), when the router has one."""
    policy = load_policy(meta)
    if policy is None or not len(probs):
        return
    table = np.round(np.vstack(probs), DECIMALS)
    auto, sets = policy.apply(table, list(teams))
    tickets["auto"] = auto
    tickets["team_set"] = pd.array(team_set_labels(sets, list(teams), table), dtype="string")
    tickets["set_size"] = sets.sum(axis=1).astype(np.int16)
