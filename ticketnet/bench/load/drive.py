"""The load run loop: the virtual analysts, the split-wide session, the warm-up, one run per server, capacity steps."""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
from pathlib import Path

from ticketnet.bench.load import procfs
from ticketnet.bench.load.actions import PAGES, ActionFailed, Analyst, FreshTickets, Outcome, Tally, split_tickets
from ticketnet.bench.load.monitor import census, census_summary, memory_log_path, memory_trends, sample
from ticketnet.bench.load.output import print_step, write_report
from ticketnet.bench.load.protocol import ProtocolError, Session
from ticketnet.bench.load.scenario import finished_scan, server_for
from ticketnet.bench.load.server import tracebacks
from ticketnet.bench.load.summary import during, meets_target, summary


async def analyst_loop(i: int, url: str, tally: Tally, start_at: float, deadline: float, args,
                       tickets: list[str], corpus: bool) -> None:
    """One session following the script until `deadline`; a failed action starts the script again from a fresh
    open of Tickets (a lost websocket: from a new session)."""
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    rng = random.Random(args.seed * 100_003 + i)
    session = Session(url, timeout=args.step_timeout, cookie=getattr(args, "cookie", None))
    analyst = Analyst(session, args.seed * 100_003 + i, tickets, corpus, getattr(args, "fresh", None))
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


async def split_session(url: str, at: float, ticket: str, record: dict, timeout: float = 900,
                        cookie: str | None = None) -> None:
    """One more analyst who, at `at`, opens Interpretation and interprets the whole valid split (the heaviest thing
    a session can ask for); `record` gets when that run started and ended, and its errors."""
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    try:
        async with Session(url, timeout=timeout, cookie=cookie) as s:
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


async def warm_up(url: str, tickets: list[str], corpus: bool, timeout: float, cookie: str | None = None,
                  fresh: FreshTickets | None = None) -> list[str]:
    """One untimed loop of the script (imports, the model, the split's tables): what a server that has run a while
    has done. Returns the errors it met."""
    errors = []
    async with Session(url, timeout=timeout, cookie=cookie) as session:
        analyst = Analyst(session, 0, tickets, corpus, fresh)
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
        tasks.append(asyncio.create_task(split_session(url, start + args.split_run_at, sorted(tickets)[7], heavy,
                                                         cookie=getattr(args, "cookie", None))))
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


async def one_run(args, sessions: int, log: Path) -> dict:
    with server_for(args, log) as (url, pid):
        corpus = not args.no_corpus and (args.url is not None or finished_scan(Path(args.scans)))
        tickets = list(split_tickets())
        # A fresh server each run: with --fresh-tickets, the warm-up's tickets count as opened too.
        args.fresh = FreshTickets(tickets, args.seed) if getattr(args, "fresh_tickets", False) else None
        # One warm-up loop per server: held at the same time, HAProxy gives each to the server with fewest sessions.
        warm = [] if args.no_warm_up else [e for errs in await asyncio.gather(*(
            warm_up(url, tickets, corpus, args.step_timeout, getattr(args, "cookie", None), args.fresh)
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
