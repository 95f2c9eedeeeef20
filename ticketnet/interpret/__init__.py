"""Interpretation: one method per module, metrics apart from methods, and the one-ticket and whole-split runs.

Methods (token scores): `removal` (counterfactual deletion and <unk> replacement, on the batched engine in
`counterfactual`), `attention_signals` (received attention, rollout), `gradients` (Captum), `heads` (head
masking). Interventions on the routes (support in `units`: logit difference or probability, one sign): `knockout`
(attention edges cut), `ablation` (heads switched off on one ticket), `patching` (a ticket against an edit),
`phrases` (phrase and pair deletion), `shapley` (phrase Shapley values). Metrics (how a score compares with the
removal effect): `agreement`, `eraser`, `evidence`. Runs: `ticket.interpret_ticket`, `split.interpret_split`.
"""

from ticketnet.interpret.interventions.ablation import head_ablation, head_means
from ticketnet.interpret.metrics.agreement import (
    ChanceBand, agreement_table, chance_band, disagreements, kendall_tau, kendall_taus, random_tau_baseline,
    spearman, top_k_overlap,
)
from ticketnet.interpret.methods.attention_signals import (
    attention_rollout, attention_signals, received_attention, rollout_to_pooled,
)
from ticketnet.interpret.methods.counterfactual import counterfactual_batch, variant_probs
from ticketnet.interpret.metrics.eraser import FRACTIONS, aopc, eraser, rationale_variants
from ticketnet.interpret.metrics.evidence import average_precision, evidence_mask, evidence_recovery
from ticketnet.interpret.methods.gradients import gradient_x_input, integrated_gradients
from ticketnet.interpret.methods.heads import head_importance
from ticketnet.interpret.interventions.knockout import Knockout, edge_disagreements, edge_knockout, effect_map
from ticketnet.interpret.interventions.patching import Alignment, ContrastPatching, align_tokens, contrast_patching
from ticketnet.interpret.interventions.phrases import (
    PHRASE_RULE, Phrase, phrase_deletions, redundant_pairs, split_phrases, suggest_edit, token_scores,
)
from ticketnet.interpret.methods.removal import (
    Counterfactuals, counterfactual_probs, probability_drop, removal_support, total_variation,
)
from ticketnet.interpret.interventions.shapley import PhraseShapley, exact_shapley, phrase_shapley, sampled_shapley
from ticketnet.interpret.split import SPLIT_ERASER_SIGNALS, interpret_split, mean_aopc, split_long
from ticketnet.interpret.ticket import TicketInterpretation, interpret_ticket
from ticketnet.interpret.interventions.units import UNITS, format_effect, logit_difference, support_title, supports

__all__ = [
    "FRACTIONS", "PHRASE_RULE", "SPLIT_ERASER_SIGNALS", "UNITS", "Alignment", "ChanceBand", "ContrastPatching",
    "Counterfactuals", "Knockout", "Phrase", "PhraseShapley", "TicketInterpretation", "agreement_table", "align_tokens", "aopc", "chance_band", "mean_aopc", "split_long",
    "attention_rollout", "attention_signals", "average_precision", "contrast_patching",
    "counterfactual_batch", "counterfactual_probs", "disagreements", "edge_disagreements", "edge_knockout",
    "effect_map", "eraser", "evidence_mask", "evidence_recovery", "exact_shapley", "format_effect",
    "gradient_x_input", "head_ablation", "head_importance", "head_means", "integrated_gradients", "interpret_split",
    "interpret_ticket", "kendall_tau", "kendall_taus", "logit_difference", "phrase_deletions", "phrase_shapley",
    "probability_drop", "random_tau_baseline", "removal_support",
    "rationale_variants", "received_attention", "redundant_pairs",
    "rollout_to_pooled", "sampled_shapley", "spearman", "split_phrases", "suggest_edit", "support_title",
    "supports", "token_scores",
    "top_k_overlap", "total_variation", "variant_probs",
]
