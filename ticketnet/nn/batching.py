"""Tickets of similar length batched together, so a padded batch spends little of its work on padding."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ticketnet.nn.transformer import pad_batch


def length_chunks(lengths: Sequence[int], size: int, max_cells: int | None = None) -> list[list[int]]:
    """Indices into `lengths`, shortest first (ties in input order), cut into chunks of at most `size`; with
    `max_cells`, also of at most `max_cells` rows·n² (n: the chunk's longest), so a chunk of long tickets holds
    fewer of them (a chunk's n×n attention maps and its n deletions per ticket grow as n²). A ticket longer than
    √max_cells gets a chunk of its own."""
    if size < 1:
        raise ValueError(f"chunk size must be at least 1, got {size}")
    if max_cells is not None and max_cells < 1:
        raise ValueError(f"max_cells must be at least 1, got {max_cells}")
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    if max_cells is None:
        return [order[i : i + size] for i in range(0, len(order), size)]
    chunks: list[list[int]] = []
    for i in order:
        n = max(lengths[i], 1)
        if chunks and len(chunks[-1]) < size and (len(chunks[-1]) + 1) * n * n <= max_cells:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


@torch.inference_mode()
def batched_probs(model: nn.Module, seqs: Sequence[Sequence[int]], batch_size: int = 256) -> Tensor:
    """Team probabilities (len(seqs), C) of id lists, run in length-sorted padded batches, back in input order."""
    out = torch.empty(len(seqs), model.config.n_classes)
    for idx in length_chunks([len(s) for s in seqs], batch_size):
        out[idx] = torch.softmax(model(*pad_batch([list(seqs[i]) for i in idx])), dim=-1)
    return out
