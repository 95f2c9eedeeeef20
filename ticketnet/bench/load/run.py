"""Browser-free load on a real dashboard server: many virtual analysts, the server's cost per action, capacity steps.

    python -m ticketnet.bench.load.run --sessions 20 --seconds 120            (make load-test)
    python -m ticketnet.bench.load.run --cost --loops 5                      one session, no contention
    python -m ticketnet.bench.load.run --capacity --start 10 --step 10 --max 80 --action-interval 10

Each virtual analyst is one Streamlit session on its own websocket (ticketnet.bench.load.protocol), following the
seeded script of ticketnet.bench.load.actions: one action every `--action-interval` seconds on average (each start
0.5-1.5 intervals after the previous one started, or at once when that one took longer), sessions starting evenly
over `--ramp` seconds. An action's time runs from its message sent to its script run finished. Errors: an exception
or error panel in a run, a check that failed (the action's outcome not on the page), a run that did not finish
within `--step-timeout`, a lost websocket, a traceback in the server log, the server gone. The server (its process
tree) is sampled from /proc every 0.5 s: CPU seconds and resident memory. Every figure comes with the machine's
load average, before and after.

Without `--url` a fresh server is started on a free localhost port for each run (each capacity step), and warmed
by one untimed analyst loop. With `--url`, the server there is driven (loopback only; its process is found by the
port it listens on, for the CPU and memory figures). Bounded: no new action after `--seconds`, each action has a
timeout, the run a hard deadline. JSON reports are written atomically (default under artifacts/load/).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from urllib.parse import urlparse

from ticketnet._runtime.allocator import HEAP_CENSUS_S
from ticketnet._runtime.atomic import write_atomic
from ticketnet.bench.load import procfs
from ticketnet.bench.load.actions import PAGES, ActionFailed, Analyst, Outcome, Tally, split_tickets
from ticketnet.bench.load.protocol import ProtocolError, Session, stream_url
from ticketnet.bench.load.server import cache_bytes, dashboard_server, tracebacks
from ticketnet.paths import MEMORY_LOG_ENV, ROOT, SCANS_ENV, WORKERS_ENV, scans_dir

ARTIFACTS = ROOT / "artifacts" / "load"
TARGET_P95_S = 1.0


def pct(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (None without values)."""
    if not values:
        return None
    xs = sorted(values)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": pct(values, 0.5), "p95": pct(values, 0.95),
            "max": max(values) if values else None}


def finished_scan(root: Path) -> bool:
    """Whether the Corpus page has a finished scan to open under `root` (else the analysts skip Corpus)."""
    from ticketnet.corpus.query import is_scan

    return root.is_dir() and any(p.is_dir() and is_scan(p) for p in root.iterdir())


# -- one analyst -----------------------------------------------------------------------------------------------
async def analyst_loop(i: int, url: str, tally: Tally, start_at: float, deadline: float, args,
                       tickets: list[str], corpus: bool) -> None:
    """One session following the script until `deadline`; a failed action starts the script again from a fresh
    open of Tickets (a lost websocket: from a new session)."""
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    rng = random.Random(args.seed * 100_003 + i)
    session = Session(url, timeout=args.step_timeout)
    analyst = Analyst(session, args.seed * 100_003 + i, tickets, corpus)
    script = analyst.script
    entries = analyst.entry_points()
    k = entries[i % len(entries)]                        # sessions start spread over the pages, each by a new tab
    entering, connected = k != 0, False
    try:
        while time.monotonic() < deadline:
            began = time.monotonic()
            if not connected:
                try:
                    await session.connect()
                    connected = True
                except (OSError, ProtocolError, asyncio.TimeoutError) as exc:
                    tally.error("connect failed", f"session {i}: {exc!r}")
                    await asyncio.sleep(1)
                    continue
            action = script[k]
            name = f"open {action.page} (new tab)" if entering else action.name
            try:
                run = await (analyst.enter(action.page) if entering else action.run(analyst))
                errors = run.errors()
                if errors:
                    for e in errors:
                        tally.error(e.split(":", 1)[0], f"session {i} {name}: {e}")
                    k, entering = 0, False
                else:
                    tally.outcomes.append(Outcome(name, action.page, run.seconds, began, run.reruns))
                    k, entering = (k + 1) % len(script), False
                    analyst.loop += k == 0
            except ActionFailed as exc:
                tally.error(exc.kind, f"session {i} {name}: {exc.detail}")
                k, entering = 0, False
            except ProtocolError as exc:
                kind = "timeout" if "script_finished" in str(exc) else "disconnect"
                tally.error(kind, f"session {i} {name}: {exc}")
                await session.close()
                k, entering, connected = 0, False, False
            next_at = began + args.action_interval * rng.uniform(0.5, 1.5)
            await asyncio.sleep(max(0.0, min(next_at, deadline) - time.monotonic()))
    finally:
        await session.close()


