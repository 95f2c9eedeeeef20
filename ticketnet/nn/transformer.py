"""TinyTransformer: token + position embeddings, pre-norm encoder blocks, mean pooling, a linear head over teams."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from ticketnet.data.text import PAD_ID
from ticketnet.nn.fast import attention_eval, feed_forward_eval


@dataclass(frozen=True)
class TinyConfig:
    vocab_size: int
    d: int = 64            # width of every token vector
    h: int = 4             # heads per block, each of d_k = d / h = 16
    n_blocks: int = 2      # encoder blocks
    d_ff: int = 128        # hidden width of each block's feed-forward layer
    max_len: int = 256     # rows of the position table; longer tickets are truncated
    n_classes: int = 5     # teams
    dropout: float = 0.1   # only active in training

    def to_dict(self) -> dict:
        return asdict(self)


class TinyTransformer(nn.Module):
    """Reads token ids (B, n) and returns team logits (B, n_classes).

    Layout (names as TransformerLens would say them): `embed`, `position`, `blocks.layers[i]` (pre-norm
    nn.TransformerEncoderLayer: `norm1`, `self_attn`, `norm2`, `linear1`, `linear2`), `norm`, `head`.
    """

    def __init__(self, config: TinyConfig | int):
        super().__init__()
        # A bare vocabulary size builds the shipped router's shape, as the lesson writes `TinyTransformer(len(vocab))`.
        config = TinyConfig(vocab_size=config) if isinstance(config, int) else config
        self.config = config
        d = config.d
        self.embed = nn.Embedding(config.vocab_size, d, padding_idx=PAD_ID)
        self.position = nn.Embedding(config.max_len, d)
        layer = nn.TransformerEncoderLayer(d, config.h, config.d_ff, config.dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, config.n_blocks, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, config.n_classes)

    @classmethod
    def from_config(cls, config: TinyConfig | dict) -> "TinyTransformer":
        """The model of a config object or of its dict (as stored in router.json)."""
        return cls(config if isinstance(config, TinyConfig) else TinyConfig(**config))

    def embeddings(self, ids: Tensor) -> Tensor:
        """Token plus position vectors (B, n, d), the input of block 1."""
        return self.add_positions(self.embed(ids))

    def add_positions(self, tokens: Tensor) -> Tensor:
        """Token vectors (B, n, d) plus their position vectors: the input of block 1."""
        n = tokens.shape[1]
        if n > self.config.max_len:
            raise ValueError(f"{n} tokens exceed the position table ({self.config.max_len}); truncate first")
        return tokens + self.position(torch.arange(n, device=tokens.device))

    def pool(self, h: Tensor, is_pad: Tensor) -> Tensor:
        """Mean of the final-normed token vectors over the real (non-padding) tokens: (B, n, d) -> (B, d)."""
        keep = (~is_pad).to(h.dtype).unsqueeze(-1)                       # (B, n, 1)
        return (self.norm(h) * keep).sum(1) / keep.sum(1)               # (B, d)

    def forward_embeddings(self, x: Tensor, is_pad: Tensor) -> Tensor:
        """Logits from ready-made block inputs x (B, n, d); used by gradient attributions."""
        if self.training:
            h = self.blocks(x, src_key_padding_mask=is_pad)             # PyTorch's layers, with their dropout
        else:
            h = self.encode_eval(x, is_pad)
        return self.head(self.pool(h, is_pad))                          # (B, n_classes)

    def encode_eval(self, x: Tensor, is_pad: Tensor) -> Tensor:
        """The blocks in eval mode, computed from each layer's own weights (`attention_eval`, `feed_forward_eval`).

        Same function as `self.blocks(x, src_key_padding_mask=is_pad)` in eval mode (tests hold them
        within 1e-5), but faster on CPU: PyTorch's encoder "fast path" is slower than plain
        `F.scaled_dot_product_attention` for these sizes, and it cannot be switched off per call (docs/research-log.md,
        "What made the difference").
        """
        B, n, _ = x.shape
        mask = None
        if bool(is_pad.any()):
            mask = torch.zeros(B, 1, 1, n, dtype=x.dtype, device=x.device).masked_fill(
                is_pad[:, None, None, :], float("-inf"))                # (B, 1, 1, n) additive
        for layer in self.blocks.layers:
            x = feed_forward_eval(layer, attention_eval(layer, x, mask))
        return x

    def forward(self, ids: Tensor, is_pad: Tensor | None = None) -> Tensor:
        """Team logits (B, n_classes) for token ids (B, n); `is_pad` (B, n) defaults to ids == <pad>."""
        if ids.dim() != 2:
            raise ValueError(f"ids must be (B, n), got shape {tuple(ids.shape)}")
        is_pad = ids.eq(PAD_ID) if is_pad is None else is_pad
        if bool(is_pad.all(dim=1).any()):
            raise ValueError("every ticket needs at least one token; got a row that is all padding")
        return self.forward_embeddings(self.embeddings(ids), is_pad)


def pad_batch(seqs: list[list[int]], pad_to: int | None = None, pad_id: int = PAD_ID) -> tuple[Tensor, Tensor]:
    """Right-pad id lists into ids (B, n) and a boolean is_pad (B, n), with `pad_id` (an encoder's own) in the gaps."""
    n = max([len(s) for s in seqs] + [pad_to or 0])
    ids = torch.full((len(seqs), n), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.as_tensor(s, dtype=torch.long)
    lengths = torch.tensor([len(s) for s in seqs])
    return ids, torch.arange(n)[None, :] >= lengths[:, None]

