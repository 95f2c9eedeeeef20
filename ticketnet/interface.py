"""The one interface every router kind stands behind, for the methods, pages and CLI written once against it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:                  # the Tickets page draws before torch loads, and loading.py imports this module
    from torch import Tensor


@runtime_checkable
class TicketRouter(Protocol):
    """A ticket router as every method reads it, whatever is inside: the Tiny router (`ticketnet.router.Router`,
    one word a token) or a pretrained encoder (`ticketnet.encoder.router.EncoderRouter`, a word one or more pieces).

    Positions are the units the model reads (`unit`: "token" or "piece"); `word_groups` says which positions make
    each word. Internals are named as TransformerLens names them (`blocks.{i}.attn.pattern` (B, h, n, n),
    `blocks.{i}.resid_pre`, `blocks.{i}.resid_post`, `embed`, `pooled`), with i 0-based, so a method that reads
    a cache reads either kind.
    """

    kind: str                      # "tiny" or "encoder"
    unit: str                      # "token" or "piece"
    norm_first: bool               # whether a block normalises before attending (pre-norm) or after (post-norm)
    teams: tuple[str, ...]
    meta: dict
    whole_thread: bool
    pad_id: int                    # the id `batch` pads with

    @property
    def n_blocks(self) -> int: ...

    @property
    def n_heads(self) -> int: ...

    @property
    def max_len(self) -> int:
        """Positions read per ticket; longer tickets are truncated, and their encoding says so."""

    @property
    def card(self) -> Any:
        """What encoding and the flags need without a forward pass: teams, thresholds, `encode`, `assess`."""

    # -- reading a ticket
    def encode(self, text: str) -> Any:
        """One ticket's ids, shown tokens and notices (truncation, unknown words); ValueError when nothing is left."""

    def batch(self, encoded: list) -> tuple[Tensor, Tensor]:
        """Padded ids (B, n) and is_pad (B, n) of encoded tickets."""

    def word_groups(self, encoded: Any) -> list[list[int]]:
        """The positions of each word in reading order, special tokens as words of their own."""

    # -- routing
    def predict_encoded(self, encoded: list, batch_size: int = ..., workers: int = 1) -> Tensor:
        """Calibrated probabilities (len(encoded), teams)."""

    def predict_texts(self, texts: list[str], batch_size: int = ...) -> Tensor: ...

    def assess(self, text: str) -> Any:
        """The prediction with the router's flags for a ticket unlike its training tickets."""

    # -- internals: the from-scratch copy and the hooks the interventions use
    def run_with_cache(self, ids: Tensor, is_pad: Tensor, head_mask: Tensor | None = None
                       ) -> tuple[Tensor, dict[str, Tensor]]:
        """Logits (B, teams) through the from-scratch MultiHead and every internal by name; `head_mask`
        (n_blocks, h) scales each head's output (0 removes it)."""

    def attention(self, block: int) -> Any:
        """Block `block`'s attention as the project's own `ticketnet.nn.attention.MultiHead`."""

    def attention_input(self, cache: dict[str, Tensor], block: int) -> Tensor:
        """What block `block`'s attention reads (B, n, d), taken from a `run_with_cache` cache."""

    def inspect(self, text: str) -> Any:
        """One ticket's forward: `encoded`, `probs` (teams,), `patterns` (n_blocks, h, n, n), `block_outputs`,
        `groups` and `words` (its word view), `word_patterns(block)`, and `differences` from the reference where
        they are computed with the forward (the Tiny router's, against PyTorch's own layers)."""
