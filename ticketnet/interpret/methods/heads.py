"""Head importance (Michel et al. 2019): each head switched off in turn, and the head's support for the routing."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd
import torch
from torch import Tensor

from ticketnet.data.text import PAD_ID
from ticketnet.interpret.methods.counterfactual import check_eval
from ticketnet.lens.inspection import run_with_cache
from ticketnet.nn.transformer import pad_batch

IMPORTANCE_COLUMNS = ("block", "head", "accuracy", "accuracy_drop", "support_logit_diff", "support_prob")
MEASURES = list(IMPORTANCE_COLUMNS[2:])      # the per-ticket means, averaged across chunks by size


def _masked_forward(model) -> tuple[Callable[[Tensor, Tensor, Tensor], Tensor], int, int, int]:
    """(run(ids, is_pad, head_mask) -> logits, blocks, heads, teams) of a router of either kind (its
    `run_with_cache`, ticketnet.interface) or of a Tiny router's bare model (the lens's)."""
    if hasattr(model, "run_with_cache"):
        check_eval(model.model)
        return (lambda ids, is_pad, mask: model.run_with_cache(ids, is_pad, head_mask=mask)[0],
                model.n_blocks, model.n_heads, len(model.teams))
    check_eval(model)
    return (lambda ids, is_pad, mask: run_with_cache(model, ids, is_pad, head_mask=mask)[0],
            model.config.n_blocks, model.config.h, model.config.n_classes)


def head_importance(model, ids: Tensor, is_pad: Tensor, labels: Tensor,
                    target: str | int | None = None, batch_size: int = 512) -> pd.DataFrame:
    """Michel et al. (2019): switch off one head at a time and measure what the routing loses.

    `model` is a router of either kind (ticketnet.interface.TicketRouter) or a Tiny router's model.
    ids, is_pad (B, n) and labels (B,). For every (block, head) the batch is re-run through the from-scratch
    attention with that head's output scaled by 0. The head's support is the mean over tickets of (unmasked − masked) for the
    label (target=None), the unmasked model's predicted team (target="predicted") or one team index, in logit
    difference and in probability: positive where the head helps that team.
    Columns: block, head (1-based), accuracy (with the head off), accuracy_drop, support_logit_diff, support_prob.
    """
    run, L, h, n_classes = _masked_forward(model)
    if ids.dim() != 2 or is_pad.shape != ids.shape or labels.shape != ids.shape[:1]:
        raise ValueError(f"need ids and is_pad (B, n) and labels (B,), got {tuple(ids.shape)}, "
                         f"{tuple(is_pad.shape)}, {tuple(labels.shape)}")
    # Row 0 of the masks is the intact model; then one row per head, so each batch chunk is read L·h+1 times.
    masks = torch.ones(L * h + 1, L, h)
    for j in range(L * h):
        masks[j + 1, j // h, j % h] = 0.0
    logits_all = torch.empty(L * h + 1, ids.shape[0], n_classes)
    with torch.inference_mode():
        for start in range(0, ids.shape[0], batch_size):
            chunk = slice(start, start + batch_size)
            for j, mask in enumerate(masks):
                logits_all[j, chunk] = run(ids[chunk], is_pad[chunk], mask)
    probs = torch.softmax(logits_all, -1)
    if target is None:
        who = labels
    elif target == "predicted":
        who = probs[0].argmax(-1)
    elif isinstance(target, int) and 0 <= target < probs.shape[-1]:
        who = torch.full_like(labels, target)
    else:
        raise ValueError(f"target must be None (the label), 'predicted' or a team index, got {target!r}")
    p_who = probs.gather(2, who.view(1, -1, 1).expand(probs.shape[0], -1, 1))[..., 0]   # (L·h+1, B)
    is_who = torch.nn.functional.one_hot(who, probs.shape[-1]).bool()[None].expand_as(logits_all)
    # logit_difference per ticket's own team: logit[who] − logsumexp(the other logits), (L·h+1, B)
    ld_who = logits_all.gather(2, who.view(1, -1, 1).expand(probs.shape[0], -1, 1))[..., 0] \
        - logits_all.masked_fill(is_who, float("-inf")).logsumexp(-1)
    acc = probs.argmax(-1).eq(labels[None]).double().mean(-1)                           # (L·h+1,)
    rows = [(j // h + 1, j % h + 1, float(acc[j + 1]), float(acc[0] - acc[j + 1]),
             float((ld_who[0] - ld_who[j + 1]).double().mean()), float((p_who[0] - p_who[j + 1]).mean()))
            for j in range(L * h)]
    return pd.DataFrame(rows, columns=list(IMPORTANCE_COLUMNS))


def head_importance_by_length(model, ids: Sequence[Sequence[int]], labels: Sequence[int],
                              chunk_size: int = 128,
                              progress: Callable[[int, int], None] | None = None, *,
                              pad_id: int = PAD_ID) -> pd.DataFrame:
    """`head_importance` (target: the label) over tickets of any lengths, given as id lists: the tickets sorted by
    length and padded in chunks of `chunk_size`, so padding stays small, and the chunks' means averaged by size, so
    the result is the mean over every ticket; `pad_id` fills the gaps (an encoder's own). `progress(done, total)`
    after each chunk."""
    if len(ids) != len(labels) or not len(ids):
        raise ValueError(f"need as many labels as tickets, and at least one ticket: {len(ids)} and {len(labels)}")
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    labels = torch.as_tensor(labels, dtype=torch.long)
    total = pd.DataFrame()
    for start in range(0, len(order), chunk_size):
        idx = order[start : start + chunk_size]
        part = head_importance(model, *pad_batch([list(ids[i]) for i in idx], pad_id=pad_id), labels[idx])
        part[MEASURES] = part[MEASURES] * len(idx) / len(order)
        total = part if total.empty else total.assign(**{c: total[c] + part[c] for c in MEASURES})
        if progress is not None:
            progress(start + len(idx), len(order))
    return total
