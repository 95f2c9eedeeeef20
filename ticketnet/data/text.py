"""Tokenizer and vocabulary: words and numbers lowercased, every punctuation mark its own token."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

PAD, UNK = "<pad>", "<unk>"
PAD_ID, UNK_ID = 0, 1

# A run of letters/digits (any script) or any single character that is neither a word
# character nor white space: "It's" -> "it", "'", "s"; "£49.99" -> "£", "49", ".", "99".
_TOKEN = re.compile(r"[^\W_]+|[^\w\s]|_")


def _visible(text: str) -> str:
    """The text with control and format characters (NUL, escapes, zero-width and direction marks) as spaces.

    They carry no words, so they must not become tokens; one space each keeps character offsets intact.
    """
    if text.isprintable():
        return text
    return "".join(c if c in "\t\n\r" or unicodedata.category(c)[0] != "C" else " " for c in text)


def tokenize(text: str) -> list[str]:
    """Split a ticket into lowercased word/number tokens and one token per punctuation mark."""
    if not isinstance(text, str):
        raise TypeError(f"tokenize expects a str, got {type(text).__name__}")
    return _TOKEN.findall(_visible(text).lower())


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets in `text` of each token `tokenize(text)` returns, in order."""
    if not isinstance(text, str):
        raise TypeError(f"token_spans expects a str, got {type(text).__name__}")
    # Lowercasing can change a string's length (e.g. 'İ' becomes two code points), so match the original
    # text and refuse the rare text whose tokens would then differ from what the model reads.
    spans = [m.span() for m in _TOKEN.finditer(_visible(text))]
    if len(spans) != len(tokenize(text)):
        raise ValueError("this text tokenizes differently once lowercased; offsets are not available")
    return spans


class Vocab:
    """Token <-> id table built from training texts: `<pad>`=0, `<unk>`=1, then by frequency, ties alphabetical."""

    def __init__(self, texts: Iterable[str] = (), min_freq: int = 2, max_size: int | None = None,
                 itos: Sequence[str] | None = None):
        if itos is None:
            counts = Counter(tok for text in texts for tok in tokenize(text))
            ranked = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
            if max_size is not None:
                ranked = ranked[: max(0, max_size - 2)]
            itos = [PAD, UNK, *ranked]
        if list(itos[:2]) != [PAD, UNK]:
            raise ValueError("a vocabulary must start with '<pad>' (id 0) and '<unk>' (id 1)")
        if len(set(itos)) != len(itos):
            raise ValueError("a vocabulary may not list the same token twice")
        self.itos: list[str] = list(itos)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def encode(self, text: str) -> list[int]:
        """Ids of the text's tokens; tokens never seen in training become `<unk>`."""
        return [self.stoi.get(t, UNK_ID) for t in tokenize(text)]

    def decode(self, ids: Iterable[int]) -> str:
        """The tokens of `ids` joined by spaces, padding dropped."""
        return " ".join(self.itos[i] for i in ids if i != PAD_ID)

    def tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[i] for i in ids]

    def save(self, path: str | Path) -> None:
        from ticketnet._runtime.atomic import write_atomic

        write_atomic(path, json.dumps(self.itos, ensure_ascii=False, indent=0).encode("utf-8"))

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        path = Path(path)
        try:
            itos = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: vocabulary file not found") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a vocabulary file (a JSON list of tokens): {exc}") from None
        if not isinstance(itos, list) or not all(isinstance(t, str) for t in itos):
            raise ValueError(f"{path}: not a vocabulary file (a JSON list of tokens)")
        return cls(itos=itos)
