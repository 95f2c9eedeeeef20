"""A whole split at once: τ of every attention signal against deletion effects, and AOPC, as one long table."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd
import torch
from torch import Tensor, nn

from ticketnet._runtime.parallel import share_out
from ticketnet.interpret import signals
from ticketnet.interpret.metrics.agreement import random_signal
from ticketnet.interpret.methods.attention_signals import attention_signals
from ticketnet.interpret.methods.counterfactual import check_eval, counterfactual_batch
from ticketnet.interpret.metrics.eraser import FRACTIONS, unique_rows
from ticketnet.interpret.metrics.evidence import evidence_mask
from ticketnet.interpret.metrics.scores import TicketScores, score_ticket
from ticketnet.interpret.methods.removal import probability_drop
from ticketnet.nn.batching import length_chunks
from ticketnet.lens.inspection import run_with_cache, stack_blocks
from ticketnet.nn.transformer import pad_batch


# A group of tickets holds its attention maps and every ticket's n deletions at once, so its memory grows with
# tickets·n²: 256 tickets up to 64 tokens, fewer above (26 at 199 tokens), and a worker's peak stops depending on
# the longest tickets its corpus happens to hold.
GROUP_CELLS = 256 * 64 * 64


def _batched_probs(model: nn.Module, seqs: list[list[int]], max_tokens: int = 8192,
                   max_cells: int = 1 << 20, workers: int | None = None) -> Tensor:
    """Probabilities (len(seqs), C) of many id lists: distinct ones only, sorted by length so chunks pad
    little. A chunk holds at most `max_tokens` padded tokens and `max_cells` rows·n² attention cells: small
    chunks stay in cache and run faster per token on CPU than one huge batch, and long rows stay bounded.
    Chunks are independent, so `workers` threads (default: torch's thread count) share them out."""
    unique, where = unique_rows(seqs)
    chunks = length_chunks([len(u) for u in unique], max(len(unique), 1), max_cells=max_cells, max_tokens=max_tokens)
    out = torch.empty(len(unique), model.config.n_classes)

    def run(share: list[list[int]]) -> None:
        with torch.inference_mode():                                   # grad mode is per thread
            for idx in share:
                out[idx] = torch.softmax(model(*pad_batch([unique[i] for i in idx])), -1)

    share_out(run, chunks, workers)
    return out[where]


def _deletion_rows(ids: Tensor) -> list[list[int]]:
    """The ticket and its n one-token deletions as unpadded id lists; just the ticket when it has one token."""
    if ids.numel() < 2:
        return [ids.tolist()]
    batch, is_pad = counterfactual_batch(ids, kinds=("deleted",))
    return [row[~pad].tolist() for row, pad in zip(batch, is_pad)]


SPLIT_ERASER_SIGNALS = signals.SPLIT_ERASER_SIGNALS
TICKET_COLUMNS: tuple[str, ...] = ("ticket_id", "n", "predicted", "label")
SPLIT_COLUMNS: tuple[str, ...] = (*TICKET_COLUMNS, signals.SIGNAL, signals.METRIC, signals.VALUE)


class PhraseSignals(NamedTuple):
    """Phrase deletion and phrase Shapley as token signals (name -> (n,), logit difference) and how Shapley ran."""

    scores: dict[str, Tensor]
    shapley_method: str          # "exact" or "sampling"


def phrase_signals(model: nn.Module, ids: Tensor, text: str, who: int, n_samples: int, seed: int,
                   memo=None) -> PhraseSignals:
    """Token scores (n,) from the ticket's phrases: each token carries its phrase's support for the target in logit
    difference (ticket − phrase deleted), and its phrase's Shapley value (exact up to 10 phrases, else `n_samples`
    Captum orders seeded by `seed`). `memo`: the ticket's forward memo (`batched_logits`), for a caller that asks
    again for another team."""
    from ticketnet.interpret.interventions.phrases import phrase_deletions, split_phrases, token_scores
    from ticketnet.interpret.interventions.shapley import phrase_shapley

    phrases = split_phrases(text, ids.numel())
    singles = phrase_deletions(model, ids, phrases, who, pairs=False, memo=memo)
    support = singles[singles.kind == "single"].support_logit_diff.to_numpy()
    shap = phrase_shapley(model, ids, phrases, who, n_samples=n_samples, seed=seed, memo=memo)
    return PhraseSignals({signals.PHRASE_DELETION.name: token_scores(phrases, support),
                          signals.PHRASE_SHAPLEY.name: token_scores(phrases, shap.values)}, shap.method)


def gold_tokens(text: str, n: int, evidence: str) -> Tensor | None:
    """The ticket's evidence tokens (n,) bool; None without evidence or when its offsets cannot be found."""
    if not (evidence or "").strip():
        return None
    try:
        return evidence_mask(text, n, evidence)
    except ValueError:
        return None


@dataclass(frozen=True)
class SplitOptions:
    """What a split-wide run computes, and in which pieces.

    `target`: "predicted" or "label", the team whose probability is followed. `eraser_signals`: the signals scored
    by ERASER over `fractions` (None: every attention signal as well, much more work, see docs/performance.md,
    "Settings measured in the code"; () none). `phrases`: add the phrase signals (their ERASER rows in batches of
    their own, `shapley_samples` Captum orders beyond 10 phrases) and evidence AP. Tickets go `group_size` at a
    time, fewer when long (at most `group_cells` tickets·n²), similar lengths together."""

    target: str = "predicted"
    fractions: Sequence[float] = FRACTIONS
    eraser_signals: Sequence[str] | None = SPLIT_ERASER_SIGNALS
    group_size: int = 256
    phrases: bool = False
    shapley_samples: int = 16
    group_cells: int = GROUP_CELLS

    def row_keys(self, n_blocks: int, n_heads: int) -> list[tuple[str, str]]:
        """(signal, metric) of every ticket's rows in their fixed order; a one-token ticket has them all, nan."""
        attn = signals.names(signals.attention_signals(n_blocks, n_heads))
        if self.eraser_signals is None:
            aopc = [*attn, signals.REMOVAL.name, signals.RANDOM.name]
        else:
            aopc = list(self.eraser_signals)
        keys = [*((a, signals.TAU) for a in attn), (signals.RANDOM.name, signals.TAU),
                *((a, m) for a in aopc for m in signals.ERASER_METRICS),
                (signals.ROLLOUT.name, signals.DISAGREEMENT)]
        if self.phrases:                                               # after the usual rows, never among them
            keys += [*((a, m) for a in signals.PHRASE_SIGNALS for m in signals.ERASER_METRICS),
                     *((a, signals.AUPRC) for a in signals.EVIDENCE_SIGNALS)]
        return keys


def interpret_split(router, rows: Sequence[Mapping[str, str]], progress: Callable[[int, int], None] | None = None,
                    options: SplitOptions = SplitOptions()) -> pd.DataFrame:
    """How attention agrees with deletion effects over `rows` (dicts with ticket_id, text and optionally team and
    evidence), and how faithful each signal's top tokens are: one row per (ticket, signal, metric).

    Columns: ticket_id, n, predicted, label (the ticket's), signal, metric, value. Metrics: `tau` (Kendall τ vs
    removal) of rollout, mean attention per block and every head, and of `random` (one random ranking per ticket:
    over the split, the chance distribution); `comprehensiveness` / `sufficiency` (AOPC over the fractions) of the
    ERASER signals; `disagreement` of rollout = (1 − τ(rollout, removal)) / 2 in [0, 1], high where rollout ranks
    tokens against their effect. With `options.phrases`: AOPC of `phrase deletion` and `phrase shapley`, and
    `auprc` (average precision against the ticket's evidence, nan without) of removal, rollout, mean attention per
    block, random and both phrase signals. Every ticket has the same rows in the same order; a one-token ticket's
    values are nan. `progress(done, total)` is called after each group of tickets.
    """
    if options.target not in ("predicted", "label"):
        raise ValueError(f"target must be 'predicted' or 'label', got {options.target!r}")
    model = router.model
    check_eval(model)
    teams = list(router.teams)
    encoded = []
    for r in rows:
        try:
            encoded.append(router.encode(r["text"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"ticket {r.get('ticket_id')!r}: {exc}") from None
        if options.target == "label" and r.get("team") not in teams:
            raise ValueError(f"ticket {r.get('ticket_id')!r}: target='label' needs a known team, got {r.get('team')!r}")
    tickets, scores = split_records(router, rows, [e.ids for e in encoded], options, progress)
    return split_frame(tickets, scores)


def split_frame(tickets: Sequence[dict], scores: Sequence[list[tuple]]) -> pd.DataFrame:
    """`split_records`' tickets and their (signal, metric, value) rows as the long table of `interpret_split`."""
    rows = [(t["ticket_id"], t["n"], t["predicted"], t["label"], *r) for t, rs in zip(tickets, scores) for r in rs]
    frame = pd.DataFrame(rows, columns=list(SPLIT_COLUMNS))
    frame[signals.VALUE] = frame[signals.VALUE].astype(float)
    return frame


# What `split_records` hands to its `on_ticket` callback for each ticket: its place in `rows`, its ticket record
# (ticket_id, n, predicted, label), p(every team) of the ticket as written (C,), the deletion effect on the followed
# team (n,) or None for a one-token ticket, and its attention signals (name -> (n,)).
OnTicket = Callable[[int, dict, Tensor, "Tensor | None", dict], None]


def split_records(router, rows: Sequence[Mapping[str, str]], ids: Sequence[Sequence[int]],
                  options: SplitOptions = SplitOptions(), progress: Callable[[int, int], None] | None = None,
                  on_ticket: OnTicket | None = None, seed_offset: int = 0) -> tuple[list[dict], list[list[tuple]]]:
    """The work of `interpret_split` on already encoded tickets (`ids`, one list per row, checked by the caller):
    per row its ticket record and its (signal, metric, value) rows in `options.row_keys` order. Shared with the
    corpus scan, which needs the same numbers plus what `on_ticket` keeps (confidence, top tokens, per-token sums).
    The random baseline of row i is seeded by `seed_offset + i`, its place in the whole input, so a slice of a
    split draws what the split draws."""
    model = router.model
    keys = options.row_keys(model.config.n_blocks, model.config.h)
    tickets: list[dict] = [{} for _ in ids]
    found: list[dict] = [{} for _ in ids]
    done = 0
    for group in length_chunks([len(e) for e in ids], options.group_size, options.group_cells):
        for i, ticket, values in _group(router, rows, ids, group, options, on_ticket, seed_offset):
            tickets[i], found[i] = ticket, values
        done += len(group)
        if progress is not None:
            progress(done, len(ids))
    nan = float("nan")
    return tickets, [[(s, m, f.get((s, m), nan)) for s, m in keys] for f in found]


@dataclass
class _Scored:
    """One ticket of a group, scored, waiting for its ERASER variants to run."""

    at: int                      # its place in the group
    usual: TicketScores
    phrase: TicketScores | None
    who: int
    base: float                  # p(who | ticket), from the group's deletion batch


def _group(router, rows, ids, group: list[int], options: SplitOptions, on_ticket: OnTicket | None,
           seed_offset: int) -> list[tuple[int, dict, dict]]:
    """(row, ticket record, {(signal, metric): value}) of one group of similar lengths, in batched forwards."""
    model, teams = router.model, list(router.teams)
    L = model.config.n_blocks
    out, scored = [], []
    with torch.inference_mode():
        _, cache = run_with_cache(model, *pad_batch([list(ids[i]) for i in group]))
        patterns = stack_blocks(cache, "pattern", L)                     # (G, L, h, n, n)
        # Every ticket and its deletions: the PyTorch forward gives the base probability and the effects.
        seqs, starts = [], []
        for i in group:
            starts.append(len(seqs))
            seqs.extend(_deletion_rows(torch.tensor(ids[i])))
        probs = _batched_probs(model, seqs)
        for gi, i in enumerate(group):
            n, s0 = len(ids[i]), starts[gi]
            predicted = int(probs[s0].argmax())
            who = predicted if options.target == "predicted" else teams.index(rows[i]["team"])
            label = rows[i].get("team")
            ticket = {"ticket_id": rows[i].get("ticket_id"), "n": n, "predicted": teams[predicted],
                      "label": label if label in teams else None}
            out.append((i, ticket, {}))
            sig = attention_signals(patterns[gi, :, :, :n, :n])
            effect = None
            if n >= 2:
                effect = probability_drop(probs[s0], probs[s0 + 1 : s0 + 1 + n], who)
                usual, phrase = _score(model, rows[i], torch.tensor(ids[i]), sig, effect, who, seed_offset + i, options)
                scored.append(_Scored(gi, usual, phrase, who, float(probs[s0, who])))
            if on_ticket is not None:
                on_ticket(i, ticket, probs[s0], effect, sig)
        # Phrase variants go through batches of their own: mixed into the usual ones they would change the batch
        # composition and so the last bits of the usual rows.
        usual_runs = [q for t in scored for q in t.usual.sequences()]
        phrase_runs = [q for t in scored if t.phrase is not None for q in t.phrase.sequences()]
        runs = [_batched_probs(model, q) if q else None for q in (usual_runs, phrase_runs)]
    firsts = [0, 0]
    for t in scored:
        values = out[t.at][2]
        rows_of = list(t.usual.rows)
        for j, part in enumerate((t.usual, t.phrase)):
            if part is not None and part.plan:
                m = 2 * len(part.plan)
                rows_of += part.aopc_rows(runs[j][firsts[j] : firsts[j] + m, t.who].double(), t.base)
                firsts[j] += m
        values.update({(s, m): v for _, s, m, v in rows_of})
        tau = values.get((signals.ROLLOUT.name, signals.TAU), float("nan"))
        values[(signals.ROLLOUT.name, signals.DISAGREEMENT)] = (1 - tau) / 2
    return out


def _score(model: nn.Module, row: Mapping[str, str], ids: Tensor, sig: dict[str, Tensor], effect: Tensor, who: int,
           seed: int, options: SplitOptions) -> tuple[TicketScores, TicketScores | None]:
    """One ticket of the split scored: its usual rows and, with phrases, its phrase rows (their ERASER apart)."""
    everything = {**sig, signals.REMOVAL.name: effect, signals.RANDOM.name: random_signal(ids.numel(), seed)}
    tau = [*sig, signals.RANDOM.name]
    if options.eraser_signals is None:
        chosen = list(everything)
    else:
        chosen = list(options.eraser_signals)
    if not options.phrases:
        return score_ticket(row.get("ticket_id"), ids, everything, effect, tau=tau, eraser=chosen,
                            fractions=options.fractions), None
    everything.update(phrase_signals(model, ids, row["text"], who, options.shapley_samples, seed).scores)
    gold = gold_tokens(row["text"], ids.numel(), row.get("evidence", ""))
    usual = score_ticket(row.get("ticket_id"), ids, everything, effect, tau=tau, eraser=chosen,
                         evidence=signals.EVIDENCE_SIGNALS, gold=gold, fractions=options.fractions)
    phrase = score_ticket(row.get("ticket_id"), ids, everything, effect, eraser=signals.PHRASE_SIGNALS,
                          fractions=options.fractions)
    return usual, phrase
