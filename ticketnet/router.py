"""The shipped router as one object: model, vocabulary and metadata, loaded safely, with encoding and prediction."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import Tensor

from ticketnet.data.text import Vocab, tokenize
from ticketnet.data.tickets import TEAMS
from ticketnet.nn.batching import batched_probs
from ticketnet.nn.transformer import TinyTransformer, pad_batch
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


@dataclass
class Router:
    model: TinyTransformer
    vocab: Vocab
    teams: tuple[str, ...] = TEAMS
    meta: dict = field(default_factory=dict)

    @property
    def max_len(self) -> int:
        return self.model.config.max_len

    def encode(self, text: str) -> Encoded:
        """Tokenize and look up one ticket; raises ValueError for a ticket with no token at all."""
        if not isinstance(text, str):
            raise TypeError(f"a ticket must be text, got {type(text).__name__}")
        toks = tokenize(text)
        if not toks:
            raise ValueError("the ticket has no words, numbers or punctuation to read")
        kept = toks[: self.max_len]
        ids = [self.vocab.stoi.get(t, 1) for t in kept]
        return Encoded(text, kept, ids, len(toks), sum(i == 1 for i in ids))

    def batch(self, encoded: list[Encoded]) -> tuple[Tensor, Tensor]:
        return pad_batch([e.ids for e in encoded])

    @torch.inference_mode()
    def probabilities(self, ids: Tensor, is_pad: Tensor) -> Tensor:
        """Team probabilities (B, teams) for a padded batch."""
        return torch.softmax(self.model(ids, is_pad), dim=-1)

    def predict_encoded(self, encoded: list[Encoded], batch_size: int = 256) -> Tensor:
        """Probabilities (len(encoded), teams); tickets are sorted by length inside so batches pad little."""
        return batched_probs(self.model, [e.ids for e in encoded], batch_size)

    def predict_texts(self, texts: list[str], batch_size: int = 256) -> Tensor:
        """Probabilities (len(texts), teams); raises ValueError for a ticket with no token."""
        return self.predict_encoded([self.encode(t) for t in texts], batch_size)

    # -- files -----------------------------------------------------------------------------------------
    @classmethod
    def load(cls, weights: str | Path = WEIGHTS) -> "Router":
        """Load `router.pt` with its `vocab.json` and `router.json` beside it; raises WeightsError."""
        weights = Path(weights)
        folder = weights.parent
        meta_path, vocab_path = folder / "router.json", folder / "vocab.json"
        for p in (weights, meta_path, vocab_path):
            if not p.is_file():
                raise WeightsError(f"{p}: not found; run `python -m ticketnet train` to make the router "
                                   f"(or point TICKETNET_WEIGHTS at a router.pt)")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            config = meta["config"]
            teams = tuple(meta["teams"])
        except (ValueError, KeyError, TypeError) as exc:
            raise WeightsError(f"{meta_path}: not a router description ({exc}); retrain or restore the file") from None
        try:
            vocab = Vocab.load(vocab_path)
        except ValueError as exc:
            raise WeightsError(str(exc)) from None
        if len(vocab) != config.get("vocab_size"):
            raise WeightsError(f"{vocab_path}: {len(vocab)} tokens, but {meta_path.name} says the model reads "
                               f"{config.get('vocab_size')}; the files come from different trainings")
        try:
            state = torch.load(weights, map_location="cpu", weights_only=True)
        except Exception as exc:  # truncated zip, pickle refused by weights_only, not a torch file at all
            reason = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
            raise WeightsError(f"{weights}: cannot be loaded as plain weights ({reason}); "
                               f"restore the file or retrain") from None
        if not isinstance(state, dict) or not all(isinstance(v, Tensor) for v in state.values()):
            raise WeightsError(f"{weights}: not a state_dict of tensors")
        try:
            model = TinyTransformer.from_config(config)
            model.load_state_dict(state)
        except (RuntimeError, TypeError) as exc:
            first = str(exc).strip().splitlines()[0][:200]
            raise WeightsError(f"{weights}: does not fit the configuration in {meta_path.name} ({first})") from None
        model.eval()
        return cls(model, vocab, teams, meta)


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
