"""The one registry of signal and metric names; adding a signal is one entry here plus one module in methods/."""

# A signal is a score per token of one ticket; a metric compares a signal with the removal effect (tau, spearman,
# top-k overlap), measures its faithfulness (ERASER comprehensiveness and sufficiency, mean over the fractions) or
# its recovery of annotated evidence (AP, token F1). Results are long tables (ticket_id, signal, metric, value)
# whose signal and metric cells hold these names: nothing is ever parsed out of a column name.

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

# The two units every effect comes in (computed in interventions/units.py); named here, where no torch is needed, so
# the dashboard's sentences and widgets read the same names.
UNITS: tuple[str, ...] = ("logit_diff", "prob")        # logit difference first: the default for magnitudes
UNIT_LABELS = {"logit_diff": "logit difference", "prob": "probability"}
# The size of an effect too small to read anything into, per unit: colour scales of support never end below it (a
# 1e-4 logit effect stays near white), tables list no "high support" part under it, and a patch's share of a change
# under it is flagged as unreliable. 0.1 logit difference is a change of p by about 0.025 near p = 0.5, less near 0 or 1.
NEGLIGIBLE_EFFECT = {"logit_diff": 0.1, "prob": 0.02}


@dataclass(frozen=True)
class Signal:
    """A token score's name and how to read it: what a larger value means, in which unit."""

    name: str
    family: str                  # removal, attention, gradient, phrase, baseline
    sign: str                    # what a larger value says about the token
    unit: str
    block: int | None = None     # 1-based, for attention read off one block or one head
    head: int | None = None
    method: str = ""             # "module:function" computing it from (model, ids (n,), target) -> (n,), if any
    color: str = ""              # the signal's colour in every chart of the dashboard (see `signal_color`)

    def compute(self, model, ids, target: int):
        """The signal's token scores (n,) of one ticket for the target team, from its method module."""
        if not self.method:
            raise ValueError(f"signal {self.name!r} has no method of its own; it is computed with others")
        module, function = self.method.split(":")
        return getattr(importlib.import_module(module), function)(model, ids, target)


# -- signals -----------------------------------------------------------------------------------------------------
REMOVAL = Signal("removal", "removal",
                 "p(target) with the token − without it: positive where it supported the target", "probability",
                 color="#c0392b")
UNK_REPLACEMENT = Signal("unk replacement", "removal",
                         "p(target) with the token − with <unk> in its place: positive where it supported the target",
                         "probability", color="#e67e22")
REMOVAL_TV = Signal("removal TV", "removal", "how much of the team distribution moves when the token is deleted "
                    "(total variation, any direction)", "probability, in [0, 1]", color="#f5b041")
UNK_TV = Signal("unk TV", "removal", "how much of the team distribution moves when the token becomes <unk>",
                "probability, in [0, 1]", color="#d4ac0d")
ROLLOUT = Signal("rollout", "attention", "share of the token in the pooled representation (Abnar & Zuidema 2020)",
                 "attention share, sums to 1", color="#16a085")
LAST_LAYER = Signal("last layer", "attention", "attention the classifier reads in the last layer, its heads averaged: "
                    "the [CLS] row, or every row's mean for a mean-pooled encoder", "attention share, sums to 1",
                    color="#2874a6")
INTEGRATED_GRADIENTS = Signal("integrated gradients", "gradient",
                              "attribution of p(target) to the token's embedding: positive supports the target",
                              "probability, adds up to p(ticket) − p(all <pad>)", color="#7d3c98")
GRADIENT_X_INPUT = Signal("gradient x input", "gradient", "gradient × embedding of p(target): positive supports it",
                          "probability per unit embedding",
                          method="ticketnet.interpret.methods.gradients:gradient_x_input", color="#c39bd3")
PHRASE_DELETION = Signal("phrase deletion", "phrase", "the token's phrase: logit difference of the target with the "
                         "phrase − without it (positive: the phrase supported the target)", "logit difference",
                         color="#1e8449")
PHRASE_SHAPLEY = Signal("phrase shapley", "phrase", "the Shapley value of the token's phrase for the target's logit "
                        "difference (positive: supports the target)", "logit difference", color="#82e0aa")
RANDOM = Signal("random", "baseline", "a random ordering of the tokens, seeded per ticket: every signal should beat it",
                "rank", color="#9e9e9e")


# Attention read off a block or a head: blues for the block means, a spread of other hues for single heads, none of
# them the removal red, the random grey or the gradient purple.
_BLOCK_COLORS = ("#5dade2", "#1f4e9c", "#85c1e9", "#154360")
_HEAD_COLORS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d", "#72b7b2", "#eeca3b", "#ff9da6",
                "#bab0ac", "#e45756", "#79706e", "#d67195")


def mean_attention(block: int) -> Signal:
    """Attention each token receives in `block` (1-based), averaged over its heads and the reading tokens."""
    return Signal(f"mean attention b{block}", "attention", "mean weight the token receives in the block",
                  "attention weight, sums to 1", block=block, color=_BLOCK_COLORS[(block - 1) % len(_BLOCK_COLORS)])


