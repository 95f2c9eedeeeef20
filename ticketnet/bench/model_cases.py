"""Benchmark cases on the model's compute: removal vs Captum, inspection, route interventions, the split, attention."""

from __future__ import annotations

import time

import torch

from ticketnet._runtime.timing import side_by_side
from ticketnet.bench.tickets import ticket_of_length
from ticketnet.data.text import UNK_ID
from ticketnet.router import Router


def forward_flops(cfg, n: int, batch: int) -> float:
    """Multiply-adds ×2 of one forward pass: projections, scores and mixing, feed-forward, per block."""
    per_block = n * (8 * cfg.d * cfg.d + 4 * cfg.d * cfg.d_ff) + 4 * n * n * cfg.d
    return float(batch * cfg.n_blocks * per_block)


def shared_replacement_flops(cfg, n: int) -> float:
    """Multiply-adds ×2 of the ticket and its n <unk> replacements with block 1 shared: per row of the batch,
    block 1's output projection and feed-forward on n tokens, then every later block in full (the shared
    3n-token part is under 1 %)."""
    first = n * (2 * cfg.d * cfg.d + 4 * cfg.d * cfg.d_ff)
    return float((n + 1) * (first + forward_flops(cfg, n, 1) * (cfg.n_blocks - 1) / cfg.n_blocks))


