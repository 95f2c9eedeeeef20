"""What attention costs: score-matrix and KV-cache sizes, and time and peak memory measured on this machine."""

# Measurements run in a worker subprocess (`python -m ticketnet.lesson.cost`) for two reasons: the dashboard's own
# process is left alone, and peak memory can be read honestly. Peak memory is the growth of the worker's
# resident set during one call: the kernel's high-water mark (VmHWM) is reset by writing 5 to
# /proc/self/clear_refs just before the call and read from /proc/self/status just after, minus the resident
# size before it. For that to see every tensor, the worker runs with MALLOC_MMAP_THRESHOLD_=65536, so each
# allocation above 64 KiB gets fresh pages from the kernel and returns them when freed (otherwise glibc would
# serve a reused buffer from pages already resident, and a loop that recycles one tile would read as 0 MB).
# Allocations below 64 KiB are not counted, and the kernel updates its resident-set counters in batches, so
# readings are good to about a quarter of a megabyte: fine for the megabytes to gigabytes compared here. On systems without /proc (macOS, Windows) memory is
# reported as unavailable rather than guessed.

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from ticketnet.paths import ROOT

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float8": 1}
DEFAULT_NS = (128, 256, 512, 1024, 2048, 4096, 8192)
READABLE, SDPA, BLOCKED = "readable attention()", "F.scaled_dot_product_attention", "blocked_attention (ticketnet)"
VARIANT_NAMES = (READABLE, SDPA, BLOCKED)
EQUAL_TOLERANCE = 1e-5
MB = 1e6


# -- sizes ---------------------------------------------------------------------------------------------------
def score_matrix_bytes(n: int, dtype_bytes: int = 4, heads: int = 1, batch: int = 1, keys: int | None = None) -> int:
    """Bytes of the (batch, heads, n, keys) score matrix (keys defaults to n: self-attention)."""
    return batch * heads * n * (n if keys is None else keys) * dtype_bytes


def score_sizes(ns=DEFAULT_NS, dtype_bytes: int = 4, d_k: int = 64) -> pd.DataFrame:
    """One head, one sequence: n, scores (n²), score-matrix MB, and Q, K, V together (3·n·d_k) in MB."""
    return pd.DataFrame({"n": list(ns), "scores": [n * n for n in ns],
                         "score matrix (MB)": [round(score_matrix_bytes(n, dtype_bytes) / MB, 2) for n in ns],
                         "Q, K, V (MB)": [round(3 * n * d_k * dtype_bytes / MB, 3) for n in ns]})


def kv_cache_bytes(context: int, layers: int, kv_heads: int, head_dim: int, dtype_bytes: int = 2,
                   batch: int = 1, window: int | None = None) -> int:
    """Keys and values kept for generation: 2 · batch · layers · kv_heads · head_dim · kept tokens · bytes.

    A sliding window keeps only the last `window` tokens per layer.
    """
    kept = context if window is None else min(context, window)
    return 2 * batch * layers * kv_heads * head_dim * kept * dtype_bytes


def sharing_kind(query_heads: int, kv_heads: int) -> str:
    if kv_heads < 1 or query_heads < 1 or query_heads % kv_heads:
        raise ValueError(f"{query_heads} query heads cannot be shared evenly by {kv_heads} K/V heads")
    if kv_heads == query_heads:
        return "MHA"
    return "MQA" if kv_heads == 1 else "GQA"


