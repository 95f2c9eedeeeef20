"""An encoder router's word-level explanations of one ticket: IG, signals' agreement, ERASER, evidence, phrase Shapley."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import pandas as pd
import torch
from torch import Tensor

from ticketnet.data.text import token_spans
from ticketnet.encoder.inspection import EncoderInspection
from ticketnet.encoder.pieces import PieceEncoded
from ticketnet.encoder.removal import WordEffects, word_effects
from ticketnet.interpret import signals as sig
from ticketnet.interpret.interventions.phrases import Phrase, phrase_deletions, split_phrases
from ticketnet.interpret.interventions.shapley import PhraseShapley, phrase_shapley
from ticketnet.interpret.methods.gradients import START_STEPS, IntegratedGradients, refined_integrated_gradients
from ticketnet.interpret.metrics.agreement import random_signal
from ticketnet.interpret.metrics.eraser import FRACTIONS, aopc, eraser_by_units
from ticketnet.interpret.metrics.evidence import spans_evidence_mask
from ticketnet.interpret.metrics.scores import score_ticket

SHAPLEY_SAMPLES = 64        # Captum orders drawn past the exact limit, as on the Tiny router's page
ROLLOUT, LAST_LAYER = sig.ROLLOUT.name, sig.LAST_LAYER.name


@dataclass(frozen=True)
class TicketWords:
    """A ticket as the units word-level methods take out: its words between the specials that always stay."""

    before: list[int]                # ids read before every variant ([CLS] or <s>)
    inner: list[int]                 # the words' piece ids, in reading order
    after: list[int]                 # ids read after every variant ([SEP] or </s>)
    units: list[list[int]]           # each word's positions in `inner`
    spans: list[tuple[int, int]]     # each word's characters in the text read

    @property
    def around(self) -> tuple[list[int], list[int]]:
        return self.before, self.after


def ticket_words(enc: PieceEncoded) -> TicketWords:
    """Split a ticket's pieces into the specials at either end and its words; ValueError where a special sits
    between words (two sequences in one input), which no router here reads."""
    real = [i for i, w in enumerate(enc.word_ids) if w is not None]
    if not real:
        raise ValueError("the ticket has no word to explain")
    first, last = real[0], real[-1]
    if len(real) != last - first + 1:
        raise ValueError("a special piece sits between the ticket's words; word-level methods read one sequence")
    units = [[i - first for i in g] for g in enc.word_pieces]
    spans = [(enc.offsets[g[0]][0], enc.offsets[g[-1]][1]) for g in enc.word_pieces]
    return TicketWords(enc.ids[:first], enc.ids[first:last + 1], enc.ids[last + 1:], units, spans)


def per_word(scores: Tensor, units: list[list[int]]) -> Tensor:
    """Piece scores (n_inner,) summed over each word's pieces -> (words,)."""
    return torch.stack([scores[u].sum() for u in units])


def word_phrases(text: str, words: TicketWords) -> list[Phrase]:
    """The ticket's phrases (the Tiny router's `split_phrases` rule, on the text) as runs of whole words over the
    inner pieces: each word joins the phrase its first character falls in."""
    starts = _phrase_starts(text)
    groups: list[list[int]] = []
    for k, (a, _) in enumerate(words.spans):
        phrase = max(0, bisect.bisect_right(starts, a) - 1)
        if groups and groups[-1][0] == phrase:
            groups[-1].append(k)
        else:
            groups.append([phrase, k])
    out = []
    for phrase, *ks in groups:
        first, last = words.units[ks[0]][0], words.units[ks[-1]][-1]
        out.append(Phrase(first, last + 1, text[words.spans[ks[0]][0]:words.spans[ks[-1]][1]]))
    return out


def _phrase_starts(text: str) -> list[int]:
    spans = token_spans(text)
    return [spans[p.start][0] for p in split_phrases(text)] if spans else [0]


def word_integrated_gradients(router, enc: PieceEncoded, target: int, steps: int = START_STEPS, rtol: float = 0.01,
                              atol: float = 1e-6, max_steps: int = 1024) -> IntegratedGradients:
    """Integrated gradients of p(target) at the piece vectors, summed over each word's pieces (words,).

    The path runs from the ticket with the [PAD] vector at every word's pieces (the specials, positions and token
    types unchanged: the baseline Captum's BERT tutorial uses) to the ticket; the attributions add up to
    p(target | ticket) − p(target | words padded out), refined as the Tiny router's are."""
    model = router.model
    words = ticket_words(enc)
    ids, is_pad = router.batch([enc])                                         # (1, n)
    first = len(words.before)
    inner = slice(first, first + len(words.inner))

    def probability(pieces: Tensor) -> Tensor:                               # (B, n, e) -> (B, teams)
        B = pieces.shape[0]
        ids_b, pad_b = ids.expand(B, -1), is_pad.expand(B, -1)
        x = model.embed(ids_b, pad_b, pieces=pieces)
        return torch.softmax(model.head(model.encode(x, pad_b), pad_b), dim=-1)

    with torch.inference_mode(False), torch.enable_grad():
        with torch.no_grad():
            x = model.embed.word(ids.clone())                                 # (1, n, e)
            baseline = x.clone()
            baseline[:, inner] = model.embed.word.weight[router.config.pad_id]
        ig = refined_integrated_gradients(probability, x, baseline, target, steps, rtol, atol, max_steps)
    return IntegratedGradients(per_word(ig.attributions[inner], words.units), ig.delta, ig.steps, ig.change)


