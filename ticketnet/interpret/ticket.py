"""One ticket, everything the Interpretation page shows: effects, signals, gradients, agreement, ERASER, evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import torch
from torch import Tensor

from ticketnet.data.text import UNK_ID
from ticketnet.interpret import signals as sig
from ticketnet.interpret.metrics.agreement import AGREEMENT_COLUMNS, random_signal, random_tau_baseline
from ticketnet.interpret.metrics.disagreement import SMALL_EFFECTS, Disagreements, effect_disagreements
from ticketnet.interpret.methods.attention_signals import attention_signals
from ticketnet.interpret.methods.counterfactual import check_eval
from ticketnet.interpret.metrics.eraser import ERASER_COLUMNS, aopc, unique_rows
from ticketnet.interpret.metrics.evidence import evidence_mask
from ticketnet.interpret.metrics.scores import Row, TicketScores, score_ticket
from ticketnet.interpret.results import long_frame
from ticketnet.interpret.methods.gradients import START_STEPS, IntegratedGradients, integrated_gradients
from ticketnet.interpret.methods.removal import (Counterfactuals, counterfactual_probs, probability_drop, removal_support,
                                                 total_variation)
from ticketnet.interpret.interventions.phrases import ForwardMemo, batched_logits
from ticketnet.interpret.split import phrase_signals
from ticketnet.lens.inspection import Inspection, RoutedTicket
from ticketnet.nn.transformer import pad_batch

PHRASE_SHAPLEY_SAMPLES = 16   # Captum orders beyond 10 phrases for the phrase signals, as the split-wide run draws


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
    signals: dict[str, Tensor]          # name (signals.py) -> (n,) token scores; removal is the causal reference
    agreement: pd.DataFrame             # signal, kendall_tau, spearman, top3_overlap vs removal
    random_tau: Tensor                  # (n_draws,) τ of random rankings vs removal: the chance band
    eraser: pd.DataFrame                # signal, fraction, k, comprehensiveness, sufficiency (of eraser_signals)
    aopc: pd.DataFrame                  # signal, comprehensiveness, sufficiency
    evidence: pd.DataFrame | None       # signal, auprc, token_f1, gold_tokens, base_rate; None without evidence
    per_token: pd.DataFrame             # position, token, one column per signal, removal TV, unk TV
    patterns: Tensor                    # (L, h, n, n) from the from-scratch lens
    differences: dict[str, float]       # |from-scratch − PyTorch| per block output, see lens.torch_differences
    ig: IntegratedGradients             # integrated gradients with their completeness gap and step count
    truncated: bool = False
    note: str = ""                      # why some parts are empty, or other caveats to show
    scores: pd.DataFrame | None = None  # the long table: ticket_id (None), signal, metric, value
    phrase_shapley_method: str = ""     # "exact" or "sampling"; "" without phrase signals
    seed: int = 0                       # of the random signal and the chance band

    @property
    def n(self) -> int:
        return len(self.tokens)

    def removal_effect(self, unit: str) -> Tensor:
        """(n,) each token's deletion as support for the target in `unit` (`removal_support`: the score with the
        token minus the score without it); the signals' ``removal`` is this in probability."""
        cf = self.counterfactuals
        if cf is None:
            return torch.zeros(self.n, dtype=torch.float64)
        return removal_support(cf.base, cf.removed, self.target, unit).double()

    def disagreements(self, signal: str = sig.ROLLOUT.name, k: int = 3, unit: str = "prob") -> Disagreements:
        """The tokens `signal` and the removal effect disagree on (`effect_disagreements`), the effect in `unit`
        ("prob": the drop in p(target); "logit_diff": the support in log-odds, as the pages show it); empty lists
        for a one-token ticket, which has no removal effect."""
        if sig.REMOVAL.name not in self.signals:
            return effect_disagreements([], [], [], k)
        effect = self.signals[sig.REMOVAL.name] if unit == "prob" else self.removal_effect(unit)
        return effect_disagreements(self.signals[signal], effect, self.tokens, k, SMALL_EFFECTS[unit])