# The note's table, in our own words: what each design changes, and what it leaves as it was.
ATTENTION_DESIGNS = pd.DataFrame([
    {"design": "Blocked exact attention (FlashAttention; ticketnet's blocked_attention)",
     "what it changes": "Computes the same softmax in tiles with a running maximum and sum, so the n × n matrix is "
                        "never stored; memory grows like n instead of n².",
     "what it does not solve": "The arithmetic is still n² · d_k per head; the speed depends on the kernel and the "
                               "hardware."},
    {"design": "MQA (multi-query)",
     "what it changes": "Every query head reads one shared K/V head: the KV cache shrinks by the number of heads.",
     "what it does not solve": "Scores are still one n × n matrix per query head; capacity or quality may drop and "
                               "must be checked."},
    {"design": "GQA (grouped-query)",
     "what it changes": "Groups of query heads share a K/V head: a smaller cache, between MHA and MQA.",
     "what it does not solve": "Same scoring function and the same n² scores per query head: a cache/quality "
                               "trade-off, nothing more."},
    {"design": "Sliding window / sparse",
     "what it changes": "Each query reads only nearby (or selected) keys: scores and cache grow with the window.",
     "what it does not solve": "Tokens beyond the window are reachable only through several layers."},
    {"design": "Linear / kernel attention",
     "what it changes": "Reorders or approximates the weighted sum so the cost grows like n.",
     "what it does not solve": "It is not softmax attention: normalisation, numerics and quality can differ."},
])


