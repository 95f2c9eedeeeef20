"""Head importance (Michel et al. 2019): each head switched off in turn, and what the routing loses."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import torch
from torch import Tensor, nn

from ticketnet.interpret.methods.counterfactual import check_eval
from ticketnet.lens.inspection import run_with_cache
from ticketnet.nn.transformer import pad_batch

MEASURES = ["accuracy", "accuracy_drop", "prob_drop"]


def head_importance(model: nn.Module, ids: Tensor, is_pad: Tensor, labels: Tensor,
                    target: str | int | None = None, batch_size: int = 512) -> pd.DataFrame:
    """Michel et al. (2019): switch off one head at a time and measure what the routing loses.

    ids, is_pad (B, n) and labels (B,). For every (block, head) the batch is re-run through the lens with
    that head's output scaled by 0; `prob_drop` is the mean fall in the probability of the label
    (target=None), of the unmasked model's predicted team (target="predicted") or of one team index.
    Columns: block, head (1-based), accuracy (with the head off), accuracy_drop, prob_drop.
    """
    check_eval(model)
    if ids.dim() != 2 or is_pad.shape != ids.shape or labels.shape != ids.shape[:1]:
        raise ValueError(f"need ids and is_pad (B, n) and labels (B,), got {tuple(ids.shape)}, "
                         f"{tuple(is_pad.shape)}, {tuple(labels.shape)}")
    L, h = model.config.n_blocks, model.config.h
    # Row 0 of the masks is the intact model; then one row per head, so each batch chunk is read L·h+1 times.
    masks = torch.ones(L * h + 1, L, h)
    for j in range(L * h):
        masks[j + 1, j // h, j % h] = 0.0
    probs = torch.empty(L * h + 1, ids.shape[0], model.config.n_classes)
    with torch.inference_mode():
        for start in range(0, ids.shape[0], batch_size):
            chunk = slice(start, start + batch_size)
            for j, mask in enumerate(masks):
                logits, _ = run_with_cache(model, ids[chunk], is_pad[chunk], head_mask=mask)
                probs[j, chunk] = torch.softmax(logits, -1)
    if target is None:
        who = labels
    elif target == "predicted":
        who = probs[0].argmax(-1)
    elif isinstance(target, int) and 0 <= target < probs.shape[-1]:
        who = torch.full_like(labels, target)
    else:
        raise ValueError(f"target must be None (the label), 'predicted' or a team index, got {target!r}")
    p_who = probs.gather(2, who.view(1, -1, 1).expand(probs.shape[0], -1, 1))[..., 0]   # (L·h+1, B)
    acc = probs.argmax(-1).eq(labels[None]).double().mean(-1)                           # (L·h+1,)
    rows = [(j // h + 1, j % h + 1, float(acc[j + 1]), float(acc[0] - acc[j + 1]),
             float((p_who[0] - p_who[j + 1]).mean())) for j in range(L * h)]
    return pd.DataFrame(rows, columns=["block", "head", *MEASURES])


def head_importance_by_length(model: nn.Module, ids: Sequence[Sequence[int]], labels: Sequence[int],
                              chunk_size: int = 128,
                              progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """`head_importance` (target: the label) over tickets of any lengths, given as id lists: the tickets sorted by
    length and padded in chunks of `chunk_size`, so padding stays small, and the chunks' means averaged by size, so
    the result is the mean over every ticket. `progress(done, total)` after each chunk."""
    if len(ids) != len(labels) or not len(ids):
        raise ValueError(f"need as many labels as tickets, and at least one ticket: {len(ids)} and {len(labels)}")
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    labels = torch.as_tensor(labels, dtype=torch.long)
    total = pd.DataFrame()
    for start in range(0, len(order), chunk_size):
        idx = order[start : start + chunk_size]
        part = head_importance(model, *pad_batch([list(ids[i]) for i in idx]), labels[idx])
        part[MEASURES] = part[MEASURES] * len(idx) / len(order)
        total = part if total.empty else total.assign(**{c: total[c] + part[c] for c in MEASURES})
        if progress is not None:
            progress(start + len(idx), len(order))
    return total
