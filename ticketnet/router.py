"""A router as one object: model, vocabulary and metadata, loaded safely, with encoding and prediction."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import Tensor

from ticketnet.card import (  # noqa: F401  (Assessment and shown_below: where they were first defined)
    DEFAULT_OOD, Assessment, Encoded, RouterCard, WeightsError, encode_text, load_card, shown_below,
)
from ticketnet.data.text import PAD_ID, Vocab
from ticketnet.nn.attention import MultiHead
from ticketnet.nn.batching import batched_probs
from ticketnet.nn.hooks import act_name, heads_of, run_with_cache, stack_blocks, torch_differences
from ticketnet.nn.transformer import TinyTransformer, pad_batch
from ticketnet.paths import WEIGHTS


class RoutedTicket:
    """What a routed ticket's results share: `probs` (teams,) and `differences` from PyTorch, read the same way."""

    probs: Tensor
    differences: dict[str, float]

    @property
    def predicted(self) -> int:
        return int(self.probs.argmax())

    @property
    def max_difference(self) -> float:
        return max(self.differences.values())


@dataclass
class Inspection(RoutedTicket):
    """Everything the dashboard shows about one ticket's forward pass through the Tiny router."""

    encoded: Encoded
    probs: Tensor            # (teams,)
    patterns: Tensor         # (n_blocks, h, n, n) from-scratch attention weights
    block_outputs: Tensor    # (n_blocks, n, d)
    differences: dict[str, float]

    @property
    def tokens(self) -> list[str]:
        return self.encoded.tokens

    @property
    def groups(self) -> list[list[int]]:
        """The positions of each word: a Tiny router's token is a word."""
        return [[i] for i in range(len(self.encoded.ids))]

    @property
    def words(self) -> list[str]:
        return self.encoded.tokens

    def word_patterns(self, block: int | None = None) -> Tensor:
        """(n_blocks, h, n, n) or one block's (h, n, n): the patterns themselves, each token being a word."""
        return self.patterns if block is None else self.patterns[block]


@dataclass
class Router:
    model: TinyTransformer
    vocab: Vocab
    teams: tuple[str, ...]
    meta: dict = field(default_factory=dict)
    # The router reads a ticket's new message, not its quoted history and signature (ticketnet.data.thread);
    # True reads the whole text, as an analyst may ask for one ticket.
    whole_thread: bool = False

    kind = "tiny"                  # beside ticketnet.encoder's "encoder" routers
    unit = "token"                 # what one position is: a word of the vocabulary
    norm_first = True              # each block normalises its input before attending
    pad_id = PAD_ID

    @property
    def n_blocks(self) -> int:
        return self.model.config.n_blocks

    @property
    def n_heads(self) -> int:
        return self.model.config.h

    @property
    def max_len(self) -> int:
        return self.model.config.max_len

    @property
    def card(self) -> RouterCard:
        return RouterCard(self.vocab, self.teams, self.meta, self.whole_thread)

    def encode(self, text: str) -> Encoded:
        """Tokenize and look up one ticket's new message (the whole text with `whole_thread`); raises ValueError
        for a ticket with no token at all."""
        return encode_text(text, self.vocab, self.max_len, self.whole_thread)

    def batch(self, encoded: list[Encoded]) -> tuple[Tensor, Tensor]:
        return pad_batch([e.ids for e in encoded])

    @property
    def temperature(self) -> float:
        """The calibration temperature fitted on valid; it is folded into the head's weights (logits / T), so every
        softmax of the model's logits (here, in the interpretation, the dashboard) gives calibrated probabilities."""
        return float(self.meta.get("calibration", {}).get("temperature", 1.0))

    @property
    def ood(self) -> dict:
        """Thresholds beyond which a ticket is flagged: `max_unknown_share`, `min_confidence`."""
        return self.card.ood

    @torch.inference_mode()
    def probabilities(self, ids: Tensor, is_pad: Tensor) -> Tensor:
        """Team probabilities (B, teams) for a padded batch (calibrated: the temperature is in the head)."""
        return torch.softmax(self.model(ids, is_pad), dim=-1)

    def assess_encoded(self, enc: Encoded, probs: Tensor | None = None) -> Assessment:
        """The prediction for one encoded ticket with the out-of-distribution flags of `assess`."""
        p = self.predict_encoded([enc])[0] if probs is None else probs
        return self.card.assess(enc, [float(x) for x in p])

    def assess(self, text: str) -> Assessment:
        """Route one ticket and say whether it is unlike the training data: too many unknown words, or a calibrated
        confidence below the threshold recorded in router.json. Raises ValueError for a ticket with no token."""
        return self.assess_encoded(self.encode(text))

    def predict_encoded(self, encoded: list[Encoded], batch_size: int = 256, workers: int = 1) -> Tensor:
        """Probabilities (len(encoded), teams); tickets are sorted by length inside so batches pad little, and dealt
        out to `workers` threads."""
        return batched_probs(self.model, [e.ids for e in encoded], batch_size, workers=workers)

    def predict_texts(self, texts: list[str], batch_size: int = 256) -> Tensor:
        """Probabilities (len(texts), teams); raises ValueError for a ticket with no token."""
        return self.predict_encoded([self.encode(t) for t in texts], batch_size)

    # -- internals ---------------------------------------------------------------------------------------
    def word_groups(self, enc: Encoded) -> list[list[int]]:
        """The positions of each word in reading order: one token each."""
        return [[i] for i in range(len(enc.ids))]

    def run_with_cache(self, ids: Tensor, is_pad: Tensor, head_mask: Tensor | None = None
                       ) -> tuple[Tensor, dict[str, Tensor]]:
        """Logits (B, teams) through the from-scratch MultiHead, and every internal by name
        (`ticketnet.nn.hooks.run_with_cache`); `head_mask` (n_blocks, h) scales each head's output."""
        return run_with_cache(self.model, ids, is_pad, head_mask)

    def attention(self, block: int) -> MultiHead:
        """Block `block`'s (0-based) attention, copied into the from-scratch MultiHead."""
        return heads_of(self.model.blocks.layers[block])

    def attention_input(self, cache: dict[str, Tensor], block: int) -> Tensor:
        """What block `block`'s attention reads, from a `run_with_cache` cache: its normalised input (pre-norm)."""
        return cache[act_name("ln1", block)]

    @torch.inference_mode()
    def inspect(self, text: str) -> Inspection:
        """Route one ticket with the from-scratch attention and compare every block with PyTorch's."""
        enc = self.encode(text)
        ids = torch.tensor([enc.ids])
        is_pad = torch.zeros_like(ids, dtype=torch.bool)
        logits, cache = run_with_cache(self.model, ids, is_pad)
        return Inspection(
            encoded=enc,
            probs=torch.softmax(logits[0], dim=-1),
            patterns=stack_blocks(cache, "pattern", self.n_blocks)[0],
            block_outputs=stack_blocks(cache, "resid_post", self.n_blocks)[0],
            differences=torch_differences(self.model, ids, is_pad, cache, logits),
        )

    # -- files -----------------------------------------------------------------------------------------
    @classmethod
    def load(cls, weights: str | Path = WEIGHTS) -> "Router":
        """Load `router.pt` with its `vocab.json` and `router.json` beside it; raises WeightsError."""
        weights = Path(weights)
        card = load_card(weights)
        config, meta_path = card.meta["config"], weights.parent / "router.json"
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
        return cls(model, card.vocab, card.teams, card.meta)
