"""Timing side by side: interleaved medians, this machine's matmul rate, and what the machine is."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable

import torch


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
    """Versions, cores and torch threads of the process, recorded next to every measurement."""
    return {"cores": os.cpu_count(), "threads": torch.get_num_threads(), "torch": torch.__version__,
            "python": platform.python_version(), "processor": platform.machine() or platform.processor()}
