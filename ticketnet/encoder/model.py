"""A BERT-family encoder written from scratch: embeddings, post-norm blocks on MultiHead, the classifier heads."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ticketnet.nn.attention import MultiHead, padding_mask

FAMILIES = ("bert", "distilbert", "roberta", "electra")
# How each family's classifier reads the encoder: the first token ([CLS] or <s>) through its own dense layer, or
# (the `mean` head a fine-tune of a sentence encoder uses) the mean of the real tokens, straight into the classifier.
HEADS = {"bert": "pooler", "distilbert": "pre_classifier", "roberta": "dense_tanh", "electra": "dense_gelu"}
ACTIVATIONS = {"gelu": F.gelu, "relu": F.relu, "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
               "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"), "quick_gelu": lambda x: x * torch.sigmoid(1.702 * x)}


@dataclass(frozen=True)
class EncoderConfig:
    family: str                 # one of FAMILIES (XLM-R reads as roberta)
    vocab_size: int
    d: int                      # width of every token vector (hidden_size)
    h: int                      # heads per block, each of d_k = d / h
    n_blocks: int
    d_ff: int                   # hidden width of each block's feed-forward layer
    max_positions: int          # rows of the position table
    type_vocab_size: int        # 0 where the family has no token types (DistilBERT)
    eps: float                  # LayerNorm epsilon
    activation: str             # the feed-forward's, a key of ACTIVATIONS
    embedding_size: int         # ELECTRA's embeddings may be narrower than d, then projected; d elsewhere
    pad_id: int
    head: str                   # a value of HEADS, or "mean"
    n_classes: int

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"unsupported encoder family {self.family!r}; supported: {', '.join(FAMILIES)}")
        if self.d % self.h:
            raise ValueError(f"the width {self.d} must split evenly into {self.h} heads")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"unsupported activation {self.activation!r}; supported: {', '.join(ACTIVATIONS)}")
        if self.head not in (*HEADS.values(), "mean"):
            raise ValueError(f"unknown head {self.head!r}")

    @property
    def position_offset(self) -> int:
        """RoBERTa numbers real tokens from pad_id + 1 (its first two position rows are never used by text)."""
        return self.pad_id + 1 if self.family == "roberta" else 0

    @property
    def max_pieces(self) -> int:
        """The longest input the position table allows."""
        return self.max_positions - self.position_offset

    def to_dict(self) -> dict:
        return asdict(self)


class Embeddings(nn.Module):
    """Piece + position (+ token type) vectors, LayerNorm, and ELECTRA's projection up to d."""

    def __init__(self, c: EncoderConfig):
        super().__init__()
        self.c = c
        e = c.embedding_size
        self.word = nn.Embedding(c.vocab_size, e)
        self.position = nn.Embedding(c.max_positions, e)
        self.token_type = nn.Embedding(c.type_vocab_size, e) if c.type_vocab_size else None
        self.norm = nn.LayerNorm(e, eps=c.eps)
        self.project = nn.Linear(e, c.d) if e != c.d else None

    def positions(self, is_pad: Tensor) -> Tensor:
        """(B, n) position ids: 0..n-1, or RoBERTa's pad_id + 1 + rank among the real tokens (pad_id on padding)."""
        B, n = is_pad.shape
        if self.c.family != "roberta":
            return torch.arange(n, device=is_pad.device).expand(B, n)
        real = (~is_pad).long()
        return torch.cumsum(real, 1) * real + self.c.pad_id

    def forward(self, ids: Tensor, is_pad: Tensor, token_types: Tensor | None = None,
                pieces: Tensor | None = None) -> Tensor:
        """(B, n) ids -> (B, n, d). `pieces` (B, n, e) replaces the piece vectors (gradient attributions)."""
        x = self.word(ids) if pieces is None else pieces                     # (B, n, e)
        x = x + self.position(self.positions(is_pad))
        if self.token_type is not None:
            x = x + self.token_type(torch.zeros_like(ids) if token_types is None else token_types)
        x = self.norm(x)
        return x if self.project is None else self.project(x)               # (B, n, d)


