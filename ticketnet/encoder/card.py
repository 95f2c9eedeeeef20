"""An encoder router's card: its tokenizer, teams and router.json, read without torch, and its confidence flags."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ticketnet.card import DEFAULT_OOD, Assessment, WeightsError, below_rule, confidence_rule
from ticketnet.catalog import ENCODER_WEIGHTS
from ticketnet.encoder.pieces import DEFAULT_MAX_PIECES, PieceEncoded, encode_pieces

CARD = "router.json"
WEIGHTS = ENCODER_WEIGHTS             # what a fine-tune changed, under EncoderModel's names (the base is pinned)
TOKENIZER = "tokenizer.json"
KIND = "encoder"


@dataclass
class EncoderCard:
    """Enough to tokenize a ticket into pieces, name the teams and flag a prediction, with no model loaded."""

    tokenizer: object                  # tokenizers.Tokenizer
    teams: tuple[str, ...]
    meta: dict = field(default_factory=dict)
    whole_thread: bool = False
    # The distance of a ticket from the training tickets (needs the model); None: the card alone cannot tell.
    distance: Callable[[PieceEncoded], float] | None = None

    kind = KIND

    @property
    def max_len(self) -> int:
        """Pieces read per ticket, [CLS] and [SEP] included."""
        return int(self.meta.get("max_pieces", DEFAULT_MAX_PIECES))

    @property
    def unk_id(self) -> int | None:
        return next((i for t in ("[UNK]", "<unk>") if (i := self.tokenizer.token_to_id(t)) is not None), None)

    @property
    def mask_id(self) -> int | None:
        return next((i for t in ("[MASK]", "<mask>") if (i := self.tokenizer.token_to_id(t)) is not None), None)

    def encode(self, text: str) -> PieceEncoded:
        return encode_pieces(self.tokenizer, text, self.max_len, self.whole_thread, self.unk_id)

    @property
    def ood(self) -> dict:
        return {**DEFAULT_OOD, **self.meta.get("ood", {})}

    def confidence_rule(self, team: str) -> tuple[float, str]:
        """The stored routing policy's threshold for `team`, else the calibrated min_confidence (as RouterCard)."""
        return confidence_rule(self.meta, team, self.ood)

    def assess(self, enc: PieceEncoded, probs: Sequence[float]) -> Assessment:
        """A confidence below the rule's threshold, or (where the model is at hand) a ticket farther from every
        team's training tickets, in the space the classifier reads, than 99 % of valid's."""
        p = [float(x) for x in probs]
        k = max(range(len(p)), key=p.__getitem__)
        threshold, rule = self.confidence_rule(self.teams[k])
        far, reason = False, ""
        limit = self.ood.get("max_distance")
        if limit is not None and self.distance is not None:
            dist = self.distance(enc)
            far = dist > limit
            if far:
                reason = (f"its distance from the training tickets, {dist:.1f}, is beyond what 99 % of the "
                          f"validation tickets reach ({limit:.1f})")
        return Assessment(self.teams[k], p[k], p, enc.unknown_share, [], far, below_rule(p[k], threshold, rule),
                          enc.truncated, len(enc.word_pieces), enc.unknown, threshold, rule, reason)


def load_encoder_card(folder: str | Path) -> EncoderCard:
    """The card of a fine-tuned encoder router folder: router.json and tokenizer.json; raises WeightsError."""
    folder = Path(folder)
    for name in (CARD, TOKENIZER, WEIGHTS):
        if not (folder / name).is_file():
            raise WeightsError(f"{folder / name}: not found; an encoder router folder holds {WEIGHTS}, {TOKENIZER} "
                               f"and {CARD} (fine-tune one with `python -m ticketnet train --encoder minilm`)")
    try:
        meta = json.loads((folder / CARD).read_text(encoding="utf-8"))
        teams = tuple(meta["teams"])
        if meta.get("kind") != KIND:
            raise ValueError(f"kind {meta.get('kind')!r}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise WeightsError(f"{folder / CARD}: not an encoder router's card ({exc})") from None
    if not teams or not all(isinstance(t, str) and t for t in teams) or len(set(teams)) != len(teams):
        raise WeightsError(f"{folder / CARD}: its teams are not distinct names")
    from ticketnet.encoder.files import load_tokenizer

    return EncoderCard(load_tokenizer(folder, int(meta.get("config", {}).get("vocab_size", 0))), teams, meta)


def load_classifier_card(folder: str | Path) -> EncoderCard:
    """The card of a team's saved classifier: its teams from config.json's id2label (`classifier_teams`), its
    tokenizer; WeightsError (an EncoderError) otherwise."""
    from ticketnet.encoder.files import classifier_teams, load_tokenizer, read_folder

    found = read_folder(folder)
    labels = classifier_teams(found)
    vocab = found.config.get("vocab_size", 0)
    meta = {"kind": KIND, "source": "classifier", "folder": str(folder), "teams": labels}
    return EncoderCard(load_tokenizer(Path(folder), vocab), tuple(labels), meta)
