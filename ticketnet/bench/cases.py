"""The benchmark cases behind `python -m ticketnet bench`: each returns measured numbers and side-by-side ratios."""

from __future__ import annotations

from collections.abc import Callable

import torch

from ticketnet._runtime.timing import matmul_gflops
from ticketnet.bench.model_cases import (
    SPLIT_TARGET_S,
    SPLIT_TICKETS,
    efficient_attention,
    forward_flops,
    inspection_vs_forward,
    interventions,
    removal_vs_captum,
    shared_replacement_flops,
    six_phrase_ticket,
    split_interpretation,
)
from ticketnet.bench.table_cases import (
    COMPARE_TARGET_S,
    POLICY_TARGET_S,
    compare_summary,
    policy_redraw,
    predict_throughput,
    shifted_table,
    ticket_map,
)
from ticketnet.bench.tickets import ticket_of_length
from ticketnet.data.tickets import load_split
from ticketnet.paths import data_dir
from ticketnet.router import Router

# The cases live in model_cases and table_cases (the dashboard's in ticketnet.bench.ui); here, the whole run.
__all__ = ["run_all", "router_summary", "COMPARE_TARGET_S", "POLICY_TARGET_S", "SPLIT_TARGET_S", "SPLIT_TICKETS",
           "compare_summary", "efficient_attention", "forward_flops", "inspection_vs_forward", "interventions",
           "policy_redraw", "predict_throughput", "removal_vs_captum", "shared_replacement_flops", "shifted_table",
           "six_phrase_ticket", "split_interpretation", "ticket_map", "ticket_of_length"]


def router_summary(router: Router) -> dict:
    """The timed router's training seed and recorded scores per split (`router.json`), so a report names its router."""
    keep = ("n", "accuracy", "hard_accuracy", "macro_f1", "ece")
    metrics = router.meta.get("metrics", {})
    return {"seed": router.meta.get("train", {}).get("seed"),
            "metrics": {split: {k: m[k] for k in keep if k in m} for split, m in metrics.items()}}


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
            f"{100 * r['ours_fraction_of_matmul']:.0f} % of matmul "
            f"(at 100 %: {r['ceiling_speedup_vs_captum_default']:.1f}x Captum defaults)")
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
        line = (f"n={r['n']:3d} edge knockout of one row {t['knockout_row']:.1f} ms = "
                f"{r['knockout_row_ratio']:.1f}x one forward of its {r['n']} rows; effect map of one head "
                f"{t['effect_map']:.0f} ms = "
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
    from ticketnet.bench.ui import (
        cold_starts,
        heads_drawn,
        lesson_first_open,
        policy_sliders,
        typed_first_open,
        warm_interaction,
    )

    f = typed_first_open(repeats=1 if quick else 3)
    report["typed_first_open"] = f
    lo, hi = min(f["sizes"]), max(f["sizes"])
    log("first open on a typed ticket never seen (server side): " + "; ".join(
        f"{page} {f[page][f'n{lo}_s']:.2f} s at {lo} tokens, {f[page][f'n{hi}_s']:.2f} s at {hi} "
        f"({f[page][f'ratio_n{hi}_to_n{lo}']:.1f}x)"
        + (f", {f[page]['ratio_to_target']:.2f}x the {f[page]['target_s']:.0f} s target"
           if "target_s" in f[page] else "")
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
            f"{name} {v['cpu_s_median']:.2f} s CPU / {v['wall_s_median']:.2f} s"
            for name, v in sc["per_action"].items())
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
            f"test ({es['mean_pieces']:.0f} pieces a ticket; "
            f"target {es['targets']['predict_tickets_per_second']:.0f}); "
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
