"""The server's process tree watched during a run: CPU and memory samples, the memory census, memory trends."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from ticketnet._runtime.allocator import HEAP_CENSUS_S
from ticketnet.bench.load import procfs
from ticketnet.bench.load.server import cache_bytes


async def sample(pid: int, samples: list[tuple[float, float, float]], stop: asyncio.Event) -> None:
    """(monotonic time, tree RSS MB, tree CPU s) every 0.5 s until `stop`."""
    while not stop.is_set():
        samples.append((time.monotonic(), procfs.tree_rss_mb(pid), procfs.tree_cpu_s(pid)))
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except asyncio.TimeoutError:
            pass


def memory_log_path(server_log: Path) -> Path:
    """Where a started server's memory census goes ($TICKETNET_MEMORY_LOG; dashboard.server.idle.MemoryLog)."""
    return server_log.with_name(server_log.stem + ".memory.jsonl")


def heap_readings(path: Path | None, since: float) -> dict[str, dict]:
    """Each server's latest line of the memory census at `path` written at or after `since` (wall time), by pid:
    live heap, what the allocator holds, Python's blocks. {} without a file."""
    latest: dict[str, dict] = {}
    try:
        lines = path.read_text(errors="replace").splitlines() if path is not None else []
    except OSError:
        return {}
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue                                   # a line being written: the next census reads it
        if isinstance(row, dict) and row.get("t", 0) >= since and "pid" in row:
            latest[str(row["pid"])] = {k: row[k] for k in ("in_use_mb", "held_mb", "python_blocks") if k in row}
    return latest


async def census(pid: int, start: float, every: float, rows: list[dict], stop: asyncio.Event,
                 memory_log: Path | None = None) -> None:
    """Every `every` seconds until `stop`: each process of the tree (role, resident MB) and, for each dashboard
    server in it, what its st.cache_data caches hold and (from its memory log) its live heap against what its
    allocator holds: where a growing tree's memory is."""
    since = time.time() - HEAP_CENSUS_S - 5          # a server's latest line is at most one interval old
    while not stop.is_set():
        processes = await asyncio.to_thread(procfs.tree_census, pid)
        caches = {}
        for p in processes:
            if p["role"] == "server":
                for port in procfs.listening_ports(p["pid"]):
                    found = await asyncio.to_thread(cache_bytes, f"http://localhost:{port}")
                    if found:
                        caches[str(p["pid"])] = found
        heap = await asyncio.to_thread(heap_readings, memory_log, since)
        rows.append({"t_s": round(time.monotonic() - start, 1), "processes": processes, "cache_bytes": caches,
                     "heap": heap})
        try:
            await asyncio.wait_for(stop.wait(), every)
        except asyncio.TimeoutError:
            pass


TREND_BIN_S = 30          # the trend is fitted to 30 s means: the 0.5 s samples follow each script run's buffers
TREND_LAGS = 4            # Newey-West over 2 minutes of those means: a cache's turnover lifts neighbours together


def memory_trend(points: list[tuple[float, float]], from_s: float, to_s: float) -> dict | None:
    """The resident memory's trend over [from_s, to_s] of the run: MB per minute by least squares on 30 s means,
    with a 95 % interval robust to their autocorrelation (statsmodels OLS, HAC); None with under 6 means."""
    import numpy as np
    import statsmodels.api as sm

    bins: dict[int, list[float]] = {}
    for t, m in points:
        if from_s <= t <= to_s:
            bins.setdefault(int((t - from_s) // TREND_BIN_S), []).append(m)
    if len(bins) < 6:
        return None
    minutes = np.array([(from_s + (k + 0.5) * TREND_BIN_S) / 60 for k in sorted(bins)])
    means = np.array([sum(bins[k]) / len(bins[k]) for k in sorted(bins)])
    fit = sm.OLS(means, sm.add_constant(minutes)).fit(cov_type="HAC", cov_kwds={"maxlags": TREND_LAGS})
    low, high = fit.conf_int()[1]
    return {"from_min": round(from_s / 60, 1), "to_min": round(to_s / 60, 1),
            "mb_per_min": round(float(fit.params[1]), 2), "ci95": [round(float(low), 2), round(float(high), 2)],
            "mean_mb": round(float(means.mean()), 1)}


def memory_trends(points: list[tuple[float, float]], ramp_s: float, left_s: float) -> list[dict]:
    """The trend over the whole load (from the last analyst's start), from minute 10 on (the per-ticket caches'
    ten-minute TTL has turned over once) and over its second half: whether the memory is still growing at the end."""
    windows = [(ramp_s, left_s), (max(ramp_s, 600.0), left_s), (max(ramp_s, (ramp_s + left_s) / 2), left_s)]
    found = [memory_trend(points, a, b) for a, b in dict.fromkeys(windows) if b - a >= 6 * TREND_BIN_S]
    return [f for f in found if f]


def census_summary(rows: list[dict], left_at_s: float) -> dict:
    """From the census: resident MB per role (summed over its processes) and st.cache_data MB per cache (summed over
    the servers) at each reading while the analysts were there, and the last reading after they left."""
    if not rows:
        return {}
    roles = sorted({p["role"] for r in rows for p in r["processes"]})
    caches = sorted({c for r in rows for server in r["cache_bytes"].values() for c in server})
    def at(r):
        return {"t_s": r["t_s"],
                "rss_mb": {k: round(sum(p["rss_mb"] for p in r["processes"] if p["role"] == k), 1) for k in roles},
                "processes": {k: sum(p["role"] == k for p in r["processes"]) for k in roles},
                "cache_mb": {c: round(sum(s.get(c, 0) for s in r["cache_bytes"].values()) / 2**20, 2)
                             for c in caches},
                **({f"heap_{k}": round(sum(h.get(k, 0) for h in r["heap"].values()), 1)
                    for k in ("in_use_mb", "held_mb", "python_blocks")} if r.get("heap") else {})}
    under = [at(r) for r in rows if r["t_s"] <= left_at_s]
    after = [at(r) for r in rows if r["t_s"] > left_at_s]
    return {"under_load": under, "after_left": after[-1] if after else None}
