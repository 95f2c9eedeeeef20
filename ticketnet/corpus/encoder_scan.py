"""One partition on an encoder router: routed by pieces with its card's flags, interpreted by word, in the scan's tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from ticketnet.corpus.aggregate import FLAGS, ticket_partial, token_partial
from ticketnet.corpus.result import PartitionResult, add_policy_columns, top_values
from ticketnet.interpret import signals
from ticketnet.interpret.metrics.agreement import random_signal, tau_b_rows
from ticketnet.nn.batching import length_chunks

LEVELS = ("route", "effects")        # level full adds ERASER, which only the Tiny router's scan computes
PROBABILITIES = "probabilities"      # every team's probability, in the router's team order (encoder scans only)
DISTANCE = "distance"                # from the nearest team's training tickets in the space the classifier reads
UNFAMILIAR = "unfamiliar"            # farther than 99 % of the validation tickets (the card's max_distance)
LOW_CONFIDENCE = "low_confidence"    # below the threshold of the card's rule (policy or calibrated)


def check_encoder_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level {level!r} is not built for an encoder router (it adds ERASER, which the scan computes "
                         f"for the Tiny router only); scan it at level {' or '.join(LEVELS)}")
    return level


def word_key(word: str) -> str:
    """A word as the scan's tables key it: lowercased, so "Refund" and "refund" count as one word."""
    return word.lower()


def word_signals(router) -> list[str]:
    """The attention signals the scan ranks against each word's removal effect, in its τ columns' order."""
    L = router.config.n_blocks
    return [signals.ROLLOUT.name, signals.LAST_LAYER.name, *(signals.mean_attention(b + 1).name for b in range(L)),
            signals.RANDOM.name]


@torch.inference_mode()
def route(router, encoded: list, batch_size: int = 64) -> tuple[Tensor, Tensor | None]:
    """Probabilities (B, teams) as `predict_encoded` gives them, in the same batches, and each ticket's distance from
    the training tickets (B,) from the same forward pass (None where the router stores no training statistics)."""
    m = router.model
    probs = torch.empty(len(encoded), len(router.teams))
    pooled = torch.empty(len(encoded), router.config.d)
    for idx in length_chunks([len(e.ids) for e in encoded], batch_size, max_tokens=4096):
        ids, is_pad = router.batch([encoded[i] for i in idx])
        x = m.head.pool(m.encode(m.embed(ids, is_pad), is_pad), is_pad)
        probs[idx] = torch.softmax(m.head.out(x), dim=-1)
        pooled[idx] = x
    return probs, (router.distance(pooled) if router.ood_means is not None else None)


def _per_word(scores: Tensor, groups: list[list[int]]) -> Tensor:
    return torch.stack([scores[g].sum() for g in groups])


def _effects(router, text: str, target: int, seed: int) -> tuple[list[str], Tensor, dict[str, Tensor], dict[str, float]]:
    """One ticket's words (keyed), removal effect on `target` per word, the attention signals per word, and each
    signal's Kendall τ against the effect (NaN under two words or for a constant signal)."""
    from ticketnet.encoder.removal import word_effects

    ins = router.inspect(text)
    we = word_effects(router, ins, target)
    groups = we.pieces
    found = {signals.ROLLOUT.name: we.rollout, signals.LAST_LAYER.name: we.last_layer}
    for b, pattern in enumerate(ins.patterns):                     # attention each word receives, heads averaged
        found[signals.mean_attention(b + 1).name] = _per_word(pattern.mean(0).mean(0), groups)
    found[signals.RANDOM.name] = random_signal(len(groups), seed)
    names = word_signals(router)
    effect = we.removed.double()
    if len(groups) >= 2:
        taus = tau_b_rows(torch.stack([found[n].double() for n in names]).numpy(), effect.numpy())
    else:
        taus = np.full(len(names), np.nan)
    return [word_key(w) for w in we.words], effect, found, dict(zip(names, taus.tolist()))