def variant_costs(query_heads: int = 32, kv_heads: int = 8, head_dim: int = 128, window: int | None = None,
                  dtype: str = "bfloat16", context: int = 8192, layers: int = 32, batch: int = 1) -> dict:
    """KV-cache memory and score-matrix size of one attention configuration, against the same model with MHA."""
    kind = sharing_kind(query_heads, kv_heads)
    b = DTYPE_BYTES[dtype]
    cache = kv_cache_bytes(context, layers, kv_heads, head_dim, b, batch, window)
    mha_cache = kv_cache_bytes(context, layers, query_heads, head_dim, b, batch, None)
    keys = context if window is None else min(context, window)
    scores = score_matrix_bytes(context, b, query_heads, batch, keys)
    return {"kind": kind + (" + sliding window" if window is not None and window < context else ""),
            "kv_cache_bytes": cache, "mha_kv_cache_bytes": mha_cache, "cache_saving": 1 - cache / mha_cache,
            "score_matrix_bytes_per_layer": scores, "scores_per_head": context * keys,
            "query_heads_per_kv_head": query_heads // kv_heads}


def tiny_transformer_costs(n: int, d: int = 64, h: int = 4, n_blocks: int = 2, dtype_bytes: int = 4) -> dict:
    """The router's own attention for one ticket of n tokens: d_k, scores, bytes, and 4d² + 4d parameters."""
    from ticketnet.lesson.explorers import attention_parameters

    per_block = score_matrix_bytes(n, dtype_bytes, heads=h)
    return {"d_k": d // h, "scores_per_head": n * n, "scores_per_block": h * n * n,
            "score_bytes_per_block": per_block, "score_bytes_all_blocks": n_blocks * per_block,
            "parameters_per_block": attention_parameters(d), "parameters_formula": "4d² + 4d"}


# -- measuring -----------------------------------------------------------------------------------------------
def machine() -> dict:
    from ticketnet._runtime.timing import machine as process

    return {**process(),
            "memory_method": "RSS high-water mark" if Path("/proc/self/clear_refs").exists() else "unavailable"}


def machine_label(m: dict) -> str:
    return f"{m['cores']} cores · {m['threads']} torch threads · torch {m['torch']} · {m['processor']}"


def _worker_env() -> dict:
    env = dict(os.environ)
    env["MALLOC_MMAP_THRESHOLD_"] = "65536"            # every tensor above 64 KiB: fresh pages, returned on free
    root = str(ROOT)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run_worker(args: list[str], on_line: Callable[[dict], None] | None = None, timeout: float = 900) -> list[dict]:
    cmd = [sys.executable, "-m", "ticketnet.lesson.cost", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_worker_env())
    out = []
    try:
        for line in proc.stdout:
            if line.startswith("{"):
                rec = json.loads(line)
                out.append(rec)
                if on_line is not None:
                    on_line(rec)
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    if proc.returncode != 0:
        err = proc.stderr.read().strip().splitlines()
        raise RuntimeError(f"the measuring process failed: {err[-1] if err else proc.returncode}")
    return out


def measure(ns=DEFAULT_NS, repeats: int = 3, d_k: int = 64, threads: int | None = None,
            progress: Callable[[int, int, str], None] | None = None) -> tuple[pd.DataFrame, dict]:
    """Time (median of `repeats`, interleaved) and peak memory of the three implementations for each n.

    One head, batch 1, float32. Returns a table (n, variant, ms, peak_mb, max_diff: largest |out − readable|)
    and the machine it ran on. `progress(done, total, message)` is called after every measurement.
    """
    import torch

    ns = [int(n) for n in ns]
    threads = threads or torch.get_num_threads()
    total = len(ns) * len(VARIANT_NAMES)
    done = 0
    info: dict = {}

    def on_line(rec: dict) -> None:
        nonlocal done
        if rec.get("kind") == "machine":
            info.update(rec["machine"])
            return
        done += 1
        if progress is not None:
            progress(done, total, f"n = {rec['n']:,}: {rec['variant']} {rec['ms']:.2f} ms")

    recs = _run_worker(["measure", "--ns", ",".join(map(str, ns)), "--repeats", str(repeats), "--d-k", str(d_k),
                        "--threads", str(threads)], on_line)
    rows = [r for r in recs if r.get("kind") == "point"]
    df = pd.DataFrame(rows, columns=["n", "variant", "ms", "peak_mb", "max_diff"])
    return df, info


def bench_efficient(n: int = 8192, repeats: int = 3, d_k: int = 64, threads: int | None = None) -> dict:
    """blocked_attention against F.scaled_dot_product_attention at n tokens (one head, batch 1, float32).

    Returns time_ratio (blocked / SDPA: below 1 is faster), memory_ratio (peak blocked / peak SDPA),
    memory_ratio_vs_readable, both peaks and times, blocked GFLOP/s (4·n²·d_k flops), matmul GFLOP/s measured in
    the same run and the fraction of it reached, the largest difference from the readable attention(), and the
    machine. Runs in a worker subprocess (see the module docstring for how memory is read).
    """
    import torch

    threads = threads or torch.get_num_threads()
    recs = _run_worker(["bench", "--n", str(n), "--repeats", str(repeats), "--d-k", str(d_k),
                        "--threads", str(threads)])
    return next(r for r in recs if r.get("kind") == "bench")["result"]


# -- the worker ----------------------------------------------------------------------------------------------
def _peak_bytes(fn) -> tuple[object, float | None]:
    """Run fn once; return its result and how much the resident set grew at its peak (None without /proc)."""
    clear = Path("/proc/self/clear_refs")
    if not clear.exists():
        return fn(), None
    try:
        clear.write_text("5")
    except OSError:
        return fn(), None
    before = _status("VmRSS")
    out = fn()
    return out, max(0, _status("VmHWM") - before)


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise OSError(f"{field} not in /proc/self/status")


def _fns(n: int, d_k: int, seed: int = 0):
    import torch
    import torch.nn.functional as F

    from ticketnet.nn.attention import attention
    from ticketnet.nn.blocked import blocked_attention

    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, n, d_k, generator=g) for _ in range(3))
    return {READABLE: lambda: attention(q, k, v)[0], SDPA: lambda: F.scaled_dot_product_attention(q, k, v),
            BLOCKED: lambda: blocked_attention(q, k, v)}


def _point(n: int, d_k: int, repeats: int) -> list[dict]:
    from ticketnet._runtime.timing import side_by_side

    fns = _fns(n, d_k)
    times = side_by_side(fns, repeats=repeats, warmup=1)
    ref, peak = _peak_bytes(fns[READABLE])
    rows = [{"kind": "point", "n": n, "variant": READABLE, "ms": times[READABLE] * 1e3,
             "peak_mb": None if peak is None else peak / MB, "max_diff": 0.0}]
    for name in (SDPA, BLOCKED):
        out, peak = _peak_bytes(fns[name])
        rows.append({"kind": "point", "n": n, "variant": name, "ms": times[name] * 1e3,
                     "peak_mb": None if peak is None else peak / MB, "max_diff": (out - ref).abs().max().item()})
    return rows