SPLIT_BUTTON = "Compute interpretation for this split"


async def split_session(url: str, at: float, ticket: str, record: dict, timeout: float = 900) -> None:
    """One more analyst who, at `at`, opens Interpretation and interprets the whole valid split (the heaviest thing
    a session can ask for); `record` gets when that run started and ended, and its errors."""
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    try:
        async with Session(url, timeout=timeout) as s:
            first = await s.open("interpretation", f"ticket={ticket}")
            button = first.widget("button", SPLIT_BUTTON)
            record["start"] = time.monotonic()
            run = await s.rerun((button, True))
            record["end"] = time.monotonic()
            record["errors"] = run.errors()
            record["seconds"] = round(record["end"] - record["start"], 2)
    except (LookupError, ProtocolError, OSError, asyncio.TimeoutError) as exc:
        record.setdefault("end", time.monotonic())
        record["errors"] = [f"{type(exc).__name__}: {exc}"]


def during(outcomes, window: tuple[float, float] | None) -> dict:
    """The analysts' p95 per page for actions that began inside `window` and for the others."""
    if not window:
        return {}
    inside = [o for o in outcomes if window[0] <= o.started <= window[1]]
    outside = [o for o in outcomes if not window[0] <= o.started <= window[1]]
    pages = dict.fromkeys(o.page for o in outcomes)
    return {side: {"all": summary([o.seconds for o in group]),
                   **{p: summary([o.seconds for o in group if o.page == p]) for p in pages}}
            for side, group in (("during_split_run", inside), ("outside_split_run", outside))}


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


async def warm_up(url: str, tickets: list[str], corpus: bool, timeout: float) -> list[str]:
    """One untimed loop of the script (imports, the model, the split's tables): what a server that has run a while
    has done. Returns the errors it met."""
    errors = []
    async with Session(url, timeout=timeout) as session:
        analyst = Analyst(session, 0, tickets, corpus)
        for action in analyst.script:
            try:
                run = await action.run(analyst)
                errors += [f"warm-up {action.name}: {e}" for e in run.errors()]
            except (ActionFailed, ProtocolError) as exc:
                errors.append(f"warm-up {action.name}: {exc}")
                break
    return errors


