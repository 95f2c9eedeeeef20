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
import sys
from pathlib import Path

from ticketnet.bench.load.cost import cost_per_action, server_cost, settle
from ticketnet.bench.load.drive import capacity, drive, one_run
from ticketnet.bench.load.monitor import census_summary, heap_readings, memory_log_path, memory_trend, memory_trends
from ticketnet.bench.load.output import print_cost, print_step, write_report
from ticketnet.bench.load.protocol import stream_url
from ticketnet.bench.load.scenario import ARTIFACTS, finished_scan, server_for
from ticketnet.bench.load.summary import TARGET_P95_S, meets_target, pct
from ticketnet.paths import SCANS_ENV, scans_dir

# The command line lives here; its parts are in the modules above. What other code and the tests import from here:
__all__ = ["build_parser", "main", "census_summary", "cost_per_action", "drive", "heap_readings", "meets_target",
           "memory_log_path", "memory_trend", "memory_trends", "pct", "server_cost", "settle"]


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
    ap.add_argument("--fresh-tickets", action="store_true",
                    help="every ticket an action opens is one no analyst of the run has opened (no per-ticket cache)")
    ap.add_argument("--sign-in", type=Path, metavar="FILE",
                    help="serve with this sign-in file; each analyst signs in with a cookie made from its secret")
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
    args.cookie = None
    if args.sign_in and args.cost:
        ap.error("--sign-in is for load and capacity runs (--cost measures one session on a server of its own)")
    if args.sign_in:
        from ticketnet.bench.load.sign_in import analyst_cookie

        try:
            args.cookie = analyst_cookie(args.sign_in)
        except ValueError as exc:
            ap.error(str(exc))
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
