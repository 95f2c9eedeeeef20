"""The pooled vector each ticket is routed from (the head's input), for many tickets in padded length-sorted batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from ticketnet._runtime.parallel import share_out
from ticketnet.nn.batching import ROUTE_TOKENS, length_chunks
from ticketnet.nn.transformer import TinyTransformer, pad_batch

if TYPE_CHECKING:
    from ticketnet.router import Router


def pooled_and_logits(model: TinyTransformer, seqs: Sequence[Sequence[int]], batch_size: int = 256,
                      max_tokens: int = ROUTE_TOKENS, workers: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(pooled (N, d), logits (N, C)) of id lists, float32, in input order.

    The model's own eval-mode forward split at the head: embeddings, `encode_eval`, `pool` (the mean of the
    final-normed vectors over the real tokens; padding masked), then `head`. The batches are `batched_probs`'
    (same `length_chunks`, same padding), so softmax(logits) is bit for bit what the router predicts, and
    head(pooled) is the logits by construction."""
    if model.training:
        raise ValueError("the model is in training mode (dropout on); call model.eval() first")
    d, classes = model.config.d, model.config.n_classes
    pooled, logits = torch.empty(len(seqs), d), torch.empty(len(seqs), classes)

    def run(share: list[list[int]]) -> None:
        with torch.inference_mode():
            for idx in share:
                ids, is_pad = pad_batch([list(seqs[i]) for i in idx])
                if bool(is_pad.all(dim=1).any()):
                    raise ValueError("every ticket needs at least one token; got a row that is all padding")
                vectors = model.pool(model.encode_eval(model.embeddings(ids), is_pad), is_pad)
                pooled[idx], logits[idx] = vectors, model.head(vectors)

    share_out(run, length_chunks([len(s) for s in seqs], batch_size, max_tokens=max_tokens), workers)
    return pooled.numpy(), logits.numpy()


def pooled_of_texts(router: Router, texts: Sequence[str], workers: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """`pooled_and_logits` of ticket texts as the router encodes them (truncated to its position table); raises
    ValueError for a ticket with no token. An encoder router's is the vector its classifier reads (its mean of the
    pieces, or its [CLS] head's dense layer)."""
    if getattr(router, "kind", "tiny") == "encoder":
        pooled = router.pooled([router.encode(t) for t in texts])
        with torch.inference_mode():
            logits = router.model.head.out(pooled)
        return pooled.numpy(), logits.numpy()
    return pooled_and_logits(router.model, [router.encode(t).ids for t in texts], workers=workers)