async def drive(url: str, pid: int | None, sessions: int, args, log: Path | None = None) -> dict:
    """`sessions` analysts for `args.seconds` against the server at `url` (process `pid`); the step's report."""
    tickets = list(split_tickets())
    corpus = not args.no_corpus and (args.url is not None or finished_scan(Path(args.scans)))
    log_start = log.stat().st_size if log and log.is_file() else 0
    tally = Tally()
    samples: list[tuple[float, float, float]] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample(pid, samples, stop)) if pid else None
    census_rows: list[dict] = []
    every = getattr(args, "census", 0) or 0
    heap_log = memory_log_path(log) if log else None
    counter = (asyncio.create_task(census(pid, time.monotonic(), every, census_rows, stop, heap_log))
               if pid and every else None)
    load_before = procfs.load_average()
    busy0 = procfs.machine_busy()
    rss_idle = procfs.tree_rss_mb(pid) if pid else None
    cpu0 = procfs.tree_cpu_s(pid) if pid else None
    start = time.monotonic()
    deadline = start + args.seconds
    ramp = args.action_interval if args.ramp is None else args.ramp
    tasks = [asyncio.create_task(analyst_loop(i, url, tally, start + ramp * i / sessions, deadline, args, tickets,
                                              corpus)) for i in range(sessions)]
    heavy: dict = {}
    if getattr(args, "split_run_at", None) is not None:
        tasks.append(asyncio.create_task(split_session(url, start + args.split_run_at, sorted(tickets)[7], heavy)))
    hard = args.seconds + ramp + 2 * args.step_timeout + 30
    done, pending = await asyncio.wait(tasks, timeout=hard)
    for t in pending:
        tally.error("session did not stop", "cancelled at the hard deadline")
        t.cancel()
    for t in done:
        if t.exception() is not None:
            tally.error("session failed", repr(t.exception()))
    wall = time.monotonic() - start
    busy1 = procfs.machine_busy()
    cpu1 = procfs.tree_cpu_s(pid) if pid else None
    left_at = time.monotonic()
    linger = getattr(args, "linger", 0) or 0
    if pid and linger:                     # the users have left: is the memory given back?
        await asyncio.sleep(linger)
    stop.set()
    if sampler:
        await sampler
    if counter:
        await counter
    alive = pid is None or Path(f"/proc/{pid}").exists()
    if not alive:
        tally.error("server died", "the server process exited during the run")
    if log:
        for tb in tracebacks(log, log_start):
            tally.error("server traceback", tb)

    if heavy:
        for e in heavy.get("errors", []):
            tally.error("split run", e)
    times = [o.seconds for o in tally.outcomes]
    by_page = {p: summary([o.seconds for o in tally.outcomes if o.page == p]) for p in PAGES
               if corpus or p != "Corpus"}
    names = dict.fromkeys(o.action for o in tally.outcomes)
    report = {
        "sessions": sessions, "processes": max(1, getattr(args, "processes", 0)),
        "interpret_workers": getattr(args, "workers", 0), "seconds": args.seconds,
        "action_interval_s": args.action_interval, "ramp_s": ramp,
        "step_timeout_s": args.step_timeout, "seed": args.seed, "corpus": corpus, "cores": os.cpu_count(),
        "load_average_before": load_before, "load_average_after": procfs.load_average(),
        "machine_busy_fraction": round((busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]), 3),
        "wall_s": round(wall, 1), "actions": len(times), "actions_per_s": round(len(times) / wall, 2),
        "errors": sum(tally.errors.values()), "errors_by_kind": tally.errors, "error_samples": tally.samples,
        "action_s": summary(times), "by_page": by_page,
        "by_action": {n: summary([o.seconds for o in tally.outcomes if o.action == n]) for n in names},
    }
    if pid:
        peak = max((m for _, m, _ in samples), default=rss_idle)
        report["server"] = {"pid": pid, "cpu_s": round(cpu1 - cpu0, 2),
                            "cpu_s_per_s": round((cpu1 - cpu0) / wall, 3),
                            "rss_mb_before": round(rss_idle, 1), "rss_mb_peak_sampled": round(peak, 1),
                            "rss_mb_end": round(samples[-1][1], 1) if samples else None,
                            "rss_mb_samples": [(round(t - start, 1), round(m, 1)) for t, m, _ in samples[::4]]}
        loaded = [(t - start, m) for t, m, _ in samples if ramp <= t - start and t <= left_at]
        if len(loaded) >= 3:               # least squares over the run once every analyst has started
            slope = statistics.linear_regression([t for t, _ in loaded], [m for _, m in loaded]).slope
            report["server"]["rss_mb_per_min_under_load"] = round(60 * slope, 2)
            report["server"]["rss_trends"] = memory_trends([(t - start, m) for t, m, _ in samples], ramp,
                                                           left_at - start)
        if linger:
            report["server"]["linger_s"] = linger
            report["server"]["rss_mb_when_left"] = round(loaded[-1][1], 1) if loaded else None
            report["server"]["rss_mb_after_linger"] = round(samples[-1][1], 1) if samples else None
            report["server"]["rss_after_linger_vs_before"] = (round(samples[-1][1] / rss_idle, 3)
                                                              if samples and rss_idle else None)
        if census_rows:
            report["server"]["census_every_s"] = every
            report["server"]["census"] = census_summary(census_rows, left_at - start)
    if heavy:
        report["split_run"] = {"at_s": args.split_run_at, "seconds": heavy.get("seconds"),
                               **during(tally.outcomes, (heavy["start"], heavy["end"]) if "start" in heavy else None)}
    report["meets_target"] = meets_target(report, args.target_p95)
    return report


def meets_target(step: dict, target: float) -> bool:
    """No error, and p95 ≤ `target` on every page the analysts used (each page timed at least once)."""
    pages = step["by_page"].values()
    return step["errors"] == 0 and all(p["n"] and p["p95"] <= target for p in pages)