def head_attention(block: int, head: int) -> Signal:
    """Attention each token receives from one head ("b2 h1" = block 2, head 1, both 1-based)."""
    return Signal(f"b{block} h{head}", "attention", "mean weight the token receives from the head",
                  "attention weight, sums to 1", block=block, head=head,
                  color=_HEAD_COLORS[((block - 1) * 4 + head - 1) % len(_HEAD_COLORS)])


def attention_signals(n_blocks: int, n_heads: int) -> tuple[Signal, ...]:
    """Every attention signal of a model, in the order the results list them: rollout, per block, per head."""
    return (ROLLOUT, *(mean_attention(b + 1) for b in range(n_blocks)),
            *(head_attention(b + 1, i + 1) for b in range(n_blocks) for i in range(n_heads)))


# The signals with a method of their own, which `interpret_ticket` computes for every ticket and scores (agreement,
# ERASER, evidence, per-token table) with no further code: a new signal is added here, with its method module.
TOKEN_SIGNALS: tuple[Signal, ...] = (GRADIENT_X_INPUT,)
EFFECTS: tuple[Signal, ...] = (REMOVAL, UNK_REPLACEMENT)             # the causal references, signed
EFFECT_SIZES: tuple[Signal, ...] = (REMOVAL_TV, UNK_TV)
GRADIENTS: tuple[Signal, ...] = (INTEGRATED_GRADIENTS, GRADIENT_X_INPUT)
PHRASES: tuple[Signal, ...] = (PHRASE_DELETION, PHRASE_SHAPLEY)


_FIXED: tuple[Signal, ...] = (REMOVAL, UNK_REPLACEMENT, REMOVAL_TV, UNK_TV, ROLLOUT, LAST_LAYER, INTEGRATED_GRADIENTS,
                               GRADIENT_X_INPUT, PHRASE_DELETION, PHRASE_SHAPLEY, RANDOM)
_BLOCK_NAME = re.compile(r"^mean attention b(\d+)$")
_HEAD_NAME = re.compile(r"^b(\d+) h(\d+)$")
OTHER_COLOR = "#626567"


def signal(name: str) -> Signal | None:
    """The registry's Signal called `name` ("removal", "mean attention b2", "b1 h3"), None for a name it lacks."""
    for s in _FIXED:
        if s.name == name:
            return s
    if m := _BLOCK_NAME.match(name):
        return mean_attention(int(m.group(1)))
    if m := _HEAD_NAME.match(name):
        return head_attention(int(m.group(1)), int(m.group(2)))
    return None


def signal_color(name: str) -> str:
    """The one colour of the signal `name` in every chart (per ticket and split-wide alike); a dark grey for a name the
    registry lacks."""
    found = signal(name)
    return found.color if found is not None and found.color else OTHER_COLOR


def names(signals) -> tuple[str, ...]:
    """The names of `signals`, as the keys of a signal dict and the signal cells of a long table."""
    return tuple(s.name for s in signals)


# The split-wide run: which signals get ERASER scores by default, and which are scored against evidence.
SPLIT_ERASER_SIGNALS: tuple[str, ...] = names((REMOVAL, ROLLOUT, mean_attention(1), mean_attention(2), RANDOM))
PHRASE_SIGNALS: tuple[str, ...] = names(PHRASES)
EVIDENCE_SIGNALS: tuple[str, ...] = (*SPLIT_ERASER_SIGNALS, *PHRASE_SIGNALS)

# -- metrics -----------------------------------------------------------------------------------------------------
TAU = "tau"                              # Kendall τ-b against the removal effect, in [−1, 1]; 1 = same ranking
KENDALL_TAU = "kendall_tau"              # the same, as the column of one ticket's agreement table
SPEARMAN = "spearman"                    # Spearman ρ against the removal effect, in [−1, 1]
TOP3_OVERLAP = "top3_overlap"            # share of the signal's 3 highest tokens among removal's 3 highest, in [0, 1]
COMPREHENSIVENESS = "comprehensiveness"  # p(target|x) − p(target|x∖top-k): higher = the signal found what matters
SUFFICIENCY = "sufficiency"              # p(target|x) − p(target|top-k alone): lower = the top tokens suffice
AUPRC = "auprc"                          # average precision of the signal's ranking against the evidence tokens
TOKEN_F1 = "token_f1"                    # F1 of the signal's top-|gold| tokens against the evidence tokens
DISAGREEMENT = "disagreement"            # (1 − τ(rollout, removal)) / 2 in [0, 1]: high = ranked against effect

AGREEMENT_METRICS: tuple[str, ...] = (KENDALL_TAU, SPEARMAN, TOP3_OVERLAP)
ERASER_METRICS: tuple[str, ...] = (COMPREHENSIVENESS, SUFFICIENCY)
EVIDENCE_METRICS: tuple[str, ...] = (AUPRC, TOKEN_F1)
SPLIT_METRICS: tuple[str, ...] = (TAU, *ERASER_METRICS)

# The long result: one row per (ticket, signal, metric).
TICKET_ID, SIGNAL, METRIC, VALUE = "ticket_id", "signal", "metric", "value"
LONG_COLUMNS: tuple[str, ...] = (TICKET_ID, SIGNAL, METRIC, VALUE)
