"""Subword information for word tokens, as fastText adds it: each word's hashed character n-grams, averaged."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

N_MIN, N_MAX = 3, 5            # fastText's default n-gram lengths
MAX_GRAMS = 32                 # n-grams kept per word: a 12-letter word has 33 of lengths 3–5 with its boundaries


def fnv1a(text: str) -> int:
    """32-bit FNV-1a of the UTF-8 bytes (fastText's hash): the same bucket in every process, unlike `hash()`."""
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def char_ngrams(word: str, n_min: int = N_MIN, n_max: int = N_MAX) -> list[str]:
    """The character n-grams of `<word>` (fastText's boundary marks), shortest first, each once, in order."""
    marked = f"<{word}>"
    out: list[str] = []
    for n in range(n_min, n_max + 1):
        for i in range(len(marked) - n + 1):
            gram = marked[i:i + n]
            if gram not in out:
                out.append(gram)
    return out


def ngram_table(words: Sequence[str], buckets: int, n_min: int = N_MIN, n_max: int = N_MAX,
                max_grams: int = MAX_GRAMS, skip: Sequence[str] = ()) -> Tensor:
    """(len(words), max_grams) bucket ids 1..buckets of each word's n-grams, 0 where a word has fewer (and for the
    words in `skip`, such as <pad> and <unk>, which have no spelling to read)."""
    if buckets < 1:
        raise ValueError(f"buckets must be at least 1, got {buckets}")
    table = torch.zeros(len(words), max_grams, dtype=torch.long)
    skipped = set(skip)
    for i, word in enumerate(words):
        if word in skipped:
            continue
        ids = [1 + fnv1a(g) % buckets for g in char_ngrams(word, n_min, n_max)][:max_grams]
        table[i, :len(ids)] = torch.tensor(ids, dtype=torch.long)
    return table


class SubwordEmbedding(nn.Module):
    """A word's vector: its own row where the word is `known` (seen often enough in training), plus the mean of
    its n-grams' rows, so a misspelt or new word still reads as what it is spelt like.

    `table` (V, G) holds each id's n-gram buckets (`ngram_table`), `known` (V,) which ids have a word vector; the
    words' own rows are `word` (an nn.Embedding of V rows, padding row 0).
    """

    def __init__(self, word: nn.Embedding, table: Tensor, known: Tensor, buckets: int):
        super().__init__()
        if table.shape[0] != word.num_embeddings or known.shape != table.shape[:1]:
            raise ValueError(f"table {tuple(table.shape)} and known {tuple(known.shape)} need one row per word "
                             f"({word.num_embeddings})")
        self.word = word
        self.grams = nn.EmbeddingBag(buckets + 1, word.embedding_dim, mode="mean", padding_idx=0)   # 0: no n-gram
        self.register_buffer("table", table.long(), persistent=True)
        self.register_buffer("known", known.bool(), persistent=True)

    @property
    def weight(self) -> Tensor:
        """The words' own rows (what a tied output layer or an initialiser reads)."""
        return self.word.weight

    def extend(self, words: Sequence[str], n_min: int = N_MIN, n_max: int = N_MAX) -> list[int]:
        """Ids for words met after training: each gets its n-grams' rows and no word vector of its own (the
        table grows; the learnt rows are untouched). Returns their ids, in order."""
        start = self.table.shape[0]
        if not words:
            return []
        rows = ngram_table(words, self.grams.num_embeddings - 1, n_min, n_max, self.table.shape[1])
        with torch.no_grad():
            grown = torch.cat([self.word.weight, self.word.weight.new_zeros(len(words), self.word.embedding_dim)])
        self.word.weight = nn.Parameter(grown, requires_grad=self.word.weight.requires_grad)
        self.word.num_embeddings = grown.shape[0]
        self.table = torch.cat([self.table, rows])
        self.known = torch.cat([self.known, torch.zeros(len(words), dtype=torch.bool)])
        return list(range(start, start + len(words)))

    def forward(self, ids: Tensor) -> Tensor:
        """(B, n) ids -> (B, n, d)."""
        own = self.word(ids) * self.known[ids].unsqueeze(-1).to(self.word.weight.dtype)     # (B, n, d)
        grams = self.table[ids]                                                             # (B, n, G)
        return own + self.grams(grams.flatten(0, 1)).view_as(own)                           # mean over real n-grams
