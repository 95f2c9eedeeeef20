"""Per-ticket head ablation: each head's output set to zero or to its mean over a split, and its support for the target."""

from __future__ import annotations

import pandas as pd
import torch
from torch import Tensor

from ticketnet.interpret.methods.counterfactual import check_eval, check_ticket
from ticketnet.interpret.interventions.units import UNITS, both_units, check_target
from ticketnet.nn.batching import length_chunks
from ticketnet.lens.inspection import act_name, head_outputs, run_from_block, run_with_cache
from ticketnet.nn.transformer import TinyTransformer, pad_batch

MODES = ("zero", "mean")
ABLATION_COLUMNS = ("block", "head", "mode", "logit_diff", "prob", "support_logit_diff", "support_prob")


def head_means(model: TinyTransformer, seqs: list[list[int]], batch_size: int = 256) -> Tensor:
    """Each head's mean output before W_O over every real token of the tickets `seqs` (id lists): (L, h, d_k).

    Computed once per split and cached by callers; mean ablation puts it in place of a head's output.
    """
    check_eval(model)
    if not seqs or any(len(s) == 0 for s in seqs):
        raise ValueError("head_means needs at least one ticket, and no empty ticket")
    cfg = model.config
    total = torch.zeros(cfg.n_blocks, cfg.h, cfg.d // cfg.h, dtype=torch.float64)
    count = 0
    with torch.inference_mode():
        for idx in length_chunks([len(s) for s in seqs], batch_size):
            ids, is_pad = pad_batch([list(seqs[i])[: cfg.max_len] for i in idx])
            _, cache = run_with_cache(model, ids, is_pad)
            real = (~is_pad).to(torch.float64)[:, None, :, None]      # (B, 1, n, 1)
            for b in range(cfg.n_blocks):
                total[b] += (head_outputs(model, cache, b).double() * real).sum((0, 2))   # (h, d_k)
            count += int((~is_pad).sum())
    return (total / count).to(next(model.parameters()).dtype)


def head_ablation(model: TinyTransformer, ids: Tensor, target: int, mode: str = "zero",
                  means: Tensor | None = None) -> pd.DataFrame:
    """Each head of each block switched off in turn on the ticket `ids` (n,), and the head's support for the target.

    mode "zero" sets the head's output (before W_O) to 0 at every position, as `run_with_cache(head_mask=…)`
    does; "mean" sets it to `means` (L, h, d_k) from `head_means` over a split. Per block one batch of h variants
    runs from that block (`run_from_block`); earlier blocks once. Columns: block, head (1-based), mode, the
    target's logit difference and probability with the head off, and the head's support (ticket − ablated: positive
    where the head helps the target).
    """
    check_eval(model)
    ids = check_ticket(ids)
    cfg = model.config
    check_target(target, cfg.n_classes)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    d_k = cfg.d // cfg.h
    if mode == "mean" and (means is None or tuple(means.shape) != (cfg.n_blocks, cfg.h, d_k)):
        raise ValueError(f"mean ablation needs the heads' mean outputs (L, h, d_k) = ({cfg.n_blocks}, {cfg.h}, "
                         f"{d_k}) from head_means, got {None if means is None else tuple(means.shape)}")
    n, h = ids.numel(), cfg.h
    rows = []
    with torch.inference_mode():
        logits, cache = run_with_cache(model, ids[None], torch.zeros(1, n, dtype=torch.bool))
        base = {u: float(v[0]) for u, v in both_units(logits, target).items()}
        for b in range(cfg.n_blocks):
            x = cache[act_name("resid_pre", b)].expand(h, n, -1)      # (h, n, d): one variant per head
            where = torch.eye(h, dtype=torch.bool)[:, :, None].expand(h, h, n)   # (h, h, n) variant k: head k
            z = x.new_zeros(h, h, n, d_k) if mode == "zero" else means[b][None, :, None, :].expand(h, h, n, d_k)
            values = both_units(run_from_block(model, x, b, z=z, z_where=where), target)
            for k in range(h):
                v = {u: float(values[u][k]) for u in UNITS}
                rows.append((b + 1, k + 1, mode, v["logit_diff"], v["prob"],
                             base["logit_diff"] - v["logit_diff"], base["prob"] - v["prob"]))
    return pd.DataFrame(rows, columns=list(ABLATION_COLUMNS))
