"""An encoder router: the from-scratch encoder, its tokenizer and card, from a team's classifier or a fine-tune."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import Tensor

from ticketnet.card import Assessment
from ticketnet.encoder import files
from ticketnet.encoder.files import EncoderError
from ticketnet.encoder.inspection import EncoderInspection, inspect_ticket, word_groups
from ticketnet.encoder.model import EncoderConfig, EncoderModel, run_with_cache
from ticketnet.encoder.card import CARD, KIND, TOKENIZER, WEIGHTS, EncoderCard
from ticketnet.encoder.pieces import DEFAULT_MAX_PIECES, PieceEncoded
from ticketnet.encoder.weights import build
from ticketnet.nn.attention import MultiHead
from ticketnet.nn.batching import length_chunks
from ticketnet.nn.transformer import pad_batch

OOD_PREFIX = "ood."                   # the pooled space's team means and precision, stored beside the weights


@dataclass
class EncoderRouter:
    model: EncoderModel
    tokenizer: object                  # tokenizers.Tokenizer
    teams: tuple[str, ...]
    meta: dict = field(default_factory=dict)
    whole_thread: bool = False
    ood_means: Tensor | None = None    # (teams, d) training tickets' pooled vectors, per team
    ood_precision: Tensor | None = None  # (d, d) inverse of their shared covariance

    kind = KIND
    unit = "piece"                     # what one position is: a tokenizer's piece, a word being one or more
    norm_first = False                 # BERT-family blocks attend first and normalise after (post-norm)

    @property
    def n_blocks(self) -> int:
        return self.config.n_blocks

    @property
    def pad_id(self) -> int:
        return self.config.pad_id

    @property
    def n_heads(self) -> int:
        return self.config.h

    @property
    def config(self) -> EncoderConfig:
        return self.model.config

    @property
    def max_len(self) -> int:
        """Pieces read per ticket, [CLS] and [SEP] included."""
        return int(self.meta.get("max_pieces", min(DEFAULT_MAX_PIECES, self.config.max_pieces)))

    @property
    def card(self) -> EncoderCard:
        """The router's card, with the distance flag the model makes possible."""
        distance = None
        if self.ood_means is not None:
            distance = lambda enc: float(self.distance(self.pooled([enc]))[0])   # noqa: E731
        meta = {**self.meta, "max_pieces": self.max_len}
        return EncoderCard(self.tokenizer, self.teams, meta, self.whole_thread, distance)

    def encode(self, text: str) -> PieceEncoded:
        return self.card.encode(text)

    def batch(self, encoded: list[PieceEncoded]) -> tuple[Tensor, Tensor]:
        return pad_batch([e.ids for e in encoded], pad_id=self.config.pad_id)

    @property
    def temperature(self) -> float:
        return float(self.meta.get("calibration", {}).get("temperature", 1.0))

    @torch.inference_mode()
    def probabilities(self, ids: Tensor, is_pad: Tensor) -> Tensor:
        return torch.softmax(self.model(ids, is_pad), dim=-1)

    @torch.inference_mode()
    def _batched(self, encoded: list[PieceEncoded], width: int, run, batch_size: int = 64) -> Tensor:
        """`run(ids, is_pad)` (B, width) over length-sorted batches of at most 4,096 padded pieces, in input order."""
        out = torch.empty(len(encoded), width)
        for idx in length_chunks([len(e.ids) for e in encoded], batch_size, max_tokens=4096):
            out[idx] = run(*self.batch([encoded[i] for i in idx]))
        return out

    def logits(self, encoded: list[PieceEncoded], batch_size: int = 64) -> Tensor:
        """Team logits (len(encoded), teams), calibrated where the temperature is folded in."""
        return self._batched(encoded, len(self.teams), self.model, batch_size)

    def predict_encoded(self, encoded: list[PieceEncoded], batch_size: int = 64, workers: int = 1) -> Tensor:
        """Probabilities (len(encoded), teams)."""
        return self._batched(encoded, len(self.teams), self.probabilities, batch_size)

    def predict_texts(self, texts: list[str], batch_size: int = 64) -> Tensor:
        return self.predict_encoded([self.encode(t) for t in texts], batch_size)

    def pooled(self, encoded: list[PieceEncoded], batch_size: int = 64) -> Tensor:
        """The vector the classifier reads, per ticket (len(encoded), d)."""
        m = self.model
        return self._batched(encoded, self.config.d,
                             lambda ids, is_pad: m.head.pool(m.encode(m.embed(ids, is_pad), is_pad), is_pad),
                             batch_size)

    def distance(self, pooled: Tensor) -> Tensor:
        """Mahalanobis distance of pooled vectors (B, d) to the nearest team mean of the training tickets (B,)."""
        if self.ood_means is None:
            raise ValueError("this router stores no training-ticket statistics to measure distance by")
        diff = pooled[:, None, :] - self.ood_means[None]                        # (B, C, d)
        return torch.einsum("bcd,de,bce->bc", diff, self.ood_precision, diff).clamp(min=0).sqrt().amin(1)

    @property
    def ood(self) -> dict:
        return self.card.ood

    def assess_encoded(self, enc: PieceEncoded, probs: Tensor | None = None) -> Assessment:
        """The prediction with its flags (`EncoderCard.assess`)."""
        p = self.predict_encoded([enc])[0] if probs is None else probs
        return self.card.assess(enc, [float(x) for x in p])

    def assess(self, text: str) -> Assessment:
        return self.assess_encoded(self.encode(text))

    # -- internals ---------------------------------------------------------------------------------------
    def word_groups(self, enc: PieceEncoded) -> list[list[int]]:
        """The pieces of each word in reading order, [CLS] and [SEP] as words of their own."""
        return word_groups(enc)

    def run_with_cache(self, ids: Tensor, is_pad: Tensor, head_mask: Tensor | None = None
                       ) -> tuple[Tensor, dict[str, Tensor]]:
        """Logits (B, teams) through the from-scratch encoder, and every internal by name
        (`ticketnet.encoder.model.run_with_cache`); `head_mask` (n_blocks, h) scales each head's output."""
        return run_with_cache(self.model, ids, is_pad, head_mask=head_mask)

    def attention(self, block: int) -> MultiHead:
        """Block `block`'s (0-based) attention: the encoder's weights, copied into the from-scratch MultiHead."""
        return self.model.blocks[block].attn

    def attention_input(self, cache: dict[str, Tensor], block: int) -> Tensor:
        """What block `block`'s attention reads, from a `run_with_cache` cache: the block input itself (post-norm)."""
        return cache[f"blocks.{block}.resid_pre"]

    def inspect(self, text: str) -> EncoderInspection:
        """Route one ticket with the from-scratch encoder and keep every block's attention, by piece and by word."""
        return inspect_ticket(self, text)

    # -- files -----------------------------------------------------------------------------------------
    @classmethod
    def load(cls, folder: str | Path, teams: list[str] | None = None) -> "EncoderRouter":
        """A fine-tuned router folder (router.json, encoder.safetensors, tokenizer.json), or a team's classifier
        saved with save_pretrained; EncoderError with one sentence otherwise. `teams` names a classifier's labels
        where its config holds only LABEL_k."""
        folder = Path(folder).expanduser()
        if (folder / CARD).is_file():
            return cls._load_fine_tune(folder)
        found = files.read_folder(folder)
        labels = files.classifier_teams(found, teams)
        model = build(found, files.load_state(folder))
        tok = files.load_tokenizer(folder, model.config.vocab_size)
        meta = {"kind": KIND, "source": "classifier", "folder": str(folder), "architecture": found.architecture,
                "config": model.config.to_dict(), "teams": labels}
        return cls(model, tok, tuple(labels), meta)

    @classmethod
    def _load_fine_tune(cls, folder: Path) -> "EncoderRouter":
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            meta = json.loads((folder / CARD).read_text(encoding="utf-8"))
            base, config, teams = meta["base"], EncoderConfig(**meta["config"]), tuple(meta["teams"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EncoderError(f"{folder / CARD}: not an encoder router's card ({exc})") from None
        if meta.get("kind") != KIND:
            raise EncoderError(f"{folder / CARD}: not an encoder router's card (kind {meta.get('kind')!r})")
        source, pins = files.resolve(base["encoder"])
        if pins and base.get("pins") and pins != base["pins"]:
            raise EncoderError(f"{folder}: it was fine-tuned from files with other pins than the installed "
                               f"{base['encoder']}")
        if not pins:                                   # a base folder the user named: its files as they were hashed
            if not source.is_dir():
                raise EncoderError(f"{folder}: its base encoder {source} is gone; restore it or fine-tune again")
            files.check_pins(source, base.get("pins") or {}, what=f"the base encoder of {folder.name}")
        found = files.read_folder(source)
        model = build(found, files.load_state(source), n_classes=config.n_classes, head=config.head)
        try:
            changed = load_file(folder / WEIGHTS, device="cpu")
        except (SafetensorError, OSError, ValueError) as exc:
            raise EncoderError(f"{folder / WEIGHTS}: not a readable safetensors file ({str(exc)[:160]})") from None
        ood = {k[len(OOD_PREFIX):]: v.float() for k, v in changed.items() if k.startswith(OOD_PREFIX)}
        changed = {k: v.float() for k, v in changed.items() if not k.startswith(OOD_PREFIX)}
        state = model.state_dict()
        wrong = [k for k in changed if k not in state or state[k].shape != changed[k].shape]
        if wrong:
            raise EncoderError(f"{folder / WEIGHTS}: {wrong[0]} does not fit the encoder its card names")
        model.load_state_dict({**state, **changed})
        tok_dir = folder if (folder / TOKENIZER).is_file() else source
        tok = files.load_tokenizer(tok_dir, config.vocab_size)
        return cls(model.eval(), tok, teams, meta, ood_means=ood.get("means"), ood_precision=ood.get("precision"))
