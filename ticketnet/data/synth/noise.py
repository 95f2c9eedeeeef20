"""Surface noise (typos, case, punctuation, texting, bent English), per segment: evidence stays a literal substring."""

from __future__ import annotations

import random
import re

from ticketnet.data.synth.phrases import BENT, DROPPABLE, TEXTING
from ticketnet.data.synth.slots import Segments

_WORD = re.compile(r"[A-Za-z]{4,}")
_LOOSE_PUNCT = re.compile(r"[.,!?;:](?=\s|$)")
_TEXT_WORD = re.compile(r"[A-Za-z']+")


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(len(word) - 1)
    kind = rng.randrange(3)
    if kind == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == 1:
        return word[:i] + word[i + 1:]
    return word[:i] + word[i] + word[i:]


def _style(rng: random.Random) -> dict:
    texting = rng.random() < 0.08
    return {
        "broken": rng.random() < 0.10,
        "typo_rate": rng.choices((0.0, 0.03, 0.08), weights=(60, 30, 10))[0],
        "case": "lower" if texting else rng.choices(("as_is", "lower", "upper"), weights=(85, 12, 3))[0],
        "strip_punct": texting or rng.random() < 0.08,
        "texting": texting,
    }


def _broken(text: str, rng: random.Random) -> str:
    """Second-language or hurried English: articles and auxiliaries left out, negations and tenses bent."""
    def swap(m: re.Match) -> str:
        word = m.group()
        if word.lower() in DROPPABLE and rng.random() < 0.5:
            return ""
        bent = BENT.get(word) or BENT.get(word.lower())
        return rng.choice(bent) if bent and rng.random() < 0.7 else word
    return re.sub(r"  +", " ", _TEXT_WORD.sub(swap, text))


def _texting(text: str, rng: random.Random) -> str:
    """Texting abbreviations ("you" -> "u", "please" -> "pls") for most of the words that have one."""
    def swap(m: re.Match) -> str:
        word = m.group()
        short = TEXTING.get(word.lower())
        return rng.choice(short) if short and rng.random() < 0.7 else word
    return _TEXT_WORD.sub(swap, text)


def _surface(text: str, is_evidence: bool, style: dict, rng: random.Random) -> str:
    # Evidence gets a third of the typo rate: a few misspelt key words, never most of them.
    rate = style["typo_rate"] / 3 if is_evidence else style["typo_rate"]
    if rate:
        text = _WORD.sub(lambda m: _typo(m.group(), rng) if rng.random() < rate else m.group(), text)
    if style.get("broken"):
        text = _broken(text, rng)
    if style.get("texting"):
        text = _texting(text, rng)
    if style["strip_punct"]:
        text = _LOOSE_PUNCT.sub("", text).replace("'", "")
    if style["case"] == "lower":
        text = text.lower()
    elif style["case"] == "upper":
        text = text.upper()
    return text


def render(parts: list[tuple[str, Segments]], rng: random.Random) -> tuple[str, str]:
    """The ticket text and its `|`-joined evidence pieces, both after surface noise."""
    style = _style(rng)
    sentences, evidence = [], []
    for _, segments in parts:
        pieces = []
        for text, is_evidence in segments:
            out = _surface(text, is_evidence, style, rng)
            pieces.append(out)
            if is_evidence and out.strip():
                evidence.append(out.strip())
        sentences.append("".join(pieces).strip())
    return " ".join(s for s in sentences if s), "|".join(evidence)
