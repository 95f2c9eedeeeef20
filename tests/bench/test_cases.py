"""The benchmark's parts: interleaved medians, the FLOP counts it reads throughput from, its tickets, and the
removal-vs-Captum case on the shipped router (same numbers, every field of the report)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.browser import require_chromium
from ticketnet._runtime.timing import side_by_side
from ticketnet.bench.cases import (
    forward_flops,
    removal_vs_captum,
    router_summary,
    shared_replacement_flops,
    ticket_of_length,
)
from ticketnet.data.text import tokenize
from ticketnet.interpret.methods.counterfactual import SHARED_MIN_N
from ticketnet.nn.transformer import TinyConfig

ROOT = Path(__file__).resolve().parents[2]

CFG = TinyConfig(vocab_size=100)                         # d = 64, d_ff = 128, 2 blocks: the shipped shape


def test_side_by_side_interleaves_rounds_and_reports_medians():
    order = []
    fns = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    t = side_by_side(fns, repeats=3, warmup=1)
    assert order == ["a", "b"] * 4                       # one warm-up round, then three interleaved rounds
    assert set(t) == {"a", "b"} and all(v >= 0 for v in t.values())


def test_forward_flops_by_hand():
    # One token, one block: q, k, v and output projections 4·64² multiply-adds, feed-forward 2·64·128,
    # scores and mixing 2·1·64; two flops each, two blocks, three rows.
    per_block = 2 * (4 * 64 * 64 + 2 * 64 * 128 + 2 * 64)
    assert forward_flops(CFG, n=1, batch=3) == 3 * 2 * per_block


def test_sharing_block1_saves_its_projections_and_attention():
    n = 128
    shared, plain = shared_replacement_flops(CFG, n), forward_flops(CFG, n, n + 1)   # the ticket and n variants
    block1_rest = (n + 1) * n * 2 * (64 * 64 + 2 * 64 * 128)   # per row: output projection and feed-forward only
    assert shared == pytest.approx(block1_rest + plain / 2)
    assert shared / plain == pytest.approx(0.70, abs=0.01)      # 2.30 of 3.25 GFLOP at n = 128


def test_ticket_of_length_is_a_real_ticket_cut_or_repeated(valid_rows):
    for n in (5, 30, 128):
        text = ticket_of_length(valid_rows, n)
        assert len(tokenize(text)) == n
    longest = max(valid_rows, key=lambda r: len(tokenize(r["text"])))
    assert ticket_of_length(valid_rows, 5).split() == tokenize(longest["text"])[:5]


def test_router_summary_names_the_timed_routers_seed_and_recorded_scores(router):
    s = router_summary(router)
    assert s["seed"] == router.meta["train"]["seed"]
    assert set(s["metrics"]) == set(router.meta["metrics"]) >= {"valid", "test"}
    for split, m in router.meta["metrics"].items():
        assert s["metrics"][split]["accuracy"] == m["accuracy"] and s["metrics"][split]["ece"] == m["ece"]
    assert s["metrics"]["test"]["hard_accuracy"] == router.meta["metrics"]["test"]["hard_accuracy"]
    for split in {"handwritten_dev", "handwritten"} & set(s["metrics"]):
        assert "hard_accuracy" not in s["metrics"][split]               # the hand-written sets have no hard slice
    assert "per_team" not in s["metrics"]["test"]                     # a summary, not the whole card


@pytest.mark.parametrize("n", [12, SHARED_MIN_N + 8])        # the plain batch, then block 1 shared
def test_removal_vs_captum_gives_captums_numbers(router, valid_rows, n):
    r = removal_vs_captum(router, ticket_of_length(valid_rows, n), repeats=1, gflops=100.0)
    assert r["n"] == n
    assert r["max_abs_difference"] <= 1e-6
    assert set(r["seconds"]) == {"ours", "plain", "captum_default", "captum_batched", "ours_deletion_and_replacement"}
    for key in ("speedup_vs_captum_default", "speedup_vs_captum_perturbations_per_eval_n",
                "speedup_vs_plain_batched_forward", "ours_gflops", "ceiling_speedup_vs_captum_default"):
        assert math.isfinite(r[key]) and r[key] > 0, key
    assert r["floor_seconds_at_matmul_rate"] == pytest.approx(r["ours_gflops"] * r["seconds"]["ours"] / 100.0)


@pytest.mark.browser
@pytest.mark.bench
def test_quick_bench_writes_every_measurement(artifacts, tmp_path):
    """`python -m ticketnet bench --quick` end to end (the cold start drives Chromium): exit 0, a table on stdout,
    and a JSON report with every case the speed table of docs/performance.md is read from."""
    require_chromium()
    out = tmp_path / "bench.json"
    env = {**os.environ, "TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data)}
    done = subprocess.run([sys.executable, "-m", "ticketnet", "bench", "--quick", "--out", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "batched <unk> removal vs Captum" in done.stdout and f"wrote {out}" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["quick"] is True and report["matmul_gflops"] > 0
    card = json.loads(artifacts.weights.with_name("router.json").read_text(encoding="utf-8"))
    assert report["router"]["metrics"]["test"]["accuracy"] == card["metrics"]["test"]["accuracy"]
    for n in (30, 128):
        assert report[f"removal_n{n}"]["max_abs_difference"] <= 1e-6
        assert report[f"inspection_n{n}"]["ratio_to_forward"] > 0
    assert report["predict"]["tickets"] == 5_000
    assert {"100", "200"} <= set(report["split_interpretation_seconds"])
    assert report["warm_interaction"]["block_first_ms"] > 0
    assert report["typed_first_open"]["heads"]["n256_s"] > 0 and report["typed_first_open"]["interpretation"]["n30_s"] > 0
    assert report["lesson_first_open"]["drawn_s"] > report["lesson_first_open"]["stored_s"] > 0
    compare = report["compare_page"]
    assert compare["open_s"] > compare["rerun_s"] > 0 and compare["divergence_s"] > 0 and compare["flip_s"] > 0
    cold = report["cold_start"]
    assert cold["repeats"] == 1
    for page, cached in (("tickets", "first"), ("tickets", "restart"), ("heads", "restart"),
                         ("tickets", "first, no predictions")):
        c = cold[f"python -m dashboard: {page}, {cached}"]
        assert c["page_drawn_s"] > c["server_healthy_s"] > 0
    assert report["efficient_attention"]["max_diff_vs_readable"] < 1e-5
    cost = report["server_cost_per_action"]["per_action"]
    # A fresh clone once measured 0.0 CPU seconds for every action: the idle rate subtracted from each was taken
    # while the new server still drew the lesson's table in the background; it is now taken once the server settles.
    assert cost["open Interpretation"]["wall_s_median"] > 0 and cost["open Heads"]["wall_s_median"] > 0
    assert cost["open Interpretation"]["cpu_s_median"] > 0 and all(v["cpu_s_median"] >= 0 for v in cost.values())



# -- the cases the whole bench (above, on demand) runs, each on one small input so the default suite covers them ----
def test_inspection_vs_forward_times_the_three_paths_against_the_forward(router, valid_rows):
    from ticketnet.bench.cases import inspection_vs_forward

    r = inspection_vs_forward(router, ticket_of_length(valid_rows, 12), repeats=1, gflops=100.0)
    assert r["n"] == 12 and set(r["seconds"]) == {"forward_of_removals", "inspection", "interpret_ticket"}
    assert r["ratio_to_forward"] == pytest.approx(r["seconds"]["inspection"] / r["seconds"]["forward_of_removals"])
    assert r["forward_fraction_of_matmul"] == pytest.approx(r["forward_gflops"] / 100.0)


def test_predict_throughput_streams_every_row(router, valid_rows):
    from ticketnet.bench.cases import predict_throughput

    r = predict_throughput(router, valid_rows[:7], 20)                 # rows reused round-robin past the 7th
    assert r["tickets"] == 20 and r["tickets_per_second"] == pytest.approx(20 / r["seconds"])
    assert r["peak_rss_growth_mb"] >= 0



def test_ticket_map_case_times_each_size_and_the_neighbour_lookup(router, valid_rows):
    from ticketnet.bench.cases import ticket_map

    r = ticket_map(router, valid_rows[:60], valid_rows[60:140], (40, 70), lookups=3)   # 70 > 60: sampled from train
    assert set(r["40"]) == set(r["70"]) == {"pooled_s", "pca_s", "umap_s", "total_s"}
    assert r["40"]["total_s"] == pytest.approx(r["40"]["pooled_s"] + r["40"]["pca_s"] + r["40"]["umap_s"])
    assert r["umap_first_call_200_s"] > 0
    assert r["neighbours"]["train_tickets"] == 80 and r["neighbours"]["lookups"] == 3
    assert r["neighbours"]["lookup_ms_max"] >= r["neighbours"]["lookup_ms_median"] > 0

def test_warm_interaction_times_reruns_without_an_exception():
    from ticketnet.bench.ui import warm_interaction

    r = warm_interaction(repeats=1)
    assert r["repeats"] == 1 and r["tokens"] > 0
    assert r["block_first_ms"] > 0 and r["query_row_ms_max"] >= r["query_row_ms_median"] > 0
    assert r["block_ms_median"] > 0


def test_compare_open_times_the_page_on_two_routers(larkfield_retrain):
    from ticketnet.bench.ui import compare_open

    r = compare_open(larkfield_retrain, repeats=1)
    assert r["repeats"] == 1 and r["open_s"] > r["rerun_s"] > 0 and r["flip_s"] > 0 and r["divergence_s"] > 0
    assert r["open_ratio_to_target"] == pytest.approx(r["open_s"] / r["target_s"]["open"])

def test_interventions_case_reports_every_timing_and_ratio(router, valid_rows):
    from ticketnet.bench.cases import interventions, six_phrase_ticket
    from ticketnet.interpret.interventions.phrases import split_phrases

    assert len(split_phrases(six_phrase_ticket(valid_rows, router))) == 6
    r = interventions(router, valid_rows, repeats=1, sizes=(12, 16))
    assert set(r) == {"n12", "n16"}
    assert {"knockout_row", "effect_map", "head_ablation", "patching", "phrase_shapley"} <= set(r["n12"]["seconds"])
    assert "patching" not in r["n16"]["seconds"]
    for key in ("knockout_row_ratio", "effect_map_ratio", "head_ablation_ratio", "patching_ratio", "shapley_ratio"):
        assert math.isfinite(r["n12"][key]) and r["n12"][key] > 0


def test_corpus_throughput_runs_the_worker_counts_mirrored_and_averages_them(tmp_path, monkeypatch):
    from ticketnet.bench import corpus

    order, rates = [], iter([60.0, 120.0, 110.0, 64.0])
    monkeypatch.setattr(corpus, "synth", lambda n, out: out)
    monkeypatch.setattr(corpus, "in_process", lambda path, n: {"tickets": n, "seconds": 1.0, "tickets_per_second": 62.0})

    def scan(path, out, level, workers, partition_size):
        order.append(workers)
        return {"tickets_per_second": next(rates), "compute_seconds": 1.0, "seconds": 1.0,
                "worker_peak_rss_mb": [100.0] * workers, "client_peak_rss_mb": 50.0}

    monkeypatch.setattr(corpus, "scan", scan)
    out = corpus.throughput(tmp_path, 2_000, lambda *_: None)
    assert order == [1, 2, 2, 1]                        # a steady drift hits both counts alike
    assert out["workers_1"]["tickets_per_second"] == 62.0 and out["workers_2"]["tickets_per_second"] == 115.0
    assert out["two_workers_vs_one"] == pytest.approx(115 / 62)
    assert out["one_worker_vs_in_process"] == pytest.approx(1.0)
    assert len(out["workers_2_runs"]) == 2


# -- issue 23's slow paths, timed server side -------------------------------------------------------------------
def test_typed_tickets_are_distinct_and_exactly_n_tokens():
    from ticketnet.bench.tickets import typed_tickets

    texts = typed_tickets(40, 4)
    assert len(set(texts)) == 4 and all(len(tokenize(t)) == 40 for t in texts)
    assert sorted(tokenize(texts[0])) == sorted(tokenize(texts[1]))       # the same ticket, read in another order


def test_typed_first_open_times_each_page_at_each_size():
    from ticketnet.bench.ui import typed_first_open

    r = typed_first_open(sizes=(6, 12), repeats=1, pages=("heads", "interpretation"))
    for page in ("heads", "interpretation"):
        assert r[page]["n12_s"] > 0 and r[page]["n6_s"] > 0
        assert r[page]["ratio_n12_to_n6"] == pytest.approx(r[page]["n12_s"] / r[page]["n6_s"])
    assert r["heads"]["ratio_to_target"] == pytest.approx(r["heads"]["n12_s"] / 2.0)
    assert "target_s" not in r["interpretation"]


def test_lesson_first_open_draws_once_then_reads_the_stored_table(monkeypatch):
    from ticketnet.bench.ui import lesson_first_open
    from ticketnet.lesson import explorers

    real, drawn = explorers.draw_scaling_table, []

    def small(*args):                                 # the page's five key sizes, drawn small
        drawn.append(args)
        return real(args[0], pairs=64, queries=16, keys=8, chunk=32)

    monkeypatch.setattr(explorers, "draw_scaling_table", small)
    before = os.environ["TICKETNET_CACHE"]
    r = lesson_first_open(repeats=2)
    assert len(drawn) == 2                            # once per round: the "stored" opens read the disk
    assert r["drawn_s"] > 0 and r["stored_s"] > 0 and r["target_s"] == 1.0
    assert r["ratio_drawn_to_stored"] == pytest.approx(r["drawn_s"] / r["stored_s"])
    assert os.environ["TICKETNET_CACHE"] == before
    from tests.conftest import app_test

    at = app_test().run()
    at.switch_page("../pages/formula.py").run()
    at.segmented_control(key="formula_section").set_value("Why √d_k").run()
    assert len(drawn) == 3                            # the small table was not kept for the page afterwards
    import streamlit as st

    st.cache_data.clear()                             # nor is it kept for the tests after this one
    explorers._kept_table.cache_clear()


def test_split_interpretation_reports_time_per_ticket_against_the_smallest_run(router, valid_rows):
    from ticketnet.bench.cases import split_interpretation

    r = split_interpretation(router, valid_rows, (2, 4))
    assert r["linearity"] == pytest.approx((r["4"] / 4) / (r["2"] / 2))
    assert r["tickets_per_second"] == pytest.approx(4 / r["4"]) and "ratio_to_target" not in r


def test_compare_summary_case_times_a_real_comparison(artifacts):
    from ticketnet.bench.cases import compare_summary, shifted_table
    from ticketnet.compare import routed_split, router_teams

    folder = artifacts.weights.parent
    table = routed_split(folder, "test")
    shifted, changed = shifted_table(table, router_teams(folder))
    assert changed == 150 and int((shifted["predicted"] != table["predicted"]).sum()) == 150
    probs = shifted[[f"p_{t}" for t in router_teams(folder)]].to_numpy()
    assert (probs.argmax(1) == shifted["predicted"].map(list(router_teams(folder)).index).to_numpy()).mean() > 0.99
    r = compare_summary(repeats=1, resamples=200)
    assert r["tickets"] == 1500 and r["flips"] == 150 and r["repeats"] == 1 and r["seconds"] > 0
