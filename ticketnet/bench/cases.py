"""The benchmark cases behind `python -m ticketnet bench`: each returns measured numbers and side-by-side ratios."""

from __future__ import annotations

import csv
import io
import resource
import time
from collections.abc import Callable

import torch

from ticketnet._runtime.timing import matmul_gflops, side_by_side
from ticketnet.bench.tickets import ticket_of_length
from ticketnet.data.text import UNK_ID
from ticketnet.data.tickets import load_split
from ticketnet.paths import data_dir
from ticketnet.router import Router


def router_summary(router: Router) -> dict:
    """The timed router's training seed and recorded scores per split (`router.json`), so a report names its router."""
    keep = ("n", "accuracy", "hard_accuracy", "macro_f1", "ece")
    metrics = router.meta.get("metrics", {})
    return {"seed": router.meta.get("train", {}).get("seed"),
            "metrics": {split: {k: m[k] for k in keep if k in m} for split, m in metrics.items()}}


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


def predict_throughput(router: Router, rows: list[dict], n_rows: int) -> dict:
    """Tickets/s of the streaming predict on n_rows tickets, and the process's peak memory growth."""
    from ticketnet.predict import predict_stream

    src = io.StringIO()
    w = csv.writer(src)
    w.writerow(["ticket_id", "text"])
    for i in range(n_rows):
        w.writerow([f"X-{i}", rows[i % len(rows)]["text"]])
    src.seek(0)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    stats = predict_stream(router, src, io.StringIO(), "<bench>")
    seconds = time.perf_counter() - t0
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    return {"tickets": stats["tickets"], "seconds": seconds, "tickets_per_second": stats["tickets"] / seconds,
            "peak_rss_growth_mb": grew / 1024}


POLICY_TARGET_S = 0.3           # a Routing policy slider move redraws in at most 300 ms server side


def policy_redraw(weights, data, repeats: int, resamples: int = 1000) -> dict:
    """The library part of a Routing policy slider move on the router's stored valid and test predictions: fit the
    team thresholds (precision 0.98) and the conformal rule (LAC and APS at alpha 0.05) on valid, then score them
    on test (bootstrap report, set report) with its risk–coverage curve and references. Median seconds per part
    and in all, against the 300 ms target."""
    from ticketnet.card import load_card
    from ticketnet.policy import (
        fit_conformal, fit_team_thresholds, reference_curves, risk_coverage, set_report, split_scores,
        threshold_report,
    )

    teams = load_card(weights).teams
    t0 = time.perf_counter()
    valid, test = split_scores(weights, "valid", data), split_scores(weights, "test", data)
    load_s = time.perf_counter() - t0

    def thresholds() -> dict:
        fit = fit_team_thresholds(valid.confidence, valid.predicted, valid.correct, teams, precision=0.98)
        return threshold_report(fit, test.confidence, test.predicted, test.correct, teams, resamples=resamples)

    def conformal(method: str) -> dict:
        rule = fit_conformal(valid.probs, valid.y, 0.05, method)
        return set_report(rule.sets(test.probs), test.y)

    def curves() -> tuple:
        return risk_coverage(test.confidence, test.correct), reference_curves(test.correct)

    parts = {"thresholds": thresholds, "conformal_lac": lambda: conformal("lac"),
             "conformal_aps": lambda: conformal("aps"), "curves": curves}
    each = list(parts.values())
    parts["all"] = lambda: [fn() for fn in each]
    seconds = side_by_side(parts, repeats=repeats)
    return {"valid": int(valid.y.size), "test": int(test.y.size), "source": valid.source, "resamples": resamples,
            "load_s": load_s, "seconds": seconds, "target_s": POLICY_TARGET_S,
            "ratio_to_target": seconds["all"] / POLICY_TARGET_S}


