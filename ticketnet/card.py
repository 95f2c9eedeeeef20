"""The router's card: its vocabulary, teams and recorded metadata, read without torch, and tickets encoded with it."""

# Everything a page needs to tokenize a ticket, name the teams and read the recorded metrics, without importing torch
# (about a second of a cold start): the dashboard's first page draws from stored predictions with this alone.
# `ticketnet.router.Router` adds the model on top.

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ticketnet.data.text import Vocab, tokenize
from ticketnet.paths import WEIGHTS


class WeightsError(ValueError):
    """Weights that cannot be used; the message names the file and what to do."""


@dataclass
class Encoded:
    """One ticket as the model reads it."""

    text: str
    tokens: list[str]          # tokens the model reads (lowercased, after truncation)
    ids: list[int]
    n_total: int               # tokens before truncation
    unknown: int               # how many of `ids` are <unk>

    @property
    def truncated(self) -> bool:
        return self.n_total > len(self.ids)

    @property
    def unknown_words(self) -> list[str]:
        """The word tokens (letters or digits) the vocabulary does not know, in ticket order."""
        return [t for t, i in zip(self.tokens, self.ids) if i == 1 and _is_word(t)]

    @property
    def unknown_share(self) -> float:
        """Share of the word tokens that are <unk> (punctuation is always known, so it is left out)."""
        words = sum(_is_word(t) for t in self.tokens)
        return len(self.unknown_words) / words if words else 0.0


def _is_word(token: str) -> bool:
    return any(c.isalnum() for c in token)


# Used when a card predates the out-of-distribution thresholds (router.json without "ood").
DEFAULT_OOD = {"max_unknown_share": 0.3, "min_confidence": 0.6}


def encode_text(text: str, vocab: Vocab, max_len: int) -> Encoded:
    """Tokenize and look up one ticket, keeping the first `max_len` tokens; ValueError for a ticket with no token."""
    if not isinstance(text, str):
        raise TypeError(f"a ticket must be text, got {type(text).__name__}")
    toks = tokenize(text)
    if not toks:
        raise ValueError("the ticket has no words, numbers or punctuation to read")
    kept = toks[:max_len]
    ids = [vocab.stoi.get(t, 1) for t in kept]
    return Encoded(text, kept, ids, len(toks), sum(i == 1 for i in ids))


@dataclass
class RouterCard:
    """The router without its weights: vocabulary, teams and `router.json` (configuration, metrics, calibration)."""

    vocab: Vocab
    teams: tuple[str, ...]
    meta: dict = field(default_factory=dict)

    @property
    def max_len(self) -> int:
        return int(self.meta["config"]["max_len"])

    def encode(self, text: str) -> Encoded:
        """Tokenize and look up one ticket; raises ValueError for a ticket with no token at all."""
        return encode_text(text, self.vocab, self.max_len)


def weights_files(weights: str | Path) -> tuple[Path, Path, Path]:
    """The files that make a router: the weights and the vocab.json and router.json beside them."""
    weights = Path(weights)
    return weights, weights.parent / "vocab.json", weights.parent / "router.json"


def load_card(weights: str | Path = WEIGHTS) -> RouterCard:
    """The card of the router at `weights`: its `vocab.json` and `router.json`, checked against each other (the
    weights file must exist too, though it is not read); raises WeightsError."""
    weights, vocab_path, meta_path = weights_files(weights)
    for p in (weights, meta_path, vocab_path):
        if not p.is_file():
            raise WeightsError(f"{p}: not found; run `python -m ticketnet train` to make the router "
                               f"(or point TICKETNET_ROUTER at a router folder)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        config = meta["config"]
        teams = tuple(meta["teams"])
        int(config["max_len"])
    except (ValueError, KeyError, TypeError) as exc:
        raise WeightsError(f"{meta_path}: not a router description ({exc}); retrain or restore the file") from None
    if (not all(isinstance(t, str) and t for t in teams) or len(set(teams)) != len(teams)
            or len(teams) != config.get("n_classes", len(teams))):
        raise WeightsError(f"{meta_path}: its teams are not {config.get('n_classes')} distinct names; "
                           f"retrain or restore the file")
    try:
        vocab = Vocab.load(vocab_path)
    except ValueError as exc:
        raise WeightsError(str(exc)) from None
    if len(vocab) != config.get("vocab_size"):
        raise WeightsError(f"{vocab_path}: {len(vocab)} tokens, but {meta_path.name} says the model reads "
                           f"{config.get('vocab_size')}; the files come from different trainings")
    return RouterCard(vocab, teams, meta)
