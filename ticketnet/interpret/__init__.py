"""Interpretation: one method per module, metrics apart from methods, and the one-ticket and whole-split runs.

Methods (token scores): `removal` (counterfactual deletion and <unk> replacement, on the batched engine in
`counterfactual`), `attention_signals` (received attention, rollout), `gradients` (Captum), `heads` (head
masking). Interventions on the routes (support in `units`: logit difference or probability, one sign): `knockout`
(attention edges cut), `ablation` (heads switched off on one ticket), `patching` (a ticket against an edit),
`phrases` (phrase and pair deletion), `shapley` (phrase Shapley values). Metrics (how a score compares with the
removal effect): `agreement`, `eraser`, `evidence`, all scored at once by `scores.score_ticket`. Names of
signals and metrics: `signals`; the long result tables they fill: `results`. Runs: `ticket.interpret_ticket`,
`split.interpret_split`.
"""

# Every name is imported on first use, from its module under ticketnet.interpret: `ticketnet.interpret.signals`, the
# registry of names, is read by dashboard modules that must not import torch.
_LAZY = {
    "head_ablation": "interventions.ablation", "head_means": "interventions.ablation",
    "Knockout": "interventions.knockout", "edge_disagreements": "interventions.knockout",
    "edge_knockout": "interventions.knockout", "effect_map": "interventions.knockout",
    "Alignment": "interventions.patching", "ContrastPatching": "interventions.patching",
    "align_tokens": "interventions.patching", "contrast_patching": "interventions.patching",
    "PHRASE_RULE": "interventions.phrases", "Phrase": "interventions.phrases",
    "phrase_deletions": "interventions.phrases", "redundant_pairs": "interventions.phrases",
    "split_phrases": "interventions.phrases", "suggest_edit": "interventions.phrases",
    "token_scores": "interventions.phrases", "PhraseShapley": "interventions.shapley",
    "exact_shapley": "interventions.shapley", "phrase_shapley": "interventions.shapley",
    "sampled_shapley": "interventions.shapley", "UNITS": "interventions.units", "supports": "interventions.units",
    "support_title": "interventions.units", "removal_support": "methods.removal",
    "format_effect": "interventions.units", "logit_difference": "interventions.units",
    "attention_rollout": "methods.attention_signals", "attention_signals": "methods.attention_signals",
    "received_attention": "methods.attention_signals", "rollout_to_pooled": "methods.attention_signals",
    "counterfactual_batch": "methods.counterfactual", "variant_probs": "methods.counterfactual",
    "gradient_x_input": "methods.gradients", "integrated_gradients": "methods.gradients",
    "head_importance": "methods.heads", "Counterfactuals": "methods.removal",
    "counterfactual_probs": "methods.removal", "probability_drop": "methods.removal",
    "total_variation": "methods.removal", "ChanceBand": "metrics.agreement", "agreement_table": "metrics.agreement",
    "chance_band": "metrics.agreement", "disagreements": "metrics.agreement", "kendall_tau": "metrics.agreement",
    "kendall_taus": "metrics.agreement", "random_tau_baseline": "metrics.agreement", "spearman": "metrics.agreement",
    "spearmans": "metrics.agreement", "top_k_overlap": "metrics.agreement", "FRACTIONS": "metrics.eraser", "aopc": "metrics.eraser",
    "eraser": "metrics.eraser", "rationale_variants": "metrics.eraser", "average_precision": "metrics.evidence",
    "evidence_mask": "metrics.evidence", "evidence_recovery": "metrics.evidence", "TicketScores": "metrics.scores",
    "score_ticket": "metrics.scores", "SPLIT_ERASER_SIGNALS": "split", "SplitOptions": "split",
    "interpret_split": "split", "mean_aopc": "results", "values_of": "results", "long_frame": "results",
    "TicketInterpretation": "ticket", "interpret_ticket": "ticket", "eraser_table": "ticket",
    "PHRASE_SHAPLEY_SAMPLES": "ticket",
    "DISAGREEMENT": "signals", "RANDOM": "signals", "ROLLOUT": "signals", "TAU": "signals",
    "Disagreements": "metrics.disagreement", "effect_disagreements": "metrics.disagreement",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"ticketnet.interpret.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'ticketnet.interpret' has no attribute {name!r}")


def load_all() -> None:
    """Import every module behind the names above now (a warm-up thread does, so pages find them loaded)."""
    import importlib

    for module in sorted(set(_LAZY.values())):
        importlib.import_module(f"ticketnet.interpret.{module}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = sorted(_LAZY)