# -- a server per run --------------------------------------------------------------------------------------------
def server_for(args, log: Path):
    """A fresh server (the context yields (url, pid)), or the one at --url."""
    if args.url:
        stream_url(args.url)
        port = urlparse(args.url if "://" in args.url else f"http://{args.url}").port or 80
        return nullcontext((args.url.rstrip("/"), procfs.listening_pid(port)))
    env = {SCANS_ENV: str(Path(args.scans).resolve()), MEMORY_LOG_ENV: str(memory_log_path(log).resolve())}
    if args.cache:
        env["TICKETNET_CACHE"] = str(Path(args.cache).resolve())
    if getattr(args, "workers", 0):
        env[WORKERS_ENV] = str(args.workers)

    class Started:
        def __enter__(self):
            self.cm = dashboard_server(log, env, processes=getattr(args, "processes", 0))
            url, proc = self.cm.__enter__()
            return url, proc.pid

        def __exit__(self, *exc):
            return self.cm.__exit__(*exc)

    return Started()


async def one_run(args, sessions: int, log: Path) -> dict:
    with server_for(args, log) as (url, pid):
        corpus = not args.no_corpus and (args.url is not None or finished_scan(Path(args.scans)))
        # One warm-up loop per server: held at the same time, HAProxy gives each to the server with fewest sessions.
        warm = [] if args.no_warm_up else [e for errs in await asyncio.gather(*(
            warm_up(url, list(split_tickets()), corpus, args.step_timeout)
            for _ in range(max(1, getattr(args, "processes", 0))))) for e in errs]
        report = await drive(url, pid, sessions, args, None if args.url else log)
        report["warm_up_errors"] = warm
        report["errors"] += len(warm)
        report["errors_by_kind"].update({"warm-up": len(warm)} if warm else {})
        report["meets_target"] = meets_target(report, args.target_p95)
        return report


def capacity(args, log: Path) -> dict:
    """Step the number of analysts from --start by --step to --max (a fresh server each step); the capacity is the
    largest count whose step and every smaller one met the target. Stops at the first step that misses it unless
    --keep-going. The report (every step, and the curve of p50 / p95 against analysts) is rewritten atomically
    after every step."""
    out: dict = {"target_p95_s": args.target_p95, "action_interval_s": args.action_interval,
                 "seconds_per_step": args.seconds, "steps": [], "curve": [], "capacity": None,
                 "note": "figures from a loaded machine are not capacity figures: compare load_average to the cores"}
    for n in range(args.start, args.max + 1, args.step):
        step = asyncio.run(one_run(args, n, log))
        out["steps"].append(step)
        out["curve"] = [{"sessions": s["sessions"], "p50_s": s["action_s"]["p50"], "p95_s": s["action_s"]["p95"],
                         "p95_s_by_page": {p: v["p95"] for p, v in s["by_page"].items()}, "errors": s["errors"],
                         "server_cpu_s_per_s": s.get("server", {}).get("cpu_s_per_s"),
                         "load_average_before": s["load_average_before"][0]} for s in out["steps"]]
        if step["meets_target"] and out["capacity"] == (out["steps"][-2]["sessions"] if len(out["steps"]) > 1
                                                        else None):
            out["capacity"] = n
        print_step(step)
        write_report(args.out, out)
        if not step["meets_target"] and not args.keep_going:
            break
    return out


# -- one session, no contention ----------------------------------------------------------------------------------
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


# -- output --------------------------------------------------------------------------------------------------
def write_report(path: Path, report: dict) -> None:
    write_atomic(path, (json.dumps(report, indent=1) + "\n").encode("utf-8"))


def _s(v: float | None) -> str:
    return "   -  " if v is None else f"{v:6.3f}"