def scan_encoder_rows(router, rows: Sequence[Mapping], row0: int, level: str, keep_occurrences: bool = False
                      ) -> PartitionResult:
    """`scan_rows` on an encoder router: the tickets table the Tiny scan writes, its tokens being the encoder's words
    (lowercased), plus every team's probability and the card's flags; from `effects` each word removed (`word_effects`)
    against the predicted team, τ of each attention signal against that, and the word aggregates.

    The random baseline of row i is seeded by row0 + i, its place in the whole input, as in the Tiny scan."""
    check_encoder_level(level)
    teams = list(router.teams)
    encoded = [router.encode(r["text"]) for r in rows]
    probs, distance = route(router, encoded)
    card = router.card
    by_ticket = {} if distance is None else {id(e): float(d) for e, d in zip(encoded, distance)}
    card = replace(card, distance=None if distance is None else (lambda enc: by_ticket[id(enc)]))
    assessed = [card.assess(e, p.tolist()) for e, p in zip(encoded, probs)]
    label = [r.get("team") if r.get("team") in teams else None for r in rows]
    predicted = probs.argmax(dim=1).tolist()
    tickets = pd.DataFrame({
        "ticket_id": [r["ticket_id"] for r in rows],
        "row": np.arange(row0, row0 + len(rows), dtype=np.int64),
        "text": [r["text"] for r in rows],
        "tokens": [sorted({word_key(w) for w in e.words}) for e in encoded],
        "truncated": [e.truncated for e in encoded],
        "set_aside_chars": np.array([e.set_aside_chars for e in encoded], dtype=np.int32),
        "n": [len(e.ids) for e in encoded],
        "predicted": [teams[k] for k in predicted],
        "confidence": probs.max(dim=1).values.double().numpy(),
    })
    tickets["label"] = pd.array(label, dtype="string")
    tickets["correct"] = pd.array([None if lab is None else lab == teams[k] for lab, k in zip(label, predicted)],
                                  dtype="boolean")
    tickets["label_confidence"] = [float(probs[i, teams.index(lab)]) if lab is not None else float("nan")
                                   for i, lab in enumerate(label)]
    tickets[PROBABILITIES] = [p.tolist() for p in probs.double().numpy()]
    tickets[LOW_CONFIDENCE] = [a.low_confidence for a in assessed]
    if distance is not None:
        tickets[DISTANCE] = distance.double().numpy()
        tickets[UNFAMILIAR] = [a.unfamiliar for a in assessed]
    taus: dict[str, str] = {}
    token_sums = effect_hist = occurrences = None
    if level == "effects":
        L = router.config.n_blocks
        names = word_signals(router)
        taus = {n: f"{signals.TAU} {n}" for n in names}
        per_ticket, occ = [], []
        for i, r in enumerate(rows):
            words, effect, found, tau = _effects(router, r["text"], predicted[i], row0 + i)
            rollout = found[signals.ROLLOUT.name]
            per_ticket.append({**{taus[n]: tau[n] for n in names},
                               signals.DISAGREEMENT: (1 - tau[signals.ROLLOUT.name]) / 2,
                               **top_values(effect, words, "top_effect"), **top_values(rollout, words, "top_rollout")})
            n = len(words)
            top = np.zeros(n, dtype=bool)
            top[int(torch.argsort(effect, descending=True, stable=True)[0])] = True
            occ.append({"ticket": np.full(n, i, np.int32), "team": np.full(n, predicted[i], np.int8),
                        "token": np.array(words, dtype=object), "effect": effect.numpy(),
                        signals.ROLLOUT.name: rollout.double().numpy(),
                        **{f"attention b{b + 1}": found[signals.mean_attention(b + 1).name].double().numpy()
                           for b in range(L)}, "is_top": top})
        tickets = pd.concat([tickets, pd.DataFrame(per_ticket, index=tickets.index)], axis=1)
        columns = ["ticket", "team", "token", "effect", signals.ROLLOUT.name, *(f"attention b{b + 1}" for b in range(L)),
                   "is_top"]
        occurrences = pd.DataFrame({c: (np.concatenate([o[c] for o in occ]) if occ else []) for c in columns})
        token_sums, effect_hist = token_partial(occurrences, L)
    add_policy_columns(tickets, router.meta, teams, list(probs.double().numpy()) if rows else [])
    partial = ticket_partial(tickets, teams, taus, {})
    partial[FLAGS] = {LOW_CONFIDENCE: int(tickets[LOW_CONFIDENCE].sum())}
    if distance is not None:
        partial[FLAGS][UNFAMILIAR] = int(tickets[UNFAMILIAR].sum())
    return PartitionResult(tickets, partial, token_sums, effect_hist, occurrences if keep_occurrences else None)
