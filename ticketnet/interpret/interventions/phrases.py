"""Phrases of a ticket (sentences and clauses), and every phrase and pair of phrases deleted in one batched pass."""

from __future__ import annotations

import itertools
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from ticketnet.data.text import UNK_ID, token_spans, tokenize
from ticketnet.interpret.methods.counterfactual import check_eval, check_ticket
from ticketnet.interpret.metrics.eraser import unique_rows
from ticketnet.interpret.interventions.units import both_units, check_target
from ticketnet.nn.batching import length_chunks
from ticketnet.nn.transformer import pad_batch

BREAKS = frozenset(".!?;:,…")
CONJUNCTIONS = frozenset({"and", "but", "or", "so", "because", "although", "though", "while", "whereas",
                          "however", "unless", "yet"})
NEGATIONS = frozenset({"not", "no", "never", "nothing", "nor", "cannot"})
PHRASE_RULE = ("A phrase ends after a run of . ! ? ; : , … followed by white space or the end (so 49.99 and 1,000 "
               "stay whole), and a new phrase starts at a conjunction (and, but, or, so, because, although, though, "
               "while, whereas, however, unless, yet) that follows a word of the current phrase; the conjunction "
               "opens the clause it joins. A phrase of punctuation alone joins the phrase before it.")
DELETION_COLUMNS = ("kind", "phrases", "text", "logit_diff", "prob", "support_logit_diff", "support_prob",
                    "predicted", "flips")


@dataclass(frozen=True)
class Phrase:
    start: int      # first token (index into the tokens the model read)
    end: int        # one past the last token
    text: str       # the phrase as written in the ticket


def split_phrases(text: str, n_tokens: int | None = None) -> list[Phrase]:
    """The ticket cut into phrases by `PHRASE_RULE`, covering its first `n_tokens` tokens (default: all) in order.

    "It's not a delivery problem and I keep the leaf blower. My card was charged twice." ->
    ["It's not a delivery problem", "and I keep the leaf blower.", "My card was charged twice."]
    """
    tokens = tokenize(text)
    spans = token_spans(text)
    n = len(tokens) if n_tokens is None else n_tokens
    if not 0 <= n <= len(tokens):
        raise ValueError(f"n_tokens must be in 0..{len(tokens)} (the text has {len(tokens)} tokens), got {n_tokens}")
    cuts, has_word = [0], False
    for i in range(n):
        tok = tokens[i]
        if tok in CONJUNCTIONS and has_word and i > cuts[-1]:
            cuts.append(i)
            has_word = False
        if tok in BREAKS:
            nxt = spans[i][1]
            after_run = i + 1 >= n or tokens[i + 1] not in BREAKS or spans[i + 1][0] != nxt
            if after_run and (nxt >= len(text) or text[nxt].isspace()) and i + 1 < n:
                cuts.append(i + 1)
                has_word = False
        elif tok.isalnum():
            has_word = True
    cuts.append(n)
    bounds = [(a, b) for a, b in itertools.pairwise(cuts) if b > a]
    merged: list[tuple[int, int]] = []
    for a, b in bounds:                                                # punctuation alone joins the phrase before
        if merged and not any(t.isalnum() for t in tokens[a:b]):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    if len(merged) > 1 and not any(t.isalnum() for t in tokens[merged[0][0]:merged[0][1]]):
        merged[1] = (merged[0][0], merged[1][1])                       # leading punctuation joins the next
        merged.pop(0)
    return [Phrase(a, b, text[spans[a][0]:spans[b - 1][1]]) for a, b in merged]


Around = tuple[Sequence[int], Sequence[int]]
"""Ids read before and after the kept phrases whatever is deleted: an encoder's [CLS] and [SEP]."""


def keep_phrases(ids: Sequence[int], phrases: Sequence[Phrase], kept: Sequence[bool],
                 around: Around | None = None) -> list[int]:
    """The ticket's ids with the phrases whose `kept` flag is False deleted. Without `around`, nothing left is read
    as one <unk>; with it, the kept phrases sit between its two parts, which alone are the empty ticket."""
    out = [t for p, k in zip(phrases, kept) if k for t in ids[p.start:p.end]]
    if around is not None:
        return [*around[0], *out, *around[1]]
    return out or [UNK_ID]