def _eraser_probs(model, ids: Tensor, scores: TicketScores, target: int,
                  memo: ForwardMemo | None = None) -> tuple[Tensor, Tensor]:
    """p(target) of the plan's variants and of the ticket, all in ONE batched forward pass (with `memo`, those not
    in it, in `batched_logits`' length-sorted batches)."""
    seqs = scores.sequences() + [ids.tolist()]
    if memo is not None:
        p = torch.softmax(batched_logits(model, seqs, memo=memo), dim=-1)[:, target]
        return p[:-1], p[-1]
    unique, where = unique_rows(seqs)
    with torch.inference_mode():
        p = torch.softmax(model(*pad_batch(unique)), dim=-1)[:, target]   # (distinct variants,)
    p = p[where]
    return p[:-1], p[-1]


def _eraser_parts(model, ids: Tensor, everything: dict[str, Tensor], target: int, names: Sequence[str] | None,
                  memo: ForwardMemo | None) -> pd.DataFrame:
    """ERASER rows of the signals in `everything` named in `names` (None: all), in `everything`'s order. The phrase
    signals' variants go through a forward pass of their own, as in the split-wide run."""
    chosen = [k for k in everything if names is None or k in names]
    phrase_names = [k for k in chosen if k in sig.PHRASE_SIGNALS]
    usual = [k for k in chosen if k not in phrase_names]
    parts = [score_ticket(None, ids, everything, None, eraser=group) for group in (usual, phrase_names) if group]
    tables = [part.eraser_table(*_eraser_probs(model, ids, part, target, memo)) for part in parts if part.plan]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=list(ERASER_COLUMNS))


def eraser_table(model, ti: "TicketInterpretation", names: Sequence[str],
                 memo: ForwardMemo | None = None) -> pd.DataFrame:
    """ERASER rows (signal, fraction, k, comprehensiveness, sufficiency) of the named signals of `ti` (its
    `signals` and "random"), as `interpret_ticket` gives them with `eraser_signals=names`: for a caller that
    computed the interpretation without ERASER and scores only the signals it shows. Empty for a one-token ticket."""
    everything = {**ti.signals, sig.RANDOM.name: random_signal(ti.n, ti.seed)}
    unknown = [k for k in names if k not in everything]
    if unknown:
        raise ValueError(f"no signal {unknown[0]!r} in this interpretation; it has {', '.join(everything)}")
    if ti.counterfactuals is None or not names:
        return pd.DataFrame(columns=list(ERASER_COLUMNS))
    return _eraser_parts(model, ti.ids, everything, ti.target, list(names), memo)


