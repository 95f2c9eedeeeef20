"""One ticket through an encoder router's from-scratch blocks: every head's attention, by piece and by word."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from ticketnet.encoder.model import run_with_cache
from ticketnet.encoder.pieces import PieceEncoded


@dataclass
class EncoderInspection:
    """What the dashboard shows of one ticket's forward pass through an encoder router (pieces, specials included)."""

    encoded: PieceEncoded
    probs: Tensor              # (teams,)
    patterns: Tensor           # (n_blocks, h, n, n) from-scratch attention weights over the pieces
    block_outputs: Tensor      # (n_blocks, n, d)
    pooled: Tensor             # (d,) what the classifier reads
    # Checked against transformers on the Verification page only: its reference is a second copy of the model.
    differences: dict[str, float] = field(default_factory=dict)

    @property
    def tokens(self) -> list[str]:
        return self.encoded.tokens

    @property
    def predicted(self) -> int:
        return int(self.probs.argmax())

    @property
    def max_difference(self) -> float | None:
        return max(self.differences.values()) if self.differences else None

    @property
    def groups(self) -> list[list[int]]:
        """The pieces of each shown word in reading order, [CLS] and [SEP] as words of their own."""
        return word_groups(self.encoded)

    @property
    def words(self) -> list[str]:
        enc = self.encoded
        return [enc.tokens[g[0]] if enc.word_ids[g[0]] is None
                else enc.text[enc.offsets[g[0]][0]:enc.offsets[g[-1]][1]] for g in self.groups]

    def word_patterns(self, block: int | None = None) -> Tensor:
        """(n_blocks, h, words, words), or one block's (h, words, words): a word's row is the mean of its pieces'
        rows, its column the sum of their columns, so every row still sums to 1."""
        return to_words(self.patterns if block is None else self.patterns[block], self.groups)


def word_groups(encoded: PieceEncoded) -> list[list[int]]:
    groups: list[list[int]] = []
    last = object()
    for i, w in enumerate(encoded.word_ids):
        if w is None or w != last:
            groups.append([i])
        else:
            groups[-1].append(i)
        last = w if w is not None else object()
    return groups


def to_words(patterns: Tensor, groups: list[list[int]]) -> Tensor:
    """(..., n, n) piece attention -> (..., g, g) word attention: rows averaged, columns summed over each group."""
    n = patterns.shape[-1]
    member = torch.zeros(len(groups), n, dtype=patterns.dtype)
    for k, g in enumerate(groups):
        member[k, g] = 1.0
    rows = member / member.sum(1, keepdim=True)                      # (g, n) mean over a word's pieces
    return rows @ patterns @ member.T                                # (..., g, g)


@torch.inference_mode()
def inspect_ticket(router, text: str) -> EncoderInspection:
    """Route one ticket with the from-scratch encoder and keep every block's attention."""
    enc = router.encode(text)
    ids, is_pad = router.batch([enc])
    logits, cache = run_with_cache(router.model, ids, is_pad)
    L = router.config.n_blocks
    return EncoderInspection(
        encoded=enc,
        probs=torch.softmax(logits[0], dim=-1),
        patterns=torch.stack([cache[f"blocks.{i}.attn.pattern"][0] for i in range(L)]),
        block_outputs=torch.stack([cache[f"blocks.{i}.resid_post"][0] for i in range(L)]),
        pooled=cache["pooled"][0],
    )
