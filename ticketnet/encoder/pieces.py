"""A ticket as an encoder reads it: its pieces, [CLS] and [SEP] around them, and which word each piece belongs to."""

from __future__ import annotations

from dataclasses import dataclass

from ticketnet.data.thread import split_thread

DEFAULT_MAX_PIECES = 256


@dataclass
class PieceEncoded:
    """One ticket's pieces, truncated to the router's maximum, with the word each belongs to (None: a special)."""

    text: str                        # what the model reads: the new message unless the whole thread was asked for
    tokens: list[str]                # the pieces, e.g. [CLS] my in ##vo ##ice [SEP]
    ids: list[int]
    word_ids: list[int | None]       # the word of each piece (0-based, in reading order), None for [CLS] / [SEP]
    offsets: list[tuple[int, int]]   # each piece's characters in `text`
    n_total: int                     # pieces before truncation, specials included
    unknown: int                     # pieces that are the tokenizer's [UNK]
    set_aside_chars: int = 0

    @property
    def truncated(self) -> bool:
        return self.n_total > len(self.ids)

    @property
    def word_pieces(self) -> list[list[int]]:
        """The piece positions of each word, in order: words[k] is read from pieces word_pieces[k]."""
        groups: dict[int, list[int]] = {}
        for i, w in enumerate(self.word_ids):
            if w is not None:
                groups.setdefault(w, []).append(i)
        return list(groups.values())

    @property
    def words(self) -> list[str]:
        """Each word as the ticket wrote it (the characters its pieces cover)."""
        return [self.text[self.offsets[g[0]][0]:self.offsets[g[-1]][1]] for g in self.word_pieces]

    @property
    def unknown_share(self) -> float:
        """Share of the real pieces that are [UNK]; near 0 for a subword tokenizer, so it says little."""
        real = sum(w is not None for w in self.word_ids)
        return self.unknown / real if real else 0.0

    @property
    def unknown_words(self) -> list[str]:
        return []


def encode_pieces(tokenizer, text: str, max_pieces: int, whole_thread: bool = False,
                  unk_id: int | None = None) -> PieceEncoded:
    """Tokenize one ticket's new message (the whole text with `whole_thread`), keep at most `max_pieces` pieces
    with the specials, and group the pieces by word; ValueError for a ticket with no piece."""
    if not isinstance(text, str):
        raise TypeError(f"a ticket must be text, got {type(text).__name__}")
    read = text if whole_thread else split_thread(text).new
    enc = tokenizer.encode(read, add_special_tokens=False)
    if not enc.ids:
        raise ValueError("the ticket has no words, numbers or punctuation to read")
    n_real = len(enc.ids)
    specials = tokenizer.num_special_tokens_to_add(False)
    if n_real + specials > max_pieces:
        cut = max_pieces - specials
        # Keep whole words only: a word cut after some of its pieces would reach removal and the word view halved.
        while 1 < cut < n_real and enc.word_ids[cut] == enc.word_ids[cut - 1]:
            cut -= 1
        enc.truncate(cut)
    enc = tokenizer.post_process(enc, None, True)
    # Word ids restart per sequence; renumber them 0.. in reading order, so each word is one group.
    renumber: dict[int, int] = {}
    word_ids = [None if s else renumber.setdefault(w, len(renumber))
                for w, s in zip(enc.word_ids, enc.special_tokens_mask)]
    unknown = sum(i == unk_id for i in enc.ids) if unk_id is not None else 0
    return PieceEncoded(read, list(enc.tokens), list(enc.ids), word_ids, [tuple(o) for o in enc.offsets],
                        n_real + specials, unknown, len(text) - len(read))