def ticket_map(router: Router, valid: list[dict], train: list[dict], sizes: tuple[int, ...],
               lookups: int = 20) -> dict:
    """The ticket map's compute time (pooled vectors, PCA, seeded UMAP) at each size (valid's first tickets, or a
    seeded sample of train for more), UMAP's first call in the process (numba compiling) apart, and the exact
    neighbour lookup of single tickets over every training ticket."""
    import os
    import statistics

    import numpy as np

    from ticketnet.ticketmap import nearest, pooled_of_texts, project, seeded_sample

    workers = os.cpu_count() or 1
    warm = np.random.default_rng(0).normal(size=(200, router.model.config.d)).astype(np.float32)
    project(warm, "PCA")                                    # scikit-learn imported before the clock starts
    t0 = time.perf_counter()
    project(warm, "UMAP")
    out: dict = {"umap_first_call_200_s": time.perf_counter() - t0, "workers": workers}
    for n in sizes:
        rows = valid[:n] if n <= len(valid) else [train[i] for i in seeded_sample(len(train), n)]
        t0 = time.perf_counter()
        vectors, _ = pooled_of_texts(router, [r["text"] for r in rows], workers=workers)
        t1 = time.perf_counter()
        project(vectors, "PCA")
        t2 = time.perf_counter()
        project(vectors, "UMAP")
        t3 = time.perf_counter()
        out[str(len(rows))] = {"pooled_s": t1 - t0, "pca_s": t2 - t1, "umap_s": t3 - t2, "total_s": t3 - t0}
    t0 = time.perf_counter()
    train_vectors, _ = pooled_of_texts(router, [r["text"] for r in train], workers=workers)
    pooled_train = time.perf_counter() - t0
    queries, _ = pooled_of_texts(router, [r["text"] for r in valid[:lookups]])
    times = []
    for q in queries:
        t0 = time.perf_counter()
        nearest(train_vectors, q)
        times.append(time.perf_counter() - t0)
    out["neighbours"] = {"train_tickets": len(train), "pooled_train_s": pooled_train,
                         "lookup_ms_median": 1e3 * statistics.median(times), "lookup_ms_max": 1e3 * max(times),
                         "lookups": len(times)}
    return out


def efficient_attention(quick: bool) -> dict | None:
    try:
        from ticketnet.lesson.cost import bench_efficient
    except ImportError:
        return None
    return bench_efficient(n=2048 if quick else 8192)


COMPARE_TARGET_S = 2.0                          # the Compare page's summary of two 1,500-ticket tables


