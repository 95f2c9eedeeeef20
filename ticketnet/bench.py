"""`python -m ticketnet bench`: hot paths timed side by side in one run, reported as ratios and written as JSON."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable

import torch

from ticketnet.atomic import write_atomic


def side_by_side(fns: dict[str, Callable[[], object]], repeats: int = 7, warmup: int = 1) -> dict[str, float]:
    """Median seconds of each function, run in interleaved rounds so machine drift hits all of them alike."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def matmul_gflops(n: int = 1024, repeats: int = 5) -> float:
    """float32 matrix-multiply throughput of this machine now (GFLOP/s), the ceiling the other numbers are read against."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    t = side_by_side({"mm": lambda: a @ b}, repeats=repeats)["mm"]
    return 2 * n**3 / t / 1e9


def machine() -> dict:
    return {"torch": torch.__version__, "threads": torch.get_num_threads(), "cores": os.cpu_count(),
            "python": platform.python_version(), "processor": platform.machine()}


def main(args) -> int:
    from ticketnet.benchmarks import run_all

    report = {"machine": machine(), "quick": bool(args.quick)}
    report.update(run_all(quick=bool(args.quick), log=print))
    write_atomic(args.out, (json.dumps(report, indent=1) + "\n").encode("utf-8"))
    print(f"wrote {args.out}")
    return 0
