"""Route interventions for the pages, cached: edge knockout and effect maps, head ablation, contrast patching, phrases."""

# Each result is cached per (arguments, weights file) by `cached_on_weights`, computed from the shared router, which
# is only read here (no hooks: the interventions run the from-scratch lens, not Captum's gradient hooks; Captum's
# Shapley sampling only calls a forward function). The head means of the valid split are computed once per weights
# and data file and kept as one shared tensor.

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from dashboard.data import splits
from dashboard.data.model import TICKET_TTL_S, cached_on_weights, router
from dashboard.data.ticket import inspection
from ticketnet.interpret import (
    ContrastPatching,
    Knockout,
    Phrase,
    PhraseShapley,
    contrast_patching,
    edge_knockout,
    effect_map,
    head_ablation,
    head_means,
    phrase_deletions,
    phrase_shapley,
    redundant_pairs,
    split_phrases,
)
from ticketnet.interpret.interventions.knockout import MAP_MAX_N  # noqa: F401  (the pages' effect-map limit)
from ticketnet.interpret.interventions.shapley import EXACT_MAX  # noqa: F401  (the pages' exact-Shapley limit)
from ticketnet.interpret.signals import NEGLIGIBLE_EFFECT

SHAPLEY_SAMPLES = 64      # Captum permutation orders beyond EXACT_MAX phrases, in the phrase section
MEANS_SPLIT = "valid"     # mean ablation: each head's mean output over this split

def _ids(text: str, whole_thread: bool = False) -> torch.Tensor:
    return torch.tensor(inspection(text, whole_thread).encoded.ids, dtype=torch.long)


# -- attention edges ------------------------------------------------------------------------------------------------
@cached_on_weights(max_entries=256, ttl=TICKET_TTL_S)
def knockout_row(text: str, block: int, head: int, query: int, target: int, whole_thread: bool = False) -> Knockout:
    """Every edge of one query row of one head cut in turn (block, head 0-based): `edge_knockout`, cached."""
    return edge_knockout(router().model, _ids(text, whole_thread), block, head, query, target)


@cached_on_weights(show_spinner="Cutting every attention edge of each head in turn…", max_entries=64, ttl=TICKET_TTL_S)
def effect_maps(text: str, block: int, target: int, whole_thread: bool = False) -> list[Knockout]:
    """Each head's full effect map of `block` (0-based), one `Knockout` per head; tickets up to MAP_MAX_N tokens."""
    model = router().model
    return [effect_map(model, _ids(text, whole_thread), block, h, target) for h in range(model.config.h)]


# -- heads switched off -----------------------------------------------------------------------------------------------
@cached_on_weights(max_entries=2, resource=True)
def _head_means(split: str, data_key: tuple) -> torch.Tensor:
    r, rows = router(), splits.split_rows(split)
    return head_means(r.model, [r.encode(t).ids for t in rows["text"]])


def valid_head_means() -> torch.Tensor:
    """Each head's mean output (L, h, d_k) over the valid split, once per weights and data file."""
    splits.split_rows(MEANS_SPLIT)                          # fails readably first
    return _head_means(MEANS_SPLIT, splits.data_stamp(MEANS_SPLIT))


@cached_on_weights(max_entries=128, ttl=TICKET_TTL_S)
def ablation(text: str, target: int, mode: str, whole_thread: bool = False) -> pd.DataFrame:
    """`head_ablation` of the ticket, zero or mean (means over the valid split), cached."""
    means = valid_head_means() if mode == "mean" else None
    return head_ablation(router().model, _ids(text, whole_thread), target, mode, means)


# -- a ticket against an edit ------------------------------------------------------------------------------------------
@cached_on_weights(show_spinner="Patching every head and residual position, both ways…", max_entries=64, ttl=TICKET_TTL_S)
def contrast(text_a: str, text_b: str, target: int, whole_thread: bool = False) -> ContrastPatching:
    """`contrast_patching` of the ticket (a) against the edit (b) for the target team, cached per pair; both read
    whole with `whole_thread`."""
    a, b = inspection(text_a, whole_thread).encoded, inspection(text_b, whole_thread).encoded
    return contrast_patching(router().model, torch.tensor(a.ids), torch.tensor(b.ids), target, a.tokens, b.tokens)


# -- phrases --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PhraseResults:
    """A ticket's phrases, every phrase and pair deleted, and their Shapley values in one unit."""

    phrases: list[Phrase]
    deletions: pd.DataFrame          # phrase_deletions (ticket, singles, pairs)
    redundant: pd.DataFrame          # redundant_pairs: first, second, interaction
    shapley: PhraseShapley           # in the unit asked for

    def singles(self) -> pd.DataFrame:
        return self.deletions[self.deletions.kind == "single"].reset_index(drop=True)

    def pairs(self) -> pd.DataFrame:
        return self.deletions[self.deletions.kind == "pair"].reset_index(drop=True)


@cached_on_weights(show_spinner="Deleting each phrase and each pair, and the phrases' Shapley values…", max_entries=128, ttl=TICKET_TTL_S)
def phrases(text: str, target: int, unit: str = "logit_diff", whole_thread: bool = False) -> PhraseResults:
    """The ticket's phrases with their deletions (singles and pairs), redundant pairs and Shapley values in `unit`
    (exact up to EXACT_MAX phrases, SHAPLEY_SAMPLES random orders beyond), cached."""
    model = router().model
    encoded = inspection(text, whole_thread).encoded
    ids = torch.tensor(encoded.ids, dtype=torch.long)
    found = split_phrases(encoded.text, ids.numel())       # the phrases of the text read, not of its quoted part
    deletions = phrase_deletions(model, ids, found, target)
    shap = phrase_shapley(model, ids, found, target, unit, n_samples=SHAPLEY_SAMPLES)
    return PhraseResults(found, deletions, redundant_pairs(deletions), shap)


def negligible_change(change: float, unit: str) -> bool:
    """Whether a change of the target's score (`unit`) is too small for a share of it to mean anything: under
    `signals.NEGLIGIBLE_EFFECT`, where a patch's share is noise divided by a number near 0."""
    if unit not in NEGLIGIBLE_EFFECT:
        raise ValueError(f"unit must be one of {tuple(NEGLIGIBLE_EFFECT)}, got {unit!r}")
    return not abs(float(change)) >= NEGLIGIBLE_EFFECT[unit]