def shifted_table(table, teams, share: float = 0.1, seed: int = 0):
    """`table` with a seeded `share` of its tickets' predictions moved to another team (that team's and the old
    one's probabilities swapped, so the prediction stays the most probable): a stand-in second router for timing."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = table.copy()
    teams = list(teams)
    picked = rng.choice(len(out), size=round(share * len(out)), replace=False)
    for i in picked:
        old = out.at[i, "predicted"]
        new = teams[(teams.index(old) + 1 + int(rng.integers(len(teams) - 1))) % len(teams)]
        out.at[i, f"p_{old}"], out.at[i, f"p_{new}"] = out.at[i, f"p_{new}"], out.at[i, f"p_{old}"]
        out.at[i, "predicted"] = new
    out["correct"] = out["team"].eq(out["predicted"])
    return out, len(picked)


def compare_summary(repeats: int, split: str = "test", resamples: int = 2000) -> dict:
    """The whole comparison of two routed tables of `split` as the Compare page computes it (stored predictions
    read, compare_tables with `resamples` resamples, flip_table). The second table is the shipped router's own with
    a seeded 10 % of its predictions moved to another team (not a second router: flips and intervals are real
    computations on it, its figures are not a retrain's)."""
    import statistics

    from ticketnet.compare import compare_tables, flip_table, routed_split, router_teams
    from ticketnet.paths import router_dir

    folder = router_dir()
    teams = router_teams(folder)
    shifted, changed = shifted_table(routed_split(folder, split), teams)
    times, cpu, result, first = [], [], None, None
    for _ in range(max(1, repeats) + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        a = routed_split(folder, split)
        result = compare_tables(a, shifted, teams, teams, resamples=resamples)
        flips = flip_table(a, shifted)
        if first is None:                   # the first call imports scikit-learn and statsmodels: once per server
            first = time.perf_counter() - t0
        else:
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)    # on a shared machine the wall time also counts others' work
    return {"tickets": result["n"], "resamples": resamples, "changed_predictions": changed, "flips": len(flips),
            "first_s": first,
            "seconds": statistics.median(times), "seconds_max": max(times), "repeats": len(times),
            "cpu_seconds": statistics.median(cpu),
            "target_s": COMPARE_TARGET_S, "ratio_to_target": statistics.median(times) / COMPARE_TARGET_S,
            "second_table": "the shipped router's table with a seeded 10 % of predictions moved to another team"}


def run_all(quick: bool = False, log: Callable[[str], None] = print) -> dict:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    router = Router.load()
    valid = load_split(data_dir() / "valid.csv")
    repeats = 3 if quick else 7
    report: dict = {"router": router_summary(router)}
    log("router (seed " + str(report["router"]["seed"]) + "): " + ", ".join(
        f"{split} accuracy {m['accuracy']:.3f}" for split, m in report["router"]["metrics"].items()))
    report["matmul_gflops"] = g = matmul_gflops()
    log(f"matmul throughput: {g:.1f} GFLOP/s (float32, 1024x1024)")
    for n in (30, 128):
        text = ticket_of_length(valid, n)
        r = removal_vs_captum(router, text, repeats, g)
        report[f"removal_n{n}"] = r
        log(f"n={n:3d} batched <unk> removal vs Captum FeatureAblation: {r['speedup_vs_captum_default']:.1f}x "
            f"(defaults), {r['speedup_vs_captum_perturbations_per_eval_n']:.2f}x (perturbations_per_eval=n), "
            f"{r['speedup_vs_plain_batched_forward']:.2f}x one plain batched forward; "
            f"same numbers within {r['max_abs_difference']:.1e}; {r['ours_gflops']:.0f} GFLOP/s = "
            f"{100 * r['ours_fraction_of_matmul']:.0f} % of matmul (at 100 %: {r['ceiling_speedup_vs_captum_default']:.1f}x "
            f"Captum defaults)")
        i = inspection_vs_forward(router, text, repeats, g)
        report[f"inspection_n{n}"] = i
        log(f"n={n:3d} inspection {i['seconds']['inspection'] * 1e3:.1f} ms = {i['ratio_to_forward']:.1f}x one "
            f"forward of its removals ({i['seconds']['forward_of_removals'] * 1e3:.1f} ms, {i['forward_gflops']:.1f} "
            f"GFLOP/s = {100 * i['forward_fraction_of_matmul']:.0f} % of matmul); everything incl. ERASER and IG "
            f"{i['seconds']['interpret_ticket'] * 1e3:.0f} ms = {i['interpret_ticket_ratio_to_forward']:.1f}x")
    iv = interventions(router, valid, repeats)
    report["interventions"] = iv
    for r in iv.values():
        t = {k: v * 1e3 for k, v in r["seconds"].items()}
        line = (f"n={r['n']:3d} edge knockout of one row {t['knockout_row']:.1f} ms = {r['knockout_row_ratio']:.1f}x one "
                f"forward of its {r['n']} rows; effect map of one head {t['effect_map']:.0f} ms = "
                f"{r['effect_map_ratio']:.2f}x one forward of its {r['n'] ** 2} rows")
        if "head_ablation" in t:
            line += (f"; head ablation {t['head_ablation']:.1f} ms = {r['head_ablation_ratio']:.1f}x; patching "
                     f"{t['patching']:.1f} ms = {r['patching_ratio']:.1f}x one forward of its {r['patching_variants']} "
                     f"rows; phrase Shapley (6 phrases, n={r['shapley_n']}) {t['phrase_shapley']:.1f} ms = "
                     f"{r['shapley_ratio']:.1f}x one forward of its 64 rows")
        log(line)
    sizes = (100, 200) if quick else (375, 750, 1500)
    s = split_interpretation(router, valid, sizes)
    report["split_interpretation_seconds"] = s
    log("whole-split interpretation: " + ", ".join(f"{k} tickets {v:.1f} s" for k, v in s.items() if k.isdigit())
        + f" ({s['tickets_per_second']:.0f} tickets/s; time per ticket {s['linearity']:.2f}x the smallest run's"
        + (f"; {s['ratio_to_target']:.2f}x the {SPLIT_TARGET_S:.0f} s target" if "ratio_to_target" in s else "") + ")")
    p = predict_throughput(router, valid, 5_000 if quick else 100_000)
    report["predict"] = p
    log(f"predict: {p['tickets']} tickets in {p['seconds']:.1f} s = {p['tickets_per_second']:.0f} tickets/s, "
        f"peak memory grew {p['peak_rss_growth_mb']:.0f} MB")
    cmp = compare_summary(3 if quick else 7)
    report["compare_summary"] = cmp
    log(f"compare two routed tables of {cmp['tickets']:,} tickets ({cmp['resamples']:,} paired resamples, "
        f"{cmp['flips']} flips): {cmp['seconds']:.2f} s (max {cmp['seconds_max']:.2f}; first call, with its imports, "
        f"{cmp['first_s']:.2f} s; CPU {cmp['cpu_seconds']:.2f} s), {cmp['ratio_to_target']:.2f}x "
        f"the {cmp['target_s']:.0f} s target; B is {cmp['second_table']}")
    from ticketnet.paths import weights_path

    pr = policy_redraw(weights_path(), data_dir(), 3 if quick else 11)
    report["policy_redraw"] = pr
    log(f"routing policy redraw (fit on {pr['valid']:,} valid, score on {pr['test']:,} test, {pr['resamples']} "
        f"bootstrap resamples): {pr['seconds']['all'] * 1e3:.0f} ms = {pr['ratio_to_target']:.2f}x the "
        f"{pr['target_s'] * 1e3:.0f} ms target (" + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in
                                                            pr["seconds"].items() if k != "all") + ")")
    from ticketnet.bench.ui import (cold_starts, heads_drawn, lesson_first_open, policy_sliders, typed_first_open,
                                    warm_interaction)

    f = typed_first_open(repeats=1 if quick else 3)
    report["typed_first_open"] = f
    lo, hi = min(f["sizes"]), max(f["sizes"])
    log("first open on a typed ticket never seen (server side): " + "; ".join(
        f"{page} {f[page][f'n{lo}_s']:.2f} s at {lo} tokens, {f[page][f'n{hi}_s']:.2f} s at {hi} "
        f"({f[page][f'ratio_n{hi}_to_n{lo}']:.1f}x)"
        + (f", {f[page]['ratio_to_target']:.2f}x the {f[page]['target_s']:.0f} s target" if "target_s" in f[page] else "")
        for page in ("heads", "interpretation")) + f" (median of {f['repeats']})")
    hd = heads_drawn(1 if quick else 3)
    report["heads_drawn"] = hd
    if "skipped" not in hd:
        log(f"Heads on a {hd['words']}-word typed ticket, opened to drawn in Chromium: {hd['median_s']:.2f} s "
            f"(median of {hd['repeats']}) = {hd['ratio_to_target']:.2f}x the {hd['target_s']:.0f} s target")
    lesson = lesson_first_open(1 if quick else 3)
    report["lesson_first_open"] = lesson
    log(f"'Why √d_k' opened with nothing kept in the process: {lesson['stored_s']:.2f} s with the table on disk "
        f"({lesson['stored_ratio_to_target']:.2f}x the {lesson['target_s']:.0f} s target), {lesson['drawn_s']:.1f} s "
        f"drawing it ({lesson['ratio_drawn_to_stored']:.0f}x; median of {lesson['repeats']})")

    w = warm_interaction(5 if quick else 20)
    report["warm_interaction"] = w
    log(f"warm rerun on the Heads page: query row {w['query_row_ms_median']:.0f} ms (max {w['query_row_ms_max']:.0f}), "
        f"block {w['block_ms_median']:.0f} ms (max {w['block_ms_max']:.0f}; first visit to block 2 "
        f"{w['block_first_ms']:.0f}), no model call; Interpretation target "
        + ", ".join(f"{k} {v:.0f}" for k, v in w.items() if k.startswith("target") and isinstance(v, float)))
    from ticketnet.bench.load.run import server_cost

    sc = server_cost(loops=1 if quick else 3)
    report["server_cost_per_action"] = sc
    log(f"server cost per action, one session on a real server ({sc['loops']} loops on fresh tickets; load average "
        f"{sc['load_average_before'][0]:.2f}): " + ", ".join(
            f"{name} {v['cpu_s_median']:.2f} s CPU / {v['wall_s_median']:.2f} s" for name, v in sc["per_action"].items())
        + f"; median action {sc['median_action_cpu_s']:.3f} s CPU" + ("" if sc["corpus"] else " (no corpus scan: "
                                                                      "Corpus not timed; make corpus-demo)"))
    ps = policy_sliders(5 if quick else 20)
    report["policy_sliders"] = ps
    log(f"Routing policy rerun after a slider move: precision {ps['precision_ms_median']:.0f} ms (max "
        f"{ps['precision_ms_max']:.0f}), α {ps['alpha_ms_median']:.0f} (max {ps['alpha_ms_max']:.0f}), method "
        f"{ps['method_ms_median']:.0f} (max {ps['method_ms_max']:.0f}) against {ps['target_ms']:.0f} ms; a new axis "
        f"range's chart template {ps['template_ms_max']:.0f} ms, the page's first open {ps['first_open_ms']:.0f} ms")
    import tempfile
    from pathlib import Path

    from ticketnet.bench.ui import compare_open, retrain_router

    with tempfile.TemporaryDirectory(prefix="ticketnet-bench-compare-") as work:
        cp = compare_open(retrain_router(Path(work), epochs=1 if quick else 4), repeats=1 if quick else 3)
    report["compare_page"] = cp
    log(f"Compare page, two routers with stored predictions (server side): open on test {cp['open_s']:.2f} s "
        f"({cp['open_ratio_to_target']:.2f}x the {cp['target_s']['open']:.0f} s target; rerun {cp['rerun_s']:.2f} s), "
        f"a flip side by side {cp['flip_s']:.2f} s, per-head divergence on valid {cp['divergence_s']:.1f} s "
        f"({cp['divergence_ratio_to_target']:.2f}x the {cp['target_s']['divergence']:.0f} s target; median of "
        f"{cp['repeats']})")
    c = cold_starts(1, launchers=("python -m dashboard",)) if quick else cold_starts(3)
    report["cold_start"] = c
    log("cold start: " + (c["skipped"] if "skipped" in c else "; ".join(
        f"{name} drawn after {v['page_drawn_s']:.1f} s (healthy {v['server_healthy_s']:.1f} s)"
        for name, v in c.items() if isinstance(v, dict) and "page_drawn_s" in v)
        + (" ; python -m dashboard / streamlit run: " + ", ".join(f"{k} {v:.2f}" for k, v in c["ratio"].items())
           if "ratio" in c else "") + f" (median of {c['repeats']})"))
    train = load_split(data_dir() / "train.csv")
    tm = ticket_map(router, valid, train[:10_000] if quick else train, (1_500,) if quick else (1_500, 20_000))
    report["ticket_map"] = tm
    log("ticket map: " + "; ".join(f"{k} tickets {v['total_s']:.1f} s (pooled {v['pooled_s']:.1f}, PCA "
                                   f"{v['pca_s']:.2f}, UMAP {v['umap_s']:.1f})" for k, v in tm.items() if k.isdigit())
        + f"; UMAP's first call {tm['umap_first_call_200_s']:.1f} s (numba compiling); nearest 10 of "
          f"{tm['neighbours']['train_tickets']:,} training tickets {tm['neighbours']['lookup_ms_median']:.1f} ms "
          f"(their vectors {tm['neighbours']['pooled_train_s']:.1f} s, once)")
    from ticketnet.bench.ui import map_redraw

    mr = map_redraw(3 if quick else 5)
    report["map_redraw"] = mr
    log(f"Ticket map page at {mr['points']:,} points: redraw {mr['redraw_s_median']:.2f} s server side (max "
        f"{mr['redraw_s_max']:.2f}; {mr['ratio_to_target']:.2f}x the 1 s target), box selection listing "
        f"{mr['picked_rows']:,} tickets {mr['box_s_median']:.2f} s; first open {mr['first_open_s']:.1f} s")
    from ticketnet.bench.encoder import encoder_speed
    from ticketnet.paths import weights_dir

    shipped_encoder = weights_dir() / "larkfield-minilm"
    if (shipped_encoder / "encoder.safetensors").is_file():
        es = encoder_speed(shipped_encoder, valid, load_split(data_dir() / "test.csv"), 3 if quick else 7)
        report["encoder"] = es
        log(f"encoder router ({shipped_encoder.name}): predict {es['predict_tickets_per_second']:.0f} tickets/s on "
            f"test ({es['mean_pieces']:.0f} pieces a ticket; target {es['targets']['predict_tickets_per_second']:.0f}); "
            f"one ticket's inspection {es['inspection_s']:.3f} s (target {es['targets']['inspection_s']}); every word "
            f"of a 40-word ticket removed {es['removal_n40_s']:.3f} s = {es['removal_ratio_to_one_forward']:.0f}x one "
            f"forward (target {es['targets']['removal_n40_s']}), removed and replaced with rollout "
            f"{es['word_effects_n40_s']:.3f} s; loading it grew RSS by {es['router_rss_mb']:.0f} MB")
    e = efficient_attention(quick)
    if e is not None:
        report["efficient_attention"] = e
        log(f"memory-efficient attention at n={e['n']}: {e['ms_blocked']:.0f} ms against SDPA's {e['ms_sdpa']:.0f} ms "
            f"(time ratio {e['time_ratio']:.2f}); peak memory {e['peak_mb_blocked']:.0f} MB against "
            f"{e['peak_mb_sdpa']:.0f} MB (SDPA) and {e['peak_mb_readable']:.0f} MB (readable); "
            f"{e['gflops_blocked']:.0f} GFLOP/s = {100 * e['matmul_fraction']:.0f} % of matmul; "
            f"largest difference from attention() {e['max_diff_vs_readable']:.1e}")
    return report