def removal_vs_captum(router: Router, text: str, repeats: int, gflops: float) -> dict:
    """Our batched counterfactuals against Captum's FeatureAblation on the same perturbation (token -> <unk>).

    "ours" is the product's path (`variant_probs`: block 1 shared across variants from SHARED_MIN_N tokens);
    "plain" is one batched forward pass of the same n + 1 rows, to show what sharing block 1 adds.
    """
    from captum.attr import FeatureAblation

    from ticketnet.interpret import counterfactual_probs
    from ticketnet.interpret.methods.counterfactual import SHARED_MIN_N, counterfactual_batch, variant_probs

    model = router.model
    ids = torch.tensor(router.encode(text).ids)
    n = ids.numel()
    same, no_pad = counterfactual_batch(ids, UNK_ID, ("replaced",))   # the ticket and its n <unk> replacements

    def ours() -> torch.Tensor:
        p = variant_probs(model, ids, UNK_ID, ("replaced",))
        return p["ticket"][None] - p["replaced"]                      # (n, C) probability drops

    def plain() -> torch.Tensor:
        with torch.inference_mode():
            p = torch.softmax(model(same, no_pad), -1)
        return p[:1] - p[1:]

    def probs_fn(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(model(x, torch.zeros_like(x, dtype=torch.bool)), -1)

    with torch.inference_mode():
        target = int(probs_fn(ids[None]).argmax())
    fa = FeatureAblation(probs_fn)

    def captum_default() -> torch.Tensor:
        with torch.inference_mode():
            return fa.attribute(ids[None], baselines=UNK_ID, target=target)

    def captum_batched() -> torch.Tensor:
        with torch.inference_mode():
            return fa.attribute(ids[None], baselines=UNK_ID, target=target, perturbations_per_eval=n)

    diff = max((ours()[:, target] - captum_default()[0]).abs().max().item(),
               (ours()[:, target] - captum_batched()[0]).abs().max().item())
    t = side_by_side({"ours": ours, "plain": plain, "captum_default": captum_default, "captum_batched": captum_batched,
                      "ours_deletion_and_replacement": lambda: counterfactual_probs(model, ids)}, repeats=repeats)
    flops = shared_replacement_flops(model.config, n) if n >= SHARED_MIN_N else forward_flops(model.config, n, n + 1)
    floor = flops / (gflops * 1e9)                                     # every FLOP at the matmul rate just measured
    return {"n": n, "max_abs_difference": diff, "seconds": t,
            "ours_gflops": flops / t["ours"] / 1e9, "ours_fraction_of_matmul": floor / t["ours"],
            "floor_seconds_at_matmul_rate": floor, "ceiling_speedup_vs_captum_default": t["captum_default"] / floor,
            "speedup_vs_captum_default": t["captum_default"] / t["ours"],
            "speedup_vs_captum_perturbations_per_eval_n": t["captum_batched"] / t["ours"],
            "speedup_vs_plain_batched_forward": t["plain"] / t["ours"]}


def inspection_vs_forward(router: Router, text: str, repeats: int, gflops: float) -> dict:
    """Per-ticket inspection against one plain batched forward pass of the ticket's n removal variants.

    "inspection" is what the Heads page and the core of the Interpretation page need: both blocks from
    scratch with the PyTorch check, deletion and <unk> counterfactuals, rollout and gradient x input.
    `interpret_ticket` adds ERASER, integrated gradients (32 steps) and 200 random-ranking draws.
    """
    from ticketnet.interpret import (
        attention_rollout,
        counterfactual_batch,
        counterfactual_probs,
        gradient_x_input,
        interpret_ticket,
    )
    from ticketnet.lens.inspection import inspect_ticket

    model = router.model
    ids = torch.tensor(router.encode(text).ids)
    n = ids.numel()
    batch, is_pad = counterfactual_batch(ids, UNK_ID)
    removal, removal_pad = batch[1 : n + 1], is_pad[1 : n + 1]

    def forward() -> None:
        with torch.inference_mode():
            model(removal, removal_pad)

    def inspection() -> None:
        seen = inspect_ticket(router, text)
        counterfactual_probs(model, ids)
        attention_rollout(seen.patterns)
        gradient_x_input(model, ids, seen.predicted)

    t = side_by_side({"forward_of_removals": forward, "inspection": inspection,
                      "interpret_ticket": lambda: interpret_ticket(router, text, phrases=False)}, repeats=repeats)
    flops = forward_flops(model.config, n, n)
    return {"n": n, "seconds": t, "ratio_to_forward": t["inspection"] / t["forward_of_removals"],
            "interpret_ticket_ratio_to_forward": t["interpret_ticket"] / t["forward_of_removals"],
            "forward_gflops": flops / t["forward_of_removals"] / 1e9,
            "forward_fraction_of_matmul": flops / t["forward_of_removals"] / 1e9 / gflops}


def _forward_of(model, ids: torch.Tensor, rows: int):
    """One batched forward of `rows` copies of the ticket: the yardstick each intervention is read against."""
    batch = ids[None].expand(rows, -1).contiguous()
    no_pad = torch.zeros_like(batch, dtype=torch.bool)

    def forward() -> None:
        with torch.inference_mode():
            model(batch, no_pad)
    return forward


def six_phrase_ticket(rows: list[dict], router: Router, near: int = 30) -> str:
    """A valid ticket of exactly six phrases, the one whose length is closest to `near` tokens."""
    from ticketnet.interpret.interventions.phrases import split_phrases

    six = [r["text"] for r in rows if len(split_phrases(r["text"])) == 6]
    return min(six, key=lambda t: (abs(len(router.encode(t).ids) - near), t))


def interventions(router: Router, rows: list[dict], repeats: int, sizes: tuple[int, ...] = (30, 48)) -> dict:
    """The route interventions timed beside one batched forward of the same number of rows:
    edge knockout of one query row (n variants) and a head's full effect map (n² variants) in block 1 (block 2 is
    cheaper: only the changed row's share of the pooling moves) at each n; per-ticket head ablation (L·h variants),
    contrast patching (every head and residual patch, both directions) and phrase Shapley (six phrases: 2⁶
    coalitions) at the first n."""
    from ticketnet.interpret.interventions.ablation import head_ablation
    from ticketnet.interpret.interventions.knockout import edge_knockout, effect_map
    from ticketnet.interpret.interventions.patching import contrast_patching
    from ticketnet.interpret.interventions.phrases import split_phrases
    from ticketnet.interpret.interventions.shapley import exact_shapley

    model = router.model
    cfg = model.config

    def at(n: int, everything: bool) -> dict:
        ids = torch.tensor(router.encode(ticket_of_length(rows, n)).ids)
        fns = {"knockout_row": lambda: edge_knockout(model, ids, 0, 0, n // 2, 0),
               "forward_n_rows": _forward_of(model, ids, n),
               "effect_map": lambda: effect_map(model, ids, 0, 0, 0),
               "forward_n2_rows": _forward_of(model, ids, n * n)}
        if everything:
            edited = ids[3:]                                             # the edit: its first three tokens gone
            variants = 2 * (cfg.n_blocks * cfg.h + (cfg.n_blocks + 1) * edited.numel())
            text6 = six_phrase_ticket(rows, router, n)
            ids6 = torch.tensor(router.encode(text6).ids)
            phrases6 = split_phrases(text6, ids6.numel())
            fns.update({"head_ablation": lambda: head_ablation(model, ids, 0),
                        "forward_lh_rows": _forward_of(model, ids, cfg.n_blocks * cfg.h),
                        "patching": lambda: contrast_patching(model, ids, edited, 0),
                        "forward_patch_rows": _forward_of(model, ids, variants),
                        "phrase_shapley": lambda: exact_shapley(model, ids6, phrases6, 0),
                        "forward_64_rows": _forward_of(model, ids6, 2 ** len(phrases6))})
        t = side_by_side(fns, repeats=repeats)
        r = {"n": n, "seconds": t, "knockout_row_ratio": t["knockout_row"] / t["forward_n_rows"],
             "effect_map_ratio": t["effect_map"] / t["forward_n2_rows"]}
        if everything:
            r.update({"head_ablation_ratio": t["head_ablation"] / t["forward_lh_rows"],
                      "patching_variants": variants, "patching_ratio": t["patching"] / t["forward_patch_rows"],
                      "shapley_n": ids6.numel(), "shapley_ratio": t["phrase_shapley"] / t["forward_64_rows"]})
        return r

    return {f"n{n}": at(n, n == sizes[0]) for n in sizes}


def split_interpretation(router: Router, rows: list[dict], sizes: tuple[int, ...]) -> dict:
    """Whole-split interpretation time at several sizes, to show it grows linearly."""
    from ticketnet.interpret import interpret_split

    out = {}
    for size in sizes:
        t0 = time.perf_counter()
        interpret_split(router, rows[:size])
        out[str(size)] = time.perf_counter() - t0
    biggest, smallest = str(max(sizes)), str(min(sizes))
    out["tickets_per_second"] = max(sizes) / out[biggest]
    # 1.0 when the time grows linearly with the tickets: the largest run's time per ticket over the smallest's
    out["linearity"] = (out[biggest] / max(sizes)) / (out[smallest] / min(sizes))
    if max(sizes) == SPLIT_TICKETS:
        out["ratio_to_target"] = out[biggest] / SPLIT_TARGET_S
    return out


SPLIT_TICKETS, SPLIT_TARGET_S = 1_500, 20.0     # the valid split, and its target time


def efficient_attention(quick: bool) -> dict | None:
    try:
        from ticketnet.lesson.cost import bench_efficient
    except ImportError:
        return None
    return bench_efficient(n=2048 if quick else 8192)
