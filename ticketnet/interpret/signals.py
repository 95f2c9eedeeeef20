"""The one registry of signal and metric names; adding a signal is one entry here plus one module in methods/."""

# A signal is a score per token of one ticket; a metric compares a signal with the removal effect (tau, spearman,
# top-k overlap), measures its faithfulness (ERASER comprehensiveness and sufficiency, mean over the fractions) or
# its recovery of annotated evidence (AP, token F1). Results are long tables (ticket_id, signal, metric, value)
# whose signal and metric cells hold these names: nothing is ever parsed out of a column name.

from __future__ import annotations

import importlib
from dataclasses import dataclass

# The two units every effect comes in (computed in interventions/units.py); named here, where no torch is needed, so
# the dashboard's sentences and widgets read the same names.
UNITS: tuple[str, ...] = ("logit_diff", "prob")        # logit difference first: the default for magnitudes
UNIT_LABELS = {"logit_diff": "logit difference", "prob": "probability"}


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

    def compute(self, model, ids, target: int):
        """The signal's token scores (n,) of one ticket for the target team, from its method module."""
        if not self.method:
            raise ValueError(f"signal {self.name!r} has no method of its own; it is computed with others")
        module, function = self.method.split(":")
        return getattr(importlib.import_module(module), function)(model, ids, target)


# -- signals -----------------------------------------------------------------------------------------------------
REMOVAL = Signal("removal", "removal",
                 "p(target) with the token − without it: positive where it supported the target", "probability")
UNK_REPLACEMENT = Signal("unk replacement", "removal",
                         "p(target) with the token − with <unk> in its place: positive where it supported the target",
                         "probability")
REMOVAL_TV = Signal("removal TV", "removal", "how much of the team distribution moves when the token is deleted "
                    "(total variation, any direction)", "probability, in [0, 1]")
UNK_TV = Signal("unk TV", "removal", "how much of the team distribution moves when the token becomes <unk>",
                "probability, in [0, 1]")
ROLLOUT = Signal("rollout", "attention", "share of the token in the pooled representation (Abnar & Zuidema 2020)",
                 "attention share, sums to 1")
INTEGRATED_GRADIENTS = Signal("integrated gradients", "gradient",
                              "attribution of p(target) to the token's embedding: positive supports the target",
                              "probability, adds up to p(ticket) − p(all <pad>)")
GRADIENT_X_INPUT = Signal("gradient x input", "gradient", "gradient × embedding of p(target): positive supports it",
                          "probability per unit embedding",
                          method="ticketnet.interpret.methods.gradients:gradient_x_input")
PHRASE_DELETION = Signal("phrase deletion", "phrase", "the token's phrase: logit difference of the target with the "
                         "phrase − without it (positive: the phrase supported the target)", "logit difference")
PHRASE_SHAPLEY = Signal("phrase shapley", "phrase", "the Shapley value of the token's phrase for the target's logit "
                        "difference (positive: supports the target)", "logit difference")
RANDOM = Signal("random", "baseline", "a random ordering of the tokens, seeded per ticket: every signal should beat it",
                "rank")


def mean_attention(block: int) -> Signal:
    """Attention each token receives in `block` (1-based), averaged over its heads and the reading tokens."""
    return Signal(f"mean attention b{block}", "attention", "mean weight the token receives in the block",
                  "attention weight, sums to 1", block=block)


def head_attention(block: int, head: int) -> Signal:
    """Attention each token receives from one head ("b2 h1" = block 2, head 1, both 1-based)."""
    return Signal(f"b{block} h{head}", "attention", "mean weight the token receives from the head",
                  "attention weight, sums to 1", block=block, head=head)


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
