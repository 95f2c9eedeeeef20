"""The server's cost per action: one session alone, no contention, CPU counted once the server has settled."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from ticketnet.bench.load import procfs
from ticketnet.bench.load.actions import Analyst, split_tickets
from ticketnet.bench.load.drive import warm_up
from ticketnet.bench.load.protocol import Session
from ticketnet.bench.load.scenario import ARTIFACTS, finished_scan
from ticketnet.bench.load.server import dashboard_server
from ticketnet.paths import SCANS_ENV, scans_dir

QUIET_CPU_S_PER_S = 0.05            # an idle server: its websocket pings and file watcher (about 0.005 CPU s per s)


async def settle(read_cpu: Callable[[], float], window: float = 0.5, quiet: float = QUIET_CPU_S_PER_S,
                 windows: int = 2, timeout: float = 180.0) -> float:
    """Wait until `read_cpu()` (CPU seconds so far) has grown by under `quiet` CPU s per s for `windows` windows of
    `window` seconds in a row; returns the seconds waited. A fresh server goes on computing after its first runs
    (the model's imports, the lesson's table drawn in the background on a machine without it): measured as its
    idle rate and subtracted from every action, that work made them all cost 0.0. RuntimeError if it never
    settles within `timeout` seconds."""
    start = time.monotonic()
    still, c0, t0 = 0, read_cpu(), start
    while still < windows:
        await asyncio.sleep(window)
        c1, t1 = read_cpu(), time.monotonic()
        rate = (c1 - c0) / max(t1 - t0, 1e-9)
        still = still + 1 if rate < quiet else 0
        if still < windows and t1 - start > timeout:
            raise RuntimeError(f"the server never settled: {rate:.2f} CPU s per s after {t1 - start:.0f} s, over "
                               f"the {quiet} of an idle one (another client using it?)")
        c0, t0 = c1, t1
    return time.monotonic() - start


async def cost_per_action(url: str, pid: int, loops: int, corpus: bool, timeout: float = 120,
                          seed: int = 1) -> dict:
    """The server's CPU seconds (its process tree, /proc utime + stime) and the wall time of each action type, one
    session alone, `loops` loops of the script on fresh tickets after an untimed warm-up loop. Each action's CPU runs
    from its message sent until the server's counters stop moving after script_finished (work the run left going),
    less the idle rate, measured once the server has settled after the warm-up (`settle`)."""
    tickets = list(split_tickets())
    warm = await warm_up(url, tickets, corpus, timeout)
    if warm:
        raise RuntimeError("; ".join(warm))
    settled_s = await settle(lambda: procfs.tree_cpu_s(pid))
    c0, t0 = procfs.tree_cpu_s(pid), time.monotonic()
    await asyncio.sleep(2.0)
    idle_rate = (procfs.tree_cpu_s(pid) - c0) / (time.monotonic() - t0)
    load_before = procfs.load_average()
    rows: list[tuple[str, str, float, float]] = []
    async with Session(url, timeout=timeout) as session:
        analyst = Analyst(session, seed, tickets, corpus)
        for loop in range(loops):
            analyst.loop = loop
            for action in analyst.script:
                cpu_before, t_before = procfs.tree_cpu_s(pid), time.monotonic()
                run = await action.run(analyst)
                if run.errors():
                    raise RuntimeError(f"{action.name}: {run.errors()}")
                cpu_after, still = procfs.tree_cpu_s(pid), 0
                for _ in range(40):                         # until two 50 ms polls see no more CPU (2 s at most)
                    await asyncio.sleep(0.05)
                    now = procfs.tree_cpu_s(pid)
                    still = still + 1 if now == cpu_after else 0
                    cpu_after = now
                    if still >= 2:
                        break
                cpu = cpu_after - cpu_before - idle_rate * (time.monotonic() - t_before)
                rows.append((action.name, action.page, run.seconds, max(0.0, cpu)))
    per_action = {}
    for name in dict.fromkeys(r[0] for r in rows):
        walls = [r[2] for r in rows if r[0] == name]
        cpus = [r[3] for r in rows if r[0] == name]
        per_action[name] = {"page": next(r[1] for r in rows if r[0] == name), "n": len(walls),
                            "wall_s_median": statistics.median(walls), "cpu_s_median": statistics.median(cpus),
                            "cpu_s_mean": statistics.fmean(cpus), "cpu_s_max": max(cpus)}
    return {"loops": loops, "corpus": corpus, "idle_cpu_s_per_s": round(idle_rate, 4),
            "settled_after_warm_up_s": round(settled_s, 1),
            "clock_tick_s": 1 / os.sysconf("SC_CLK_TCK"), "load_average_before": load_before,
            "load_average_after": procfs.load_average(), "per_action": per_action,
            "median_action_cpu_s": statistics.median(r[3] for r in rows),
            "median_action_wall_s": statistics.median(r[2] for r in rows)}


def server_cost(loops: int = 3, log: Path | None = None, scans: Path | None = None) -> dict:
    """`cost_per_action` on a fresh server (for `python -m ticketnet bench`)."""
    log = log or ARTIFACTS / "cost_server.log"
    scans = scans or scans_dir()
    corpus = finished_scan(scans)
    with dashboard_server(log, {SCANS_ENV: str(scans)}) as (url, proc):
        return asyncio.run(cost_per_action(url, proc.pid, loops, corpus))
