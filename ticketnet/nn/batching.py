"""Tickets of similar length batched together, so a padded batch spends little of its work on padding."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ticketnet.nn.transformer import pad_batch


def length_chunks(lengths: Sequence[int], size: int) -> list[list[int]]:
    """Indices into `lengths`, shortest first (ties in input order), cut into chunks of at most `size`."""
    if size < 1:
        raise ValueError(f"chunk size must be at least 1, got {size}")
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[i : i + size] for i in range(0, len(order), size)]


@torch.inference_mode()
def batched_probs(model: nn.Module, seqs: Sequence[Sequence[int]], batch_size: int = 256) -> Tensor:
    """Team probabilities (len(seqs), C) of id lists, run in length-sorted padded batches, back in input order."""
    out = torch.empty(len(seqs), model.config.n_classes)
    for idx in length_chunks([len(s) for s in seqs], batch_size):
        out[idx] = torch.softmax(model(*pad_batch([list(seqs[i]) for i in idx])), dim=-1)
    return out