ForwardMemo = MutableMapping[bytes, Tensor]
"""Logits (C,) of id lists already sent through one model, keyed by `memo_key`: kept by a caller that asks about the
same ticket again (another target team: the variants are the same, only the team read from them changes)."""


def memo_key(ids: Sequence[int]) -> bytes:
    return np.asarray(ids, dtype=np.int64).tobytes()


def batched_logits(model: nn.Module, seqs: Sequence[Sequence[int]], max_tokens: int = 16_384,
                   memo: ForwardMemo | None = None) -> Tensor:
    """Logits (len(seqs), C) of id lists: distinct ones only, length-sorted padded batches of ≤ max_tokens. With
    `memo` (for this model's weights only), lists found there are not sent again and the others are added to it."""
    unique, where = unique_rows([list(s) for s in seqs])
    out = torch.empty(len(unique), model.config.n_classes)
    todo = list(range(len(unique)))
    if memo is not None:
        keys = [memo_key(s) for s in unique]
        found = [memo.get(k) for k in keys]
        hits = [i for i, v in enumerate(found) if v is not None]
        if hits:
            out[hits] = torch.stack([found[i] for i in hits])
        todo = [i for i, v in enumerate(found) if v is None]
    if todo:
        longest = max(len(unique[i]) for i in todo)
        with torch.inference_mode():
            for idx in length_chunks([len(unique[i]) for i in todo], max(1, max_tokens // longest)):
                rows = [todo[j] for j in idx]
                out[rows] = model(*pad_batch([unique[i] for i in rows])).float()
        if memo is not None:
            memo.update((keys[i], out[i]) for i in todo)
    return out[where]


def _check_phrases(ids: Tensor, phrases: Sequence[Phrase]) -> None:
    n = ids.numel()
    if not phrases:
        raise ValueError("need at least one phrase")
    if phrases[0].start != 0 or phrases[-1].end != n or any(a.end != b.start for a, b in itertools.pairwise(phrases)):
        raise ValueError(f"phrases must cover the ticket's {n} tokens in order, without gaps or overlaps "
                         "(split_phrases(text, n) does)")


def phrase_deletions(model: nn.Module, ids: Tensor, phrases: Sequence[Phrase], target: int,
                     pairs: bool = True, memo: ForwardMemo | None = None, around: Around | None = None
                     ) -> pd.DataFrame:
    """Each phrase deleted, and (pairs=True) each pair of phrases deleted together: every variant and the ticket in
    one batched pass. Columns: kind ("ticket", "single", "pair"), phrases (tuple of indices), text (what was
    deleted), the target's logit difference and probability, the deleted phrases' support (ticket − deleted: positive
    where they help the target), predicted team
    index, flips (the predicted team changed). A deletion that leaves nothing reads one <unk> (or, with `around`,
    the specials alone: `keep_phrases`).
    """
    check_eval(model)
    ids = check_ticket(ids)
    check_target(target, model.config.n_classes)
    _check_phrases(ids, phrases)
    P, toks = len(phrases), ids.tolist()
    combos = [()] + [(i,) for i in range(P)] + (list(itertools.combinations(range(P), 2)) if pairs else [])
    seqs = [keep_phrases(toks, phrases, [i not in c for i in range(P)], around) for c in combos]
    logits = batched_logits(model, seqs, memo=memo)
    vals = both_units(logits, target)
    pred = logits.argmax(-1)
    rows = []
    for v, c in enumerate(combos):
        kind = "ticket" if not c else ("single" if len(c) == 1 else "pair")
        rows.append((kind, c, " | ".join(phrases[i].text for i in c), float(vals["logit_diff"][v]),
                     float(vals["prob"][v]), float(vals["logit_diff"][0] - vals["logit_diff"][v]),
                     float(vals["prob"][0] - vals["prob"][v]), int(pred[v]), bool(pred[v] != pred[0])))
    return pd.DataFrame(rows, columns=list(DELETION_COLUMNS))


def redundant_pairs(deletions: pd.DataFrame) -> pd.DataFrame:
    """Pairs of phrases that each leave the predicted team alone when deleted but flip it deleted together:
    columns first, second (phrase indices), interaction (the pair's support − both single supports, logit difference:
    positive where the two together carry more support for the target than each alone shows)."""
    singles = deletions[deletions.kind == "single"].set_index(deletions[deletions.kind == "single"].phrases.str[0])
    rows = []
    for _, r in deletions[deletions.kind == "pair"].iterrows():
        a, b = r.phrases
        if r.flips and not singles.loc[a, "flips"] and not singles.loc[b, "flips"]:
            rows.append((a, b, r.support_logit_diff - singles.loc[a, "support_logit_diff"]
                         - singles.loc[b, "support_logit_diff"]))
    return pd.DataFrame(rows, columns=["first", "second", "interaction"])


def token_scores(phrases: Sequence[Phrase], per_phrase: Sequence[float] | Tensor) -> Tensor:
    """A phrase score spread to its tokens (n,): every token carries its phrase's score (for evidence and ERASER)."""
    # A copy: pandas hands out read-only arrays, which torch.as_tensor would share and warn about.
    per_phrase = per_phrase.double() if isinstance(per_phrase, Tensor) else torch.tensor(per_phrase, dtype=torch.float64)
    if per_phrase.numel() != len(phrases):
        raise ValueError(f"{per_phrase.numel()} scores for {len(phrases)} phrases")
    return torch.cat([per_phrase[i].expand(p.end - p.start) for i, p in enumerate(phrases)])


def has_negation(tokens: Sequence[str]) -> bool:
    """True when the tokens hold a negation: not, no, never, nothing, nor, cannot, or an n't ("isn", "'", "t")."""
    toks = list(tokens)
    return bool(set(toks) & NEGATIONS) or any(a in "'’" and b == "t" for a, b in itertools.pairwise(toks))


def _rebuild(phrases: Sequence[Phrase], tokens: Sequence[str], drop: set[int]) -> str:
    """The phrases not in `drop` joined by spaces; a conjunction opening the phrase right after a dropped one goes
    too, and a phrase that now opens a sentence gets a capital letter."""
    parts: list[str] = []
    for k, p in enumerate(phrases):
        if k in drop:
            continue
        t = p.text
        if k - 1 in drop:
            if tokens[p.start] in CONJUNCTIONS and len(t.split(None, 1)) > 1:
                t = t.split(None, 1)[1]
            if not parts or parts[-1][-1:] in (".", "!", "?", ":"):
                t = t[:1].upper() + t[1:]
        parts.append(t)
    return " ".join(parts)


def suggest_edit(text: str, evidence: str = "") -> str | None:
    """A useful contrast for the ticket, or None. In order of preference: the first phrase with a negation that shares
    no word with the evidence deleted ("It's not a delivery problem and I keep …" -> "I keep …"); else a phrase set
    aside by a following "but" ("My card was charged correctly, but can I …" -> "Can I …"); else the phrases
    holding the evidence deleted. A conjunction opening the phrase after a deleted one goes with it."""
    phrases = split_phrases(text)
    tokens = tokenize(text)
    gold = {t for e in evidence.split("|") for t in tokenize(e) if t.isalnum()}
    words = [set(tokens[p.start:p.end]) for p in phrases]
    off_evidence = [not (w & gold) for w in words]
    drop: set[int] = set()
    for k, p in enumerate(phrases):
        if off_evidence[k] and has_negation(tokens[p.start:p.end]) and len(phrases) > 1:
            drop = {k}
            break
    if not drop:
        for k in range(len(phrases) - 1):
            if off_evidence[k] and tokens[phrases[k + 1].start] == "but":
                drop = {k}
                break
    if not drop and gold:
        drop = {k for k in range(len(phrases)) if not off_evidence[k]}
        if len(drop) == len(phrases):
            return None
    if not drop:
        return None
    edited = _rebuild(phrases, tokens, drop)
    return edited if edited and edited != text else None