def _bench(n: int, d_k: int, repeats: int) -> dict:
    from ticketnet._runtime.timing import matmul_gflops, side_by_side

    fns = _fns(n, d_k)
    mm = matmul_gflops()
    times = side_by_side({SDPA: fns[SDPA], BLOCKED: fns[BLOCKED]}, repeats=repeats, warmup=1)
    mm = max(mm, matmul_gflops())                          # before and after: the better of the two ceilings
    ref, p_read = _peak_bytes(fns[READABLE])
    out_s, p_sdpa = _peak_bytes(fns[SDPA])
    out_b, p_blk = _peak_bytes(fns[BLOCKED])
    gflops = 4 * n * n * d_k / times[BLOCKED] / 1e9
    ratio = lambda a, b: None if a is None or not b else a / b  # noqa: E731
    return {"n": n, "d_k": d_k, "ms_blocked": times[BLOCKED] * 1e3, "ms_sdpa": times[SDPA] * 1e3,
            "time_ratio": times[BLOCKED] / times[SDPA],
            "peak_mb_blocked": None if p_blk is None else p_blk / MB,
            "peak_mb_sdpa": None if p_sdpa is None else p_sdpa / MB,
            "peak_mb_readable": None if p_read is None else p_read / MB,
            "memory_ratio": ratio(p_blk, p_sdpa), "memory_ratio_vs_readable": ratio(p_blk, p_read),
            "gflops_blocked": gflops, "matmul_gflops": mm, "matmul_fraction": gflops / mm,
            "max_diff_vs_readable": (out_b - ref).abs().max().item(),
            "sdpa_max_diff_vs_readable": (out_s - ref).abs().max().item(),
            "memory_method": machine()["memory_method"], "machine": machine()}


def _main(argv: list[str] | None = None) -> int:
    import argparse

    import torch

    p = argparse.ArgumentParser(prog="python -m ticketnet.lesson.cost", description="measuring worker (used by ticketnet.lesson.cost)")
    p.add_argument("mode", choices=("measure", "bench"))
    p.add_argument("--ns", default=",".join(map(str, DEFAULT_NS)))
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--d-k", type=int, default=64)
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.set_grad_enabled(False)
    print(json.dumps({"kind": "machine", "machine": machine()}), flush=True)
    if a.mode == "bench":
        print(json.dumps({"kind": "bench", "result": _bench(a.n, a.d_k, a.repeats)}), flush=True)
        return 0
    for n in (int(x) for x in a.ns.split(",") if x.strip()):
        for row in _point(n, a.d_k, a.repeats):
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main())


def router_costs(n: int, d: int, h: int, n_blocks: int, d_ff: int, dtype_bytes: int = 4) -> dict:
    """One ticket of n tokens through a router's blocks: its score matrices, the weights its blocks multiply by
    (attention 4d² + 4d, feed-forward 2·d·d_ff + d + d_ff, two LayerNorms 4d, per block), and the multiply-adds."""
    from ticketnet.lesson.explorers import attention_parameters

    per_block = attention_parameters(d) + 2 * d * d_ff + d + d_ff + 4 * d
    return {"scores_per_block": h * n * n, "score_bytes_all_blocks": n_blocks * score_matrix_bytes(n, dtype_bytes, heads=h),
            "block_weights": n_blocks * per_block,
            # each weight is one multiply-add per token; QKᵀ and the weighted sum are n² · d more per block
            "gflop_per_ticket": 2 * (n_blocks * per_block * n + 2 * n_blocks * n * n * d) / 1e9}
