"""Counterfactuals by word on an encoder router: each word's pieces removed, or replaced, in one batch; rollout beside."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ticketnet.encoder.inspection import EncoderInspection
from ticketnet.encoder.model import run_with_cache
from ticketnet.nn.transformer import pad_batch

KINDS = ("removed", "replaced")


@dataclass
class WordEffects:
    """Per word of one ticket ([CLS] and [SEP] left out): what taking it out does to the target team."""

    words: list[str]
    pieces: list[list[int]]          # each word's piece positions
    target: int
    p_ticket: float                  # p(target) of the ticket as it is
    removed: Tensor                  # (words,) p(target) − p(target) without the word's pieces
    replaced: Tensor                 # (words,) p(target) − p(target) with each of its pieces replaced by `replacement`
    removed_logit: Tensor            # (words,) the same in logit difference (target − the best other team)
    replaced_logit: Tensor
    rollout: Tensor                  # (words,) the word's share of what the classifier reads (attention rollout)
    last_layer: Tensor               # (words,) mean over the last layer's heads of the attention the classifier reads
    replacement: str                 # the piece put in place: the tokenizer's [MASK] where it has one, else [UNK]


def logit_margin(logits: Tensor, target: int) -> Tensor:
    """Target logit minus the best other team's, per row: (B, C) -> (B,)."""
    others = logits.clone()
    others[:, target] = float("-inf")
    return logits[:, target] - others.max(1).values


def variants(ids: list[int], groups: list[list[int]], kind: str, replacement: int | None, pad_id: int
             ) -> tuple[Tensor, Tensor]:
    """One padded row per word: the ticket without that word's pieces ("removed"), or with each of them replaced
    ("replaced"); (W, n) ids and is_pad."""
    rows = []
    for g in groups:
        word = set(g)
        rows.append([t for i, t in enumerate(ids) if i not in word] if kind == "removed"
                    else [replacement if i in word else t for i, t in enumerate(ids)])
    return pad_batch(rows, pad_to=len(ids), pad_id=pad_id)


def rollout(patterns: Tensor) -> Tensor:
    """Attention rollout (Abnar & Zuidema 2020) through every layer: (L, h, n, n) -> (n, n), each layer's head mean
    mixed half and half with the identity for the residual, rows renormalised, the layers multiplied in order."""
    n = patterns.shape[-1]
    out = torch.eye(n, dtype=patterns.dtype)
    for layer in patterns:
        a = 0.5 * layer.mean(0) + 0.5 * torch.eye(n, dtype=patterns.dtype)
        out = (a / a.sum(-1, keepdim=True)) @ out
    return out


@torch.inference_mode()
def word_effects(router, ins: EncoderInspection, target: int | None = None, batch_size: int = 64) -> WordEffects:
    """Every word removed and replaced, batched: the effect on p(target) and on its logit margin, with the rollout
    share and the last layer's attention as the classifier reads them (its [CLS] row, or the mean of every row for a
    mean-pooled router), per word."""
    enc = ins.encoded
    target = ins.predicted if target is None else int(target)
    groups, words = enc.word_pieces, enc.words
    if not groups:
        raise ValueError("the ticket has no word to take out")
    ids, is_pad = router.batch([enc])
    logits, _ = run_with_cache(router.model, ids, is_pad)
    p_ticket = torch.softmax(logits, -1)[0, target]
    margin = logit_margin(logits, target)[0]
    mask_id = router.card.mask_id
    replacement = mask_id if mask_id is not None else router.card.unk_id
    out: dict[str, tuple[Tensor, Tensor]] = {}
    for kind in KINDS:
        v_ids, v_pad = variants(enc.ids, groups, kind, replacement, router.config.pad_id)
        probs, margins = [], []
        for i in range(0, len(groups), batch_size):
            lg = router.model(v_ids[i:i + batch_size], v_pad[i:i + batch_size])
            probs.append(torch.softmax(lg, -1)[:, target])
            margins.append(logit_margin(lg, target))
        out[kind] = (p_ticket - torch.cat(probs), margin - torch.cat(margins))
    # What the classifier reads: the first piece's row (a [CLS] head) or every piece's row averaged (mean pooling).
    reads = (torch.full((len(enc.ids),), 1 / len(enc.ids)) if router.config.head == "mean"
             else torch.nn.functional.one_hot(torch.tensor(0), len(enc.ids)).float())
    rolled = reads @ rollout(ins.patterns)                                   # (n,) share of each piece
    last = reads @ ins.patterns[-1].mean(0)                                  # (n,)
    per_word = lambda scores: torch.stack([scores[g].sum() for g in groups])  # noqa: E731
    token = router.tokenizer.id_to_token(replacement) if replacement is not None else "[UNK]"
    return WordEffects(words, groups, target, float(p_ticket), out["removed"][0], out["replaced"][0],
                       out["removed"][1], out["replaced"][1], per_word(rolled), per_word(last), token)