def print_step(r: dict) -> None:
    srv = r.get("server", {})
    print(f"\n{r['sessions']} analysts × {r['seconds']:.0f} s, one action per {r['action_interval_s']:.0f} s each: "
          f"{r['actions']} actions, {r['errors']} errors {r['errors_by_kind'] or ''}; load average "
          f"{r['load_average_before'][0]:.2f} before, {r['load_average_after'][0]:.2f} after on {r['cores']} cores "
          f"(machine {r['machine_busy_fraction']:.0%} busy)")
    if srv:
        print(f"  server: {srv['cpu_s']:.1f} CPU s = {srv['cpu_s_per_s']:.2f} CPU s per s; memory "
              f"{srv['rss_mb_before']:.0f} MB before, {srv['rss_mb_peak_sampled']:.0f} MB peak, "
              f"{srv['rss_mb_end']:.0f} MB at the end"
              + (f"; {srv['rss_mb_per_min_under_load']:+.2f} MB per min under load"
                 if "rss_mb_per_min_under_load" in srv else "")
              + (f"; {srv['linger_s']:.0f} s after the analysts left: {srv['rss_after_linger_vs_before']:.2f}× "
                 "the memory before" if srv.get("rss_after_linger_vs_before") else ""))
    for trend in srv.get("rss_trends", []):
        print(f"  memory from minute {trend['from_min']:g} to {trend['to_min']:g}: {trend['mb_per_min']:+.2f} MB per "
              f"min (95 % interval {trend['ci95'][0]:+.2f} to {trend['ci95'][1]:+.2f}), {trend['mean_mb']:.0f} MB "
              "on average")
    print(f"  {'':32} {'n':>5} {'p50 s':>7} {'p95 s':>7} {'max s':>7}")
    rows = [("all actions", r["action_s"])] + [(f"page {p}", v) for p, v in r["by_page"].items()] + \
        [(f"  {a}", v) for a, v in r["by_action"].items()]
    for name, v in rows:
        print(f"  {name:32} {v['n']:>5} {_s(v['p50'])} {_s(v['p95'])} {_s(v['max'])}")
    split = r.get("split_run")
    if split and "during_split_run" in split:
        print(f"  a split-wide interpretation from {split['at_s']:.0f} s, {split['seconds']} s long: analysts' p95 "
              + ", ".join(f"{side.split('_')[0]} {_s(v['all']['p95']).strip()} s (n {v['all']['n']})"
                          for side, v in split.items() if side.endswith("split_run")))
    rows = r.get("server", {}).get("census", {}).get("under_load") or []
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        print(f"  memory by process, {first['t_s']:.0f} s → {last['t_s']:.0f} s: " + ", ".join(
            f"{k} ×{last['processes'][k]} {first['rss_mb'].get(k, 0):.0f} → {v:.0f} MB"
            for k, v in last["rss_mb"].items()))
        if "heap_in_use_mb" in first and "heap_in_use_mb" in last:
            print(f"  the servers' live heap {first['heap_in_use_mb']:.0f} → {last['heap_in_use_mb']:.0f} MB, their "
                  f"allocator holding {first['heap_held_mb']:.0f} → {last['heap_held_mb']:.0f} MB, Python's blocks "
                  f"{first['heap_python_blocks'] / 1e6:.2f} → {last['heap_python_blocks'] / 1e6:.2f} M")
        grown = sorted(last["cache_mb"].items(), key=lambda kv: -kv[1])[:4]
        print("  largest st.cache_data caches then: " + ", ".join(f"{k.rsplit('.', 1)[-1]} {v:.1f} MB"
                                                                 for k, v in grown))
    print(f"  p95 ≤ target on every page, no error: {'yes' if r['meets_target'] else 'no'}")
    for s in r["error_samples"][:10]:
        print("  !", s)