class Block(nn.Module):
    """One post-norm layer: x = LN(x + MultiHead(x)); x = LN(x + W₂·act(W₁·x)). Dropout acts in training only."""

    def __init__(self, c: EncoderConfig, dropout: float = 0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.attn = MultiHead(c.d, c.h)
        self.norm_attn = nn.LayerNorm(c.d, eps=c.eps)
        self.ff_in = nn.Linear(c.d, c.d_ff)
        self.ff_out = nn.Linear(c.d_ff, c.d)
        self.norm_ff = nn.LayerNorm(c.d, eps=c.eps)
        self.act = ACTIVATIONS[c.activation]

    def forward(self, x: Tensor, mask: Tensor | None, head_mask: Tensor | None = None
                ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(B, n, d) -> block output, attention weights (B, h, n, n), attention output, the first residual."""
        attn_out, pattern = self.attn(x, x, mask, head_mask)               # (B, n, d), (B, h, n, n)
        mid = self.norm_attn(x + self.drop(attn_out))                       # (B, n, d)
        return self.feed_forward(mid), pattern, attn_out, mid

    def feed_forward(self, mid: Tensor) -> Tensor:
        return self.norm_ff(mid + self.drop(self.ff_out(self.act(self.ff_in(mid)))))


class Head(nn.Module):
    """Pool the last block's vectors (first token, or the mean of the real ones) and map them to team logits."""

    def __init__(self, c: EncoderConfig, dropout: float = 0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.kind = c.head
        self.dense = None if c.head == "mean" else nn.Linear(c.d, c.d)
        self.out = nn.Linear(c.d, c.n_classes)

    def pool(self, x: Tensor, is_pad: Tensor) -> Tensor:
        """(B, n, d) -> (B, d): what the classifier reads (after the dense layer where the head has one)."""
        if self.kind == "mean":
            keep = (~is_pad).to(x.dtype).unsqueeze(-1)                      # (B, n, 1)
            return (x * keep).sum(1) / keep.sum(1).clamp(min=1)
        y = self.dense(x[:, 0])                                             # the first token: [CLS] or <s>
        if self.kind in ("pooler", "dense_tanh"):
            return torch.tanh(y)
        return F.gelu(y) if self.kind == "dense_gelu" else F.relu(y)

    def forward(self, x: Tensor, is_pad: Tensor) -> Tensor:
        return self.out(self.drop(self.pool(x, is_pad)))                    # (B, n_classes)


class EncoderModel(nn.Module):
    """Reads piece ids (B, n) and returns team logits (B, n_classes): `embed`, `blocks[i]`, `head`."""

    def __init__(self, config: EncoderConfig, dropout: float = 0.0):
        super().__init__()
        self.config = config
        self.embed = Embeddings(config)
        self.blocks = nn.ModuleList(Block(config, dropout) for _ in range(config.n_blocks))
        self.head = Head(config, dropout)

    def encode(self, x: Tensor, is_pad: Tensor, head_mask: Tensor | None = None, start: int = 0,
               cache: dict | None = None) -> Tensor:
        """Blocks start.. from their input x (B, n, d); fills `cache` with TransformerLens-style names if given."""
        mask = padding_mask(is_pad, x.dtype) if bool(is_pad.any()) else None   # (B, 1, 1, n)
        for i in range(start, len(self.blocks)):
            post, pattern, attn_out, mid = self.blocks[i](x, mask, None if head_mask is None else head_mask[i])
            if cache is not None:
                cache.update({f"blocks.{i}.resid_pre": x, f"blocks.{i}.attn.pattern": pattern,
                              f"blocks.{i}.attn.out": attn_out, f"blocks.{i}.resid_mid": mid,
                              f"blocks.{i}.resid_post": post})
            x = post
        return x

    def forward(self, ids: Tensor, is_pad: Tensor | None = None, token_types: Tensor | None = None,
                head_mask: Tensor | None = None) -> Tensor:
        """Team logits (B, n_classes) for piece ids (B, n); `is_pad` (B, n) defaults to ids == pad_id."""
        is_pad = ids.eq(self.config.pad_id) if is_pad is None else is_pad
        x = self.embed(ids, is_pad, token_types)                            # (B, n, d)
        return self.head(self.encode(x, is_pad, head_mask), is_pad)


def run_with_cache(model: EncoderModel, ids: Tensor, is_pad: Tensor, token_types: Tensor | None = None,
                   head_mask: Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
    """Logits and every internal by name: `embed`, `blocks.{i}.attn.pattern` (B, h, n, n), ..., `pooled` (B, d)."""
    cache: dict[str, Tensor] = {}
    x = model.embed(ids, is_pad, token_types)
    cache["embed"] = x
    x = model.encode(x, is_pad, head_mask, cache=cache)
    cache["pooled"] = model.head.pool(x, is_pad)
    return model.head.out(cache["pooled"]), cache