@dataclass
class WordExplanation:
    """Every word-level method on one ticket for one target team, and how each signal scores."""

    effects: WordEffects
    ig: IntegratedGradients
    signals: dict[str, Tensor]        # per word: removal, replacement, rollout, last layer, IG (+ phrase signals)
    agreement: pd.DataFrame           # signal, kendall_tau, spearman, top3_overlap against removal
    eraser: pd.DataFrame              # signal, fraction, k (words), comprehensiveness, sufficiency
    aopc: pd.DataFrame                # signal, comprehensiveness, sufficiency: each signal's mean over the fractions
    evidence: pd.DataFrame | None     # signal, auprc, token_f1, gold_words, base_rate; None without evidence
    gold: Tensor | None               # (words,) bool: words that overlap the annotated evidence
    phrases: list[Phrase]
    shapley: PhraseShapley | None     # of the phrases, in logit difference; None unless asked
    phrase_support: Tensor | None     # (phrases,) logit difference of the target: the ticket − the phrase deleted

    @property
    def words(self) -> list[str]:
        return self.effects.words


def explain_words(router, ins: EncoderInspection, target: int | None = None, evidence: str = "",
                  phrases: bool = False, seed: int = 0, fractions=FRACTIONS) -> WordExplanation:
    """Removal and replacement by word (`word_effects`), IG by word, their agreement with removal, ERASER with words
    as the units (the specials stay in every variant), recovery of the annotated `evidence`, and with `phrases`
    each phrase's deletion support and Shapley value (exact up to 10 phrases), spread to its words."""
    enc = ins.encoded
    target = ins.predicted if target is None else int(target)
    effects = word_effects(router, ins, target)
    words = ticket_words(enc)
    ig = word_integrated_gradients(router, enc, target)
    signals = {sig.REMOVAL.name: effects.removed.double(), sig.UNK_REPLACEMENT.name: effects.replaced.double(),
               ROLLOUT: effects.rollout.double(), LAST_LAYER: effects.last_layer.double(),
               sig.INTEGRATED_GRADIENTS.name: ig.attributions.double()}
    found: list[Phrase] = word_phrases(enc.text, words)
    shapley = support = None
    if phrases:
        inner = torch.tensor(words.inner)
        singles = phrase_deletions(router.model, inner, found, target, pairs=False, around=words.around)
        shapley = phrase_shapley(router.model, inner, found, target, n_samples=SHAPLEY_SAMPLES, seed=seed,
                                 around=words.around)
        of_word = _phrase_of_word(found, words)
        support = torch.tensor(singles[singles.kind == "single"].support_logit_diff.to_numpy(), dtype=torch.float64)
        signals[sig.PHRASE_DELETION.name] = support[of_word]
        signals[sig.PHRASE_SHAPLEY.name] = shapley.values[of_word]
    n = len(words.units)
    gold = spans_evidence_mask(enc.text, words.spans, evidence) if evidence.strip() else None
    everything = {**signals, sig.RANDOM.name: random_signal(n, seed)}
    effect = signals[sig.REMOVAL.name]
    others = [k for k in everything if k != sig.REMOVAL.name]
    scored = score_ticket(None, torch.tensor(words.inner), everything, effect if n >= 2 else None,
                          agreement=others if n >= 2 else (), evidence=list(signals) if gold is not None else (),
                          gold=gold)
    if n >= 2:
        by = {(s, m): v for _, s, m, v in scored.rows}
        agreement = pd.DataFrame([(k, by[(k, sig.TAU)], by[(k, sig.SPEARMAN)], by[(k, sig.TOP3_OVERLAP)])
                                  for k in others], columns=[sig.SIGNAL, *sig.AGREEMENT_METRICS])
        table = eraser_by_units(router.model, words.inner, words.units, everything, target, fractions, words.around)
        aopc_table = aopc(table)
    else:
        agreement = pd.DataFrame(columns=[sig.SIGNAL, *sig.AGREEMENT_METRICS])
        table = pd.DataFrame(columns=[sig.SIGNAL, "fraction", "k", *sig.ERASER_METRICS])
        aopc_table = pd.DataFrame(columns=[sig.SIGNAL, *sig.ERASER_METRICS])
    evidence_table = None
    if gold is not None:
        got = {(s, m): v for _, s, m, v in scored.rows if m in sig.EVIDENCE_METRICS}
        evidence_table = pd.DataFrame(
            [{sig.SIGNAL: k, **{m: got[(k, m)] for m in sig.EVIDENCE_METRICS}, "gold_words": int(gold.sum()),
              "base_rate": float(gold.double().mean())} for k in signals])
    return WordExplanation(effects, ig, signals, agreement, table, aopc_table, evidence_table, gold, found, shapley,
                           support)


def _phrase_of_word(phrases: list[Phrase], words: TicketWords) -> Tensor:
    """The phrase index of each word (words,)."""
    starts = [p.start for p in phrases]
    return torch.tensor([bisect.bisect_right(starts, u[0]) - 1 for u in words.units])
