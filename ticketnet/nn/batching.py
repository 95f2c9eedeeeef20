"""Tickets of similar length batched together, so a padded batch spends little of its work on padding."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ticketnet._runtime.parallel import share_out
from ticketnet.nn.transformer import pad_batch


def length_chunks(lengths: Sequence[int], size: int, max_cells: int | None = None,
                  max_tokens: int | None = None) -> list[list[int]]:
    """Indices into `lengths`, shortest first (ties in input order), cut into chunks of at most `size`; with
    `max_cells`, also of at most `max_cells` rows·n² (n: the chunk's longest), so a chunk of long tickets holds
    fewer of them (a chunk's n×n attention maps and its n deletions per ticket grow as n²); with `max_tokens`,
    also of at most `max_tokens` rows·n padded tokens. A ticket over a bound gets a chunk of its own."""
    if size < 1:
        raise ValueError(f"chunk size must be at least 1, got {size}")
    for name, bound in (("max_cells", max_cells), ("max_tokens", max_tokens)):
        if bound is not None and bound < 1:
            raise ValueError(f"{name} must be at least 1, got {bound}")
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    cells = max_cells if max_cells is not None else float("inf")
    tokens = max_tokens if max_tokens is not None else float("inf")
    chunks: list[list[int]] = []
    for i in order:
        n, rows = max(lengths[i], 1), len(chunks[-1]) + 1 if chunks else 1
        if chunks and rows <= size and rows * n * n <= cells and rows * n <= tokens:
            chunks[-1].append(i)                              # sorted: this ticket is the chunk's longest
        else:
            chunks.append([i])
    return chunks


# Routing runs fastest per ticket in chunks of about 2,000 padded tokens: larger chunks' activations no longer stay
# in the CPU's caches, much smaller chunks lose it again to per-call overhead (measured on the valid split:
# docs/research-log.md, "The cold start, taken apart").
ROUTE_TOKENS = 2048


def batched_probs(model: nn.Module, seqs: Sequence[Sequence[int]], batch_size: int = 256,
                  max_tokens: int = ROUTE_TOKENS, workers: int = 1) -> Tensor:
    """Team probabilities (len(seqs), C) of id lists, run in length-sorted padded batches of at most `batch_size`
    tickets and `max_tokens` padded tokens, back in input order. `workers` > 1 deals the batches out to that many
    threads of one intra-op thread each (`share_out`), faster on several cores (docs/performance.md, "Routing
    throughput")."""
    out = torch.empty(len(seqs), model.config.n_classes)

    def run(share: list[list[int]]) -> None:
        with torch.inference_mode():
            for idx in share:
                out[idx] = torch.softmax(model(*pad_batch([list(seqs[i]) for i in idx])), dim=-1)

    share_out(run, length_chunks([len(s) for s in seqs], batch_size, max_tokens=max_tokens), workers)
    return out