def interpret_ticket(router, text: str, target: int | None = None, evidence: str = "",
                     ig_steps: int = START_STEPS, n_draws: int = 200, seed: int = 0,
                     inspection: Inspection | None = None, phrases: bool = True,
                     counterfactuals: Counterfactuals | None = None,
                     memo: ForwardMemo | None = None,
                     eraser_signals: Sequence[str] | None = None) -> TicketInterpretation:
    """Interpret one ticket: counterfactual effects, attention signals, gradients, phrase signals (`phrases`),
    agreement, ERASER, evidence.

    `target` defaults to the predicted team. A one-token ticket has no deletion counterfactual; its
    removal-based parts (agreement, ERASER, disagreements) are empty and `note` says why. `inspection`, the
    ticket's `Router.inspect` when the caller has it already, saves running the lens a second time. The phrase
    signals are the split-wide run's (`split.phrase_signals`, PHRASE_SHAPLEY_SAMPLES orders beyond 10 phrases).

    What does not depend on the target can come from an earlier call on the same ticket and weights, so that
    switching the target team recomputes only the rest: `counterfactuals`, the ticket's `counterfactual_probs`, and
    `memo`, a dict of the logits of every variant sent through the model (phrase coalitions, ERASER's variants),
    which this call reads and fills.

    `eraser_signals` names the signals ERASER scores (None: every one, "random" included; (): none, and no AOPC
    rows in `scores`); `eraser_table` adds others later from the result.
    """
    model = router.model
    check_eval(model)
    inspection = router.inspect(text) if inspection is None else inspection
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
        cf = (counterfactuals if counterfactuals is not None
              else counterfactual_probs(model, ids, router.vocab.stoi.get("<unk>", UNK_ID)))
        if cf.removed.shape[0] != n:
            raise ValueError(f"counterfactuals of {cf.removed.shape[0]} tokens for a ticket of {n}")
        signals[sig.REMOVAL.name] = probability_drop(cf.base, cf.removed, target)
        signals[sig.UNK_REPLACEMENT.name] = probability_drop(cf.base, cf.replaced, target)
    else:
        notes.append("a one-token ticket has no deletion counterfactual: removal effects, agreement with them, "
                     "ERASER and disagreements are empty")
    signals.update(attention_signals(patterns))
    ig = integrated_gradients(model, ids, target, steps=ig_steps)
    signals[sig.INTEGRATED_GRADIENTS.name] = ig.attributions
    for signal in sig.TOKEN_SIGNALS:                                   # a registry entry and its method module each
        signals[signal.name] = signal.compute(model, ids, target)
    method = ""
    if phrases:
        found = phrase_signals(model, ids, enc.text, target, PHRASE_SHAPLEY_SAMPLES, seed, memo)
        signals.update(found.scores)
        method = found.shapley_method

    columns = {"position": range(n), "token": enc.tokens, **{name: s.double().numpy() for name, s in signals.items()}}
    if cf is not None:
        columns[sig.REMOVAL_TV.name] = total_variation(cf.base, cf.removed).double().numpy()
        columns[sig.UNK_TV.name] = total_variation(cf.base, cf.replaced).double().numpy()
    per_token = pd.DataFrame(columns)                                  # at once: one insert per column is slow

    gold = None
    if evidence.strip():
        try:
            gold = evidence_mask(enc.text, n, evidence)
        except ValueError as exc:                                      # offsets unavailable for this text
            notes.append(f"evidence not scored: {exc}")
        else:
            per_token["evidence"] = gold.numpy()
            if not bool(gold.any()):
                notes.append("none of the evidence phrases overlaps a token the model read")

    rows: list[Row] = []
    if cf is not None:
        effect = signals[sig.REMOVAL.name]
        others = [k for k in signals if k != sig.REMOVAL.name]
        everything = {**signals, sig.RANDOM.name: random_signal(n, seed)}
        scored = score_ticket(None, ids, everything, effect, agreement=others,
                              evidence=list(signals) if gold is not None else (), gold=gold)
        table = _eraser_parts(model, ids, everything, target, eraser_signals, memo)
        rows = list(scored.rows)
        agreement = _agreement(scored.rows)
        random_tau = random_tau_baseline(effect, n_draws, seed)
    else:
        agreement = pd.DataFrame(columns=list(AGREEMENT_COLUMNS))
        random_tau = torch.empty(0, dtype=torch.float64)
        table = pd.DataFrame(columns=list(ERASER_COLUMNS))
        if gold is not None:
            rows = list(score_ticket(None, ids, signals, None, evidence=list(signals), gold=gold).rows)

    evidence_table = None
    if gold is not None:
        recovered = {(s, m): v for _, s, m, v in rows if m in sig.EVIDENCE_METRICS}
        evidence_table = pd.DataFrame(
            [{sig.SIGNAL: name, **{m: recovered[(name, m)] for m in sig.EVIDENCE_METRICS},
              "gold_tokens": int(gold.sum()), "base_rate": float(gold.double().mean())} for name in signals])
    aopc_table = aopc(table) if len(table) else pd.DataFrame(columns=[sig.SIGNAL, *sig.ERASER_METRICS])
    rows += [(None, r[sig.SIGNAL], m, float(r[m])) for _, r in aopc_table.iterrows() for m in sig.ERASER_METRICS]

    return TicketInterpretation(
        text=text, tokens=list(enc.tokens), ids=ids, teams=tuple(router.teams), target=target, probs=probs,
        counterfactuals=cf, signals=signals, agreement=agreement, random_tau=random_tau, eraser=table,
        aopc=aopc_table, evidence=evidence_table, per_token=per_token, patterns=patterns, differences=differences,
        ig=ig, truncated=enc.truncated, note="; ".join(notes), scores=long_frame(rows),
        phrase_shapley_method=method, seed=seed)


def _agreement(rows: list[Row]) -> pd.DataFrame:
    """The agreement rows of `score_ticket` as the page's table: signal, kendall_tau, spearman, top3_overlap."""
    got: dict[str, dict[str, float]] = {}
    for _, name, metric, value in rows:
        if metric in (sig.TAU, sig.SPEARMAN, sig.TOP3_OVERLAP):
            got.setdefault(name, {})[sig.KENDALL_TAU if metric == sig.TAU else metric] = value
    return pd.DataFrame([(name, *(m[c] for c in sig.AGREEMENT_METRICS)) for name, m in got.items()],
                        columns=list(AGREEMENT_COLUMNS))
