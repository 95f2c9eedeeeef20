"""The router's card: its vocabulary, teams and recorded metadata, read without torch, and tickets encoded with it."""

# Everything a page needs to tokenize a ticket, name the teams and read the recorded metrics, without importing torch
# (about a second of a cold start): the dashboard's first page draws from stored predictions with this alone.
# `ticketnet.router.Router` adds the model on top.

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ticketnet.data.text import Vocab, tokenize
from ticketnet.data.thread import split_thread
from ticketnet.paths import WEIGHTS


class WeightsError(ValueError):
    """Weights that cannot be used; the message names the file and what to do."""


@dataclass
class Encoded:
    """One ticket as the model reads it."""

    text: str                  # what the model reads: the ticket's new message unless the whole thread was asked for
    tokens: list[str]          # tokens the model reads (lowercased, after truncation)
    ids: list[int]
    n_total: int               # tokens before truncation
    unknown: int               # how many of `ids` are <unk>
    set_aside_chars: int = 0   # characters of quoted history, forwarded chain or signature not read

    @property
    def truncated(self) -> bool:
        return self.n_total > len(self.ids)

    @property
    def unknown_words(self) -> list[str]:
        """The word tokens (letters or digits) the vocabulary does not know, in ticket order."""
        return [t for t, i in zip(self.tokens, self.ids) if i == 1 and _is_word(t)]

    @property
    def distinct_unknown_words(self) -> list[str]:
        """`unknown_words` once each, in the order they first appear ("b, script", not "b, b, script, script")."""
        return list(dict.fromkeys(self.unknown_words))

    @property
    def words(self) -> int:
        """How many of the tokens read are words (letters or digits), the basis of `unknown_share`."""
        return sum(_is_word(t) for t in self.tokens)

    @property
    def unknown_share(self) -> float:
        """Share of the word tokens that are <unk> (punctuation is always known, so it is left out)."""
        words = self.words
        return len(self.unknown_words) / words if words else 0.0


def _is_word(token: str) -> bool:
    return any(c.isalnum() for c in token)


# Used when a card predates the out-of-distribution thresholds (router.json without "ood").
DEFAULT_OOD = {"max_unknown_share": 0.3, "min_confidence": 0.6}


def encode_text(text: str, vocab: Vocab, max_len: int, whole_thread: bool = False) -> Encoded:
    """Tokenize and look up one ticket's new message (`ticketnet.data.thread`; the whole text with `whole_thread`),
    keeping the first `max_len` tokens; ValueError for a ticket with no token."""
    if not isinstance(text, str):
        raise TypeError(f"a ticket must be text, got {type(text).__name__}")
    read = text if whole_thread else split_thread(text).new
    toks = tokenize(read)
    if not toks:
        raise ValueError("the ticket has no words, numbers or punctuation to read")
    kept = toks[:max_len]
    ids = [vocab.stoi.get(t, 1) for t in kept]
    return Encoded(read, kept, ids, len(toks), sum(i == 1 for i in ids), len(text) - len(read))


DECIMALS = 4              # a stored routing policy decides on confidences to 4 decimals, as predict writes them


def below_rule(confidence: float, threshold: float, rule: str) -> bool:
    """Whether `confidence` is below `threshold`: a stored routing policy's ("policy") compared as the policy
    decides, on the confidence to DECIMALS places, so a ticket it auto-routes is never also flagged below it."""
    if rule == "policy":
        # np.round's steps (scale, round half to even, unscale), as Policy.apply rounds, without importing numpy
        confidence = round(confidence * 10 ** DECIMALS) / 10 ** DECIMALS
    return confidence < threshold


def shown_below(value: float, threshold: float, decimals: int = 2) -> tuple[str, str]:
    """(value, threshold) as text, the value with as many decimals as it takes to read below the threshold: 0.53
    and 0.90, but 0.897 and 0.90, never "0.90 is below 0.90". The threshold keeps `decimals` places."""
    limit = f"{threshold:.{decimals}f}"
    for places in range(decimals, 10):
        shown = f"{value:.{places}f}"
        if float(shown) < float(f"{threshold:.{places}f}"):
            return shown, limit
    return f"{value:.10g}", f"{threshold:.10g}"