def print_cost(c: dict) -> None:
    print(f"\nServer cost per action, one session alone, {c['loops']} loops (load average "
          f"{c['load_average_before'][0]:.2f} before, {c['load_average_after'][0]:.2f} after; CPU counted in "
          f"{c['clock_tick_s'] * 1e3:.0f} ms ticks)")
    print(f"  {'action':22} {'page':15} {'n':>3} {'wall s':>7} {'CPU s':>7} {'CPU mean':>8}")
    for name, v in c["per_action"].items():
        print(f"  {name:22} {v['page']:15} {v['n']:>3} {v['wall_s_median']:7.3f} {v['cpu_s_median']:7.3f} "
              f"{v['cpu_s_mean']:8.3f}")
    print(f"  median action: {c['median_action_wall_s']:.3f} s wall, {c['median_action_cpu_s']:.3f} s CPU")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m ticketnet.bench.load.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="drive the server already running there (loopback only); default: start one")
    ap.add_argument("--sessions", type=int, default=20, help="concurrent analysts (default 20)")
    ap.add_argument("--seconds", type=float, default=120, help="how long analysts keep starting actions (default 120)")
    ap.add_argument("--action-interval", type=float, default=10.0,
                    help="mean seconds from one action's start to the next, per analyst (default 10)")
    ap.add_argument("--ramp", type=float, help="seconds over which the sessions start (default: one interval)")
    ap.add_argument("--step-timeout", type=float, default=60, help="seconds one action may take (default 60)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target-p95", type=float, default=TARGET_P95_S, help="seconds (default 1)")
    ap.add_argument("--scans", default=str(scans_dir()),
                    help=f"${SCANS_ENV} for a started server (default: {scans_dir()}); without a finished scan there "
                         "the analysts skip the Corpus page (make corpus-demo makes one)")
    ap.add_argument("--cache", help="TICKETNET_CACHE for a started server (default: the dashboard's own)")
    ap.add_argument("--no-corpus", action="store_true", help="leave the Corpus page out of the script (with --url: "
                                                             "when that server has no finished scan)")
    ap.add_argument("--census", type=float, default=60,
                    help="seconds between readings of each server process's memory and its caches' bytes "
                         "(default 60; 0: none)")
    ap.add_argument("--no-warm-up", action="store_true", help="time the first loop on a fresh server too")
    ap.add_argument("--processes", type=int, default=0,
                    help="a started server: this many dashboard processes behind HAProxy (python -m dashboard.team); "
                         "default 0, one server alone")
    ap.add_argument("--workers", type=int, default=0,
                    help="a started server: this many worker processes for its interpretations ($TICKETNET_WORKERS)")
    ap.add_argument("--split-run-at", type=float, metavar="S",
                    help="S seconds in, one more session interprets the whole valid split (the analysts' p95 is "
                         "reported during that run and outside it); use with --cache of an empty folder")
    ap.add_argument("--linger", type=float, default=0,
                    help="seconds to keep sampling the server's memory after the analysts leave (default 0)")
    ap.add_argument("--capacity", action="store_true", help="step the number of analysts (--start/--step/--max)")
    ap.add_argument("--start", type=int, default=10)
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--max", type=int, default=80)
    ap.add_argument("--keep-going", action="store_true", help="capacity: go on stepping after a step misses the target")
    ap.add_argument("--cost", action="store_true", help="one session alone: the server's CPU and wall time per action")
    ap.add_argument("--loops", type=int, default=5, help="--cost: loops of the script (default 5)")
    ap.add_argument("--out", type=Path, help="JSON report (default: artifacts/load/{load,capacity,cost}.json)")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.url:
        try:
            stream_url(args.url)
        except ValueError as exc:
            ap.error(str(exc))
    if min(args.sessions, args.start, args.step, args.max, args.loops) < 1 or args.seconds <= 0 \
            or args.action_interval <= 0 or args.step_timeout <= 0:
        ap.error("counts, --seconds, --action-interval and --step-timeout must be positive")
    if min(args.processes, args.workers) < 0 or ((args.processes or args.workers) and args.url):
        ap.error("--processes and --workers must be 0 or more, and are for a server the client starts (not --url)")
    if not Path("/proc/self/stat").is_file():
        ap.error("the load client reads the server's CPU and memory from /proc: Linux only")
    mode = "capacity" if args.capacity else "cost" if args.cost else "load"
    args.out = args.out or ARTIFACTS / f"{mode}.json"
    log = args.out.with_suffix(".server.log")
    if not args.url:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")
    if mode == "capacity":
        out = capacity(args, log)
        print(f"\ncapacity: {out['capacity'] or 'below ' + str(args.start)} analysts with p95 ≤ {args.target_p95} s "
              f"on every page and no error")
        ok = True
    elif mode == "cost":
        with server_for(args, log) as (url, pid):
            if pid is None:
                ap.error(f"no process of this user listens on {args.url}: its CPU cannot be read")
            corpus = not args.no_corpus and (args.url is not None or finished_scan(Path(args.scans)))
            out = asyncio.run(cost_per_action(url, pid, args.loops, corpus, seed=args.seed + 1))
        print_cost(out)
        ok = True
    else:
        out = asyncio.run(one_run(args, args.sessions, log))
        print_step(out)
        ok = out["errors"] == 0
    write_report(args.out, out)
    print(f"\n  written: {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
