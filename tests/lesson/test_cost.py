"""Sizes and the variants calculator to the byte; the measuring worker on small n."""

import math

import pytest

from ticketnet.lesson import cost


def test_score_matrix_sizes_match_the_lesson():
    df = cost.score_sizes()
    mb = dict(zip(df["n"], df["score matrix (MB)"]))
    assert mb[128] == 0.07 and mb[512] == 1.05 and mb[1024] == 4.19 and mb[2048] == 16.78
    assert mb[4096] == 67.11 and mb[8192] == 268.44
    assert dict(zip(df["n"], df["scores"]))[8192] == 67_108_864
    assert dict(zip(df["n"], df["Q, K, V (MB)"]))[8192] == pytest.approx(6.291, abs=1e-3)
    assert cost.score_matrix_bytes(120) == 57_600 and cost.score_matrix_bytes(120, heads=4) == 230_400
    assert cost.score_matrix_bytes(10, dtype_bytes=2, heads=3, batch=2, keys=5) == 600


def test_kv_cache_and_sharing():
    assert cost.kv_cache_bytes(8192, 32, 8, 128, 2) == 2 * 32 * 8 * 128 * 8192 * 2
    assert cost.kv_cache_bytes(8192, 32, 8, 128, 2, window=1024) == cost.kv_cache_bytes(1024, 32, 8, 128, 2)
    assert cost.kv_cache_bytes(100, 1, 1, 1, 1, batch=3, window=1000) == 600
    assert [cost.sharing_kind(32, k) for k in (32, 8, 1)] == ["MHA", "GQA", "MQA"]
    with pytest.raises(ValueError):
        cost.sharing_kind(32, 5)


def test_variant_costs():
    mha = cost.variant_costs(32, 32, 128, None, "bfloat16", 8192, 32)
    gqa = cost.variant_costs(32, 8, 128, None, "bfloat16", 8192, 32)
    mqa = cost.variant_costs(32, 1, 128, None, "bfloat16", 8192, 32)
    assert (mha["kind"], gqa["kind"], mqa["kind"]) == ("MHA", "GQA", "MQA")
    assert mha["kv_cache_bytes"] == 4 * gqa["kv_cache_bytes"] == 32 * mqa["kv_cache_bytes"] == 4_294_967_296
    assert gqa["cache_saving"] == pytest.approx(0.75) and mha["cache_saving"] == 0
    # sharing K/V heads does not touch the scores: one n × n matrix per query head in every variant
    assert mha["score_matrix_bytes_per_layer"] == gqa["score_matrix_bytes_per_layer"] == 32 * 8192 ** 2 * 2
    win = cost.variant_costs(32, 8, 128, 1024, "float32", 8192, 32)
    assert win["kind"] == "GQA + sliding window" and win["scores_per_head"] == 8192 * 1024
    assert win["kv_cache_bytes"] == 2 * 32 * 8 * 128 * 1024 * 4
    assert set(cost.ATTENTION_DESIGNS.columns) == {"design", "what it changes", "what it does not solve"}
    assert len(cost.ATTENTION_DESIGNS) == 5


def test_tiny_transformer_costs():
    t = cost.tiny_transformer_costs(120)
    assert t["d_k"] == 16 and t["scores_per_head"] == 14_400 and t["scores_per_block"] == 57_600
    assert t["score_bytes_per_block"] == 230_400 and t["parameters_per_block"] == 16_640
    assert cost.tiny_transformer_costs(30, h=1)["parameters_per_block"] == 16_640      # independent of h


def test_measure_small_n_in_a_worker():
    seen = []
    df, machine = cost.measure((64, 1024), repeats=1, threads=1, progress=lambda d, t, m: seen.append((d, t)))
    assert seen[-1] == (6, 6) and len(seen) == 6
    assert set(df["variant"]) == set(cost.VARIANT_NAMES) and len(df) == 6
    assert (df["ms"] > 0).all()
    assert df.loc[df["variant"] == cost.BLOCKED, "max_diff"].max() <= cost.EQUAL_TOLERANCE
    assert machine["cores"] >= 1 and machine["threads"] == 1 and machine["torch"]
    if machine["memory_method"] != "unavailable":
        peak = df.set_index(["n", "variant"])["peak_mb"]
        # the readable version holds scores and weights: two 1024 × 1024 float32 matrices (4.19 MB each);
        # the kernel's RSS counters are kept lazily, so small sizes read only to about a quarter of a MB
        assert peak[(1024, cost.READABLE)] == pytest.approx(2 * 1024 * 1024 * 4 / 1e6, rel=0.2)
        assert peak[(1024, cost.BLOCKED)] < 0.75 * peak[(1024, cost.READABLE)]
    assert "torch" in cost.machine_label(machine)


def test_bench_efficient_small():
    r = cost.bench_efficient(n=2048, repeats=1, threads=1)
    for key in ("time_ratio", "memory_ratio", "gflops_blocked", "matmul_gflops", "matmul_fraction",
                "max_diff_vs_readable", "peak_mb_blocked", "peak_mb_sdpa", "peak_mb_readable"):
        assert key in r
    assert r["max_diff_vs_readable"] <= cost.EQUAL_TOLERANCE
    assert r["time_ratio"] > 0 and math.isfinite(r["gflops_blocked"])
    if r["memory_method"] != "unavailable":
        assert r["peak_mb_blocked"] < r["peak_mb_readable"] / 4      # one 1024² tile against two 2048² matrices


def test_router_costs_count_the_weights_the_blocks_really_hold():
    from ticketnet.encoder.model import EncoderConfig, EncoderModel
    from ticketnet.lesson.cost import router_costs
    from ticketnet.nn.transformer import TinyConfig, TinyTransformer

    minilm = EncoderConfig("bert", 30522, 384, 12, 6, 1536, 512, 2, 1e-12, "gelu", 384, 0, "mean", 5)
    held = sum(p.numel() for p in EncoderModel(minilm).blocks.parameters())
    assert router_costs(50, 384, 12, 6, 1536)["block_weights"] == held == 10_646_784
    tiny = TinyTransformer(TinyConfig(100))
    assert router_costs(50, 64, 4, 2, 128)["block_weights"] == sum(p.numel() for p in tiny.blocks.parameters())
    c = router_costs(50, 384, 12, 6, 1536)
    assert c["scores_per_block"] == 12 * 50 * 50 and abs(c["gflop_per_ticket"] - 1.088) < 0.001
