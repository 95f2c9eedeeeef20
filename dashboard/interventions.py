"""Route interventions for the pages, cached: edge knockout and effect maps, head ablation, contrast patching, phrases."""

# Same pattern as dashboard/loading.py: one `st.cache_data` entry per (text, …, weights_stamp()), computed from the
# shared router, which is only read here (no hooks: the interventions run the from-scratch lens, not Captum's
# gradient hooks; Captum's Shapley sampling only calls a forward function). The head means of the valid split are
# computed once per weights and data file and kept with `st.cache_resource`.

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st
import torch

from dashboard import loading
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
from ticketnet.interpret.interventions.knockout import MAP_MAX_N
from ticketnet.interpret.interventions.shapley import EXACT_MAX

SHAPLEY_SAMPLES = 64      # Captum permutation orders beyond EXACT_MAX phrases, in the phrase section
MEANS_SPLIT = "valid"     # mean ablation: each head's mean output over this split

__all__ = ["EXACT_MAX", "MAP_MAX_N", "SHAPLEY_SAMPLES", "PhraseResults", "ablation", "contrast", "edge_rows",
           "effect_maps", "knockout_row", "phrases", "valid_head_means"]


def _model():
    return loading.router().model


def _ids(text: str) -> torch.Tensor:
    return torch.tensor(loading.inspection(text).encoded.ids, dtype=torch.long)


# -- attention edges ------------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=256)
def _knockout_row(text: str, block: int, head: int, query: int, target: int, key: tuple) -> Knockout:
    return edge_knockout(_model(), _ids(text), block, head, query, target)


def knockout_row(text: str, block: int, head: int, query: int, target: int) -> Knockout:
    """Every edge of one query row of one head cut in turn (block, head 0-based): `edge_knockout`, cached."""
    loading.router()
    return _knockout_row(text, block, head, query, target, loading.weights_stamp())


@st.cache_data(show_spinner="Cutting every attention edge of each head in turn…", max_entries=64)
def _effect_maps(text: str, block: int, target: int, key: tuple) -> list[Knockout]:
    model = _model()
    return [effect_map(model, _ids(text), block, h, target) for h in range(model.config.h)]


def effect_maps(text: str, block: int, target: int) -> list[Knockout]:
    """Each head's full effect map of `block` (0-based), one `Knockout` per head; tickets up to MAP_MAX_N tokens."""
    loading.router()
    return _effect_maps(text, block, target, loading.weights_stamp())


# -- heads switched off -----------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=2)
def _valid_head_means(data_key: tuple, weights_key: tuple) -> torch.Tensor:
    r = loading.router()
    rows = loading.split_rows(MEANS_SPLIT)
    return head_means(r.model, [r.encode(t).ids for t in rows["text"]])


def valid_head_means() -> torch.Tensor:
    """Each head's mean output (L, h, d_k) over the valid split, once per weights and data file."""
    loading.router()
    loading.split_rows(MEANS_SPLIT)                         # fails readably first
    return _valid_head_means(loading.stamp(loading.split_path(MEANS_SPLIT)), loading.weights_stamp())


@st.cache_data(show_spinner=False, max_entries=128)
def _ablation(text: str, target: int, mode: str, key: tuple) -> pd.DataFrame:
    means = valid_head_means() if mode == "mean" else None
    return head_ablation(_model(), _ids(text), target, mode, means)


def ablation(text: str, target: int, mode: str) -> pd.DataFrame:
    """`head_ablation` of the ticket, zero or mean (means over the valid split), cached."""
    loading.router()
    return _ablation(text, target, mode, loading.weights_stamp())


# -- a ticket against an edit ------------------------------------------------------------------------------------------
@st.cache_data(show_spinner="Patching every head and residual position, both ways…", max_entries=64)
def _contrast(text_a: str, text_b: str, target: int, key: tuple) -> ContrastPatching:
    a, b = loading.inspection(text_a).encoded, loading.inspection(text_b).encoded
    return contrast_patching(_model(), torch.tensor(a.ids), torch.tensor(b.ids), target, a.tokens, b.tokens)


def contrast(text_a: str, text_b: str, target: int) -> ContrastPatching:
    """`contrast_patching` of the ticket (a) against the edit (b) for the target team, cached per pair."""
    loading.router()
    return _contrast(text_a, text_b, target, loading.weights_stamp())


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


@st.cache_data(show_spinner="Deleting each phrase and each pair, and the phrases' Shapley values…", max_entries=128)
def _phrases(text: str, target: int, unit: str, key: tuple) -> PhraseResults:
    model = _model()
    ids = _ids(text)
    found = split_phrases(text, ids.numel())
    deletions = phrase_deletions(model, ids, found, target)
    shap = phrase_shapley(model, ids, found, target, unit, n_samples=SHAPLEY_SAMPLES)
    return PhraseResults(found, deletions, redundant_pairs(deletions), shap)


def phrases(text: str, target: int, unit: str = "logit_diff") -> PhraseResults:
    """The ticket's phrases with their deletions (singles and pairs), redundant pairs and Shapley values in `unit`
    (exact up to EXACT_MAX phrases, SHAPLEY_SAMPLES random orders beyond), cached."""
    loading.router()
    return _phrases(text, target, unit, loading.weights_stamp())


def edge_rows(ko: Knockout, tokens, unit: str, k: int = 3) -> pd.DataFrame:
    """The row's edges where weight and drop disagree most (`edge_disagreements`) as a small table to show:
    which way they disagree, key position and token, weight, drop (text, never "+0.00")."""
    from dashboard.narrative import effect, fmt
    from ticketnet.interpret import edge_disagreements

    found = edge_disagreements(ko, tokens, unit, k)
    rows = [(label, int(pos), tok, fmt(w), effect(d))
            for key, label in (("high_attention_low_effect", "high weight, low drop"),
                               ("low_attention_high_effect", "low weight, high drop"))
            for pos, tok, w, d in found[key]]
    return pd.DataFrame(rows, columns=["edge", "key", "token", "weight", "drop"])
