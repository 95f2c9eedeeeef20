"""One ticket, everything the Interpretation page shows: effects, signals, gradients, agreement, ERASER, evidence."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import torch
from torch import Tensor

from ticketnet.data.text import UNK_ID
from ticketnet.interpret.metrics.agreement import (
    AGREEMENT_COLUMNS, agreement_table, disagreements, random_signal, random_tau_baseline,
)
from ticketnet.interpret.methods.attention_signals import attention_signals
from ticketnet.interpret.methods.counterfactual import check_eval
from ticketnet.interpret.metrics.eraser import ERASER_COLUMNS, aopc, eraser
from ticketnet.interpret.metrics.evidence import evidence_mask, evidence_recovery
from ticketnet.interpret.methods.gradients import IntegratedGradients, gradient_x_input, integrated_gradients
from ticketnet.interpret.methods.removal import Counterfactuals, counterfactual_probs, probability_drop, total_variation
from ticketnet.lens.inspection import Inspection, RoutedTicket, inspect_ticket


@dataclass
class TicketInterpretation(RoutedTicket):
    """Everything the interpretation page shows for one ticket, computed once by `interpret_ticket`."""

    text: str
    tokens: list[str]                   # n tokens the model read (after truncation)
    ids: Tensor                         # (n,)
    teams: tuple[str, ...]
    target: int                         # team whose probability the effects and attributions follow
    probs: Tensor                       # (C,) team probabilities (PyTorch forward)
    counterfactuals: Counterfactuals | None   # None for a one-token ticket
    signals: dict[str, Tensor]          # name -> (n,) token scores; "removal" is the causal reference
    agreement: pd.DataFrame             # signal, kendall_tau, spearman, top3_overlap vs removal
    random_tau: Tensor                  # (n_draws,) τ of random rankings vs removal: the chance band
    eraser: pd.DataFrame                # signal, fraction, k, comprehensiveness, sufficiency
    aopc: pd.DataFrame                  # signal, comprehensiveness, sufficiency
    evidence: pd.DataFrame | None       # signal, auprc, token_f1, gold_tokens, base_rate; None without evidence
    per_token: pd.DataFrame             # position, token, one column per signal, removal TV, unk TV
    patterns: Tensor                    # (L, h, n, n) from the from-scratch lens
    differences: dict[str, float]       # |from-scratch − PyTorch| per block output, see lens.torch_differences
    ig: IntegratedGradients             # integrated gradients with their completeness gap and step count
    truncated: bool = False
    note: str = ""                      # why some parts are empty, or other caveats to show
    disagreements: dict[str, list[tuple]] = field(default_factory=dict)   # rollout vs removal

    @property
    def n(self) -> int:
        return len(self.tokens)


def interpret_ticket(router, text: str, target: int | None = None, evidence: str = "",
                     ig_steps: int = 64, n_draws: int = 200, seed: int = 0,
                     inspection: Inspection | None = None) -> TicketInterpretation:
    """Interpret one ticket: counterfactual effects, attention signals, gradients, agreement, ERASER, evidence.

    `target` defaults to the predicted team. A one-token ticket has no deletion counterfactual; its
    removal-based parts (agreement, ERASER, disagreements) are empty and `note` says why. `inspection`, the
    ticket's `inspect_ticket` when the caller has it already, saves running the lens a second time.
    """
    model = router.model
    check_eval(model)
    inspection = inspect_ticket(router, text) if inspection is None else inspection
    enc = inspection.encoded
    ids = torch.tensor(enc.ids, dtype=torch.long)
    n = ids.numel()
    with torch.inference_mode():
        probs = torch.softmax(model(ids[None], torch.zeros(1, n, dtype=torch.bool))[0], -1)  # PyTorch's, as routed
    patterns, differences = inspection.patterns, inspection.differences
    target = int(probs.argmax()) if target is None else int(target)
    if not 0 <= target < probs.numel():
        raise ValueError(f"target must be a team index in 0..{probs.numel() - 1}, got {target}")

    notes = []
    if enc.truncated:
        notes.append(f"only the first {n} of {enc.n_total} tokens are read; the rest are not interpreted")
    signals: dict[str, Tensor] = {}
    cf = None
    if n >= 2:
        cf = counterfactual_probs(model, ids, router.vocab.stoi.get("<unk>", UNK_ID))
        signals["removal"] = probability_drop(cf.base, cf.removed, target)
        signals["unk replacement"] = probability_drop(cf.base, cf.replaced, target)
    else:
        notes.append("a one-token ticket has no deletion counterfactual: removal effects, agreement with them, "
                     "ERASER and disagreements are empty")
    signals.update(attention_signals(patterns))
    ig = integrated_gradients(model, ids, target, steps=ig_steps)
    signals["integrated gradients"] = ig.attributions
    signals["gradient x input"] = gradient_x_input(model, ids, target)

    per_token = pd.DataFrame({"position": range(n), "token": enc.tokens})
    for name, s in signals.items():
        per_token[name] = s.double().numpy()
    if cf is not None:
        per_token["removal TV"] = total_variation(cf.base, cf.removed).double().numpy()
        per_token["unk TV"] = total_variation(cf.base, cf.replaced).double().numpy()

    if cf is not None:
        effect = signals["removal"]
        others = {k: v for k, v in signals.items() if k != "removal"}
        agreement = agreement_table(others, effect)
        random_tau = random_tau_baseline(effect, n_draws, seed)
        table = eraser(model, ids, {**signals, "random": random_signal(n, seed)}, target)
        found = disagreements(signals["rollout"], effect, enc.tokens)
    else:
        agreement = pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
        random_tau = torch.empty(0, dtype=torch.float64)
        table = pd.DataFrame(columns=list(ERASER_COLUMNS))
        found = {"high_attention_low_effect": [], "low_attention_high_effect": []}

    evidence_table = None
    if evidence.strip():
        try:
            gold = evidence_mask(text, n, evidence)
        except ValueError as exc:                                      # offsets unavailable for this text
            notes.append(f"evidence not scored: {exc}")
        else:
            per_token["evidence"] = gold.numpy()
            if not bool(gold.any()):
                notes.append("none of the evidence phrases overlaps a token the model read")
            evidence_table = pd.DataFrame(
                [{"signal": name, **evidence_recovery(s, gold), "gold_tokens": int(gold.sum()),
                  "base_rate": float(gold.double().mean())} for name, s in signals.items()])

    return TicketInterpretation(
        text=text, tokens=list(enc.tokens), ids=ids, teams=tuple(router.teams), target=target, probs=probs,
        counterfactuals=cf, signals=signals, agreement=agreement, random_tau=random_tau, eraser=table,
        aopc=aopc(table) if len(table) else pd.DataFrame(columns=["signal", "comprehensiveness", "sufficiency"]),
        evidence=evidence_table, per_token=per_token, patterns=patterns, differences=differences,
        ig=ig, truncated=enc.truncated, note="; ".join(notes), disagreements=found)