@dataclass
class Assessment:
    """A ticket's prediction and whether it looks unlike what the router was trained on, or is too unsure to trust."""

    team: str
    confidence: float              # calibrated probability of `team`
    probs: list[float]             # calibrated, in the router's team order
    unknown_share: float           # share of the word tokens the vocabulary does not know
    unknown_words: list[str]       # in ticket order, once each
    unfamiliar: bool               # unknown_share above the card's max_unknown_share
    low_confidence: bool           # confidence below the card's min_confidence
    truncated: bool
    words: int = 0                 # word tokens read (the basis of unknown_share)
    unknown_count: int = 0         # word tokens read as <unk>, repeats counted
    min_confidence: float = DEFAULT_OOD["min_confidence"]   # the rule's threshold for `team` (inf: never auto-routed)
    rule: str = "calibrated"       # whose threshold: "policy" (the stored routing policy's) or "calibrated"
    # Why the ticket is unfamiliar where that is not unknown words (an encoder router reads every word as pieces:
    # there it is the ticket's distance from the training tickets in the space its classifier reads).
    unfamiliar_reason: str = ""

    @property
    def flagged(self) -> bool:
        return self.unfamiliar or self.low_confidence

    @property
    def reasons(self) -> list[str]:
        out = []
        if self.unfamiliar and self.unfamiliar_reason:
            out.append(self.unfamiliar_reason)
        elif self.unfamiliar:
            listed = ", ".join(self.unknown_words[:5]) + (", …" if len(self.unknown_words) > 5 else "")
            out.append(f"{self.unknown_count} of its {self.words} words ({self.unknown_share:.0%}) are unknown to "
                       f"the router ({listed})")
        if self.low_confidence and self.rule == "policy":
            if math.isinf(self.min_confidence):
                out.append(f"the router's routing policy auto-routes no ticket predicted for {self.team}")
            else:
                shown, limit = shown_below(self.confidence, self.min_confidence, decimals=3)
                out.append(f"the router's confidence {shown} is below its routing policy's threshold for "
                           f"{self.team}, {limit}")
        elif self.low_confidence:
            shown, limit = shown_below(self.confidence, self.min_confidence)
            out.append(f"the router's confidence {shown} is below its calibrated threshold {limit} (no routing "
                       "policy is stored)")
        return out

    @property
    def message(self) -> str:
        """The flag in one sentence that names the reason that fired ("" when none did): unknown words make the
        ticket unlike the training data; a low confidence alone only makes the prediction unsure."""
        if not self.flagged:
            return ""
        if self.unfamiliar:
            return "Unlike the tickets the router was trained on: " + "; and ".join(self.reasons) + \
                ". Treat this prediction as a guess."
        if self.rule == "policy":
            return "To a person: " + self.reasons[0] + ". The policy would not auto-route this ticket."
        return "Low confidence: " + self.reasons[0] + ". Treat this prediction as a guess."


@dataclass
class RouterCard:
    """The router without its weights: vocabulary, teams and `router.json` (configuration, metrics, calibration)."""

    vocab: Vocab
    teams: tuple[str, ...]
    meta: dict = field(default_factory=dict)
    whole_thread: bool = False     # read quoted history and signatures too, not only the new message

    @property
    def max_len(self) -> int:
        return int(self.meta["config"]["max_len"])

    def encode(self, text: str) -> Encoded:
        """Tokenize and look up one ticket; raises ValueError for a ticket with no token at all."""
        return encode_text(text, self.vocab, self.max_len, self.whole_thread)

    @property
    def ood(self) -> dict:
        """Thresholds beyond which a ticket is flagged: `max_unknown_share`, `min_confidence`."""
        return {**DEFAULT_OOD, **self.meta.get("ood", {})}

    def assess(self, enc: Encoded, probs: Sequence[float]) -> Assessment:
        """The flags of one ticket, typed or not, from its team probabilities: too many unknown words (above
        `max_unknown_share`), or a confidence below `confidence_rule`'s threshold for the predicted team."""
        p = [float(x) for x in probs]
        k = max(range(len(p)), key=p.__getitem__)
        limits = self.ood
        share = enc.unknown_share
        threshold, rule = self.confidence_rule(self.teams[k])
        return Assessment(self.teams[k], p[k], p, share, enc.distinct_unknown_words,
                          share > limits["max_unknown_share"], below_rule(p[k], threshold, rule), enc.truncated,
                          enc.words, len(enc.unknown_words), threshold, rule)

    def confidence_rule(self, team: str) -> tuple[float, str]:
        """The confidence below which a ticket predicted for `team` is flagged, and whose rule that is: the stored
        routing policy's threshold for the team (what it does not auto-route goes to a person; inf: nothing is), so
        every page flags by the numbers the Routing policy page shows; else the calibrated `min_confidence`."""
        return confidence_rule(self.meta, team, self.ood)


def confidence_rule(meta: dict, team: str, ood: dict) -> tuple[float, str]:
    """`RouterCard.confidence_rule` from a router.json's metadata and its OOD thresholds, for any kind of router."""
    stored = meta.get(POLICY_KEY)
    try:
        value = stored["thresholds"]["thresholds"][team]
        return (math.inf if value is None else float(value)), "policy"
    except (KeyError, TypeError, ValueError):
        return float(ood["min_confidence"]), "calibrated"


POLICY_KEY = "policy"      # router.json's routing policy (ticketnet.policy): how predictions are acted on, not made


def card_json_bytes(meta: dict) -> bytes:
    """router.json's bytes for a card's metadata, as training writes them (one-space indent, names unescaped)."""
    return (json.dumps(meta, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def weights_files(weights: str | Path) -> tuple[Path, Path, Path]:
    """The files that make a router: the weights, what reads its text (vocab.json; an encoder's tokenizer.json
    beside its encoder.safetensors) and router.json."""
    weights = Path(weights)
    reader = "tokenizer.json" if weights.suffix == ".safetensors" else "vocab.json"   # encoders: either kind
    return weights, weights.parent / reader, weights.parent / "router.json"


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
