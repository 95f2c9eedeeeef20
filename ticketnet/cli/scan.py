"""`scan`: route a corpus on Dask into Parquet."""

from __future__ import annotations

import argparse
import sys

from ticketnet.cli.common import ROUTER_HELP, router_weights


def default_level(weights) -> str:
    """full for the Tiny router; effects for an encoder router, the most its scan computes (no ERASER)."""
    from ticketnet.catalog import is_encoder

    return "effects" if is_encoder(weights) else "full"


def _scan(args: argparse.Namespace) -> int:
    import torch

    from ticketnet.corpus.engine import run_scan
    from ticketnet.interpret.signals import ROLLOUT, TAU

    torch.set_num_threads(1)                           # the work runs in the workers; the client only merges
    last = [0.0]

    def progress(p) -> None:
        import time

        now = time.perf_counter()
        if now - last[0] < 0.5 and p.partitions_done < p.partitions_total:
            return
        last[0] = now
        eta = f"{p.eta:,.0f} s" if p.eta is not None else "…"
        print(f"\r{p.tickets_done:,} of {p.tickets_total:,} tickets · {p.partitions_done}/{p.partitions_total} "
              f"partitions · {p.rate:,.0f} tickets/s · ETA {eta}   ", end="", file=sys.stderr, flush=True)

    weights = router_weights(args)
    level = args.level or default_level(weights)
    summary = run_scan(args.input if len(args.input) > 1 else args.input[0], args.out, level=level, scheduler=args.scheduler, workers=args.workers,
                       overwrite=args.overwrite, partition_size=args.partition_size, weights=weights,
                       progress=progress, log=lambda m: print(m, file=sys.stderr))
    print(file=sys.stderr)
    routing = ", ".join(f"{t} {c:,}" for t, c in summary["routing"].items())
    print(f"scanned {summary['tickets']:,} tickets at level {summary['level']} in {summary['seconds']:.1f} s "
          f"into {args.out}")
    print(f"routing: {routing}")
    if summary["accuracy"] is not None:
        print(f"accuracy on the {summary['labelled']:,} labelled tickets: {summary['accuracy']:.4f}")
    flags = summary.get("flags")
    if flags is not None:                              # an encoder router's card flags
        line = f"below the confidence threshold: {flags['low_confidence']:,}"
        if "unfamiliar" in flags:
            line += f"; unlike the training tickets: {flags['unfamiliar']:,}"
        print(line)
    if ROLLOUT.name in summary[TAU] and summary[TAU][ROLLOUT.name]["mean"] is not None:
        effect = "word removal effect" if flags is not None else "deletion effect"
        print(f"mean Kendall τ, rollout vs {effect}: {summary[TAU][ROLLOUT.name]['mean']:.3f}")
    return 0


def _scan_parser(sub) -> None:
    p = sub.add_parser("scan", help="interpret a whole ticket stream on Dask into a folder of Parquet results")
    p.add_argument("input", nargs="+", help="CSVs (ticket_id,text[,team]), Parquet files, or folders of them")
    p.add_argument("--out", required=True, help="the scan folder (resumed if it holds this scan unfinished)")
    p.add_argument("--level", choices=("route", "effects", "full"),
                   help="route: team and confidence; effects: + deletion effects, τ, token aggregates; full: + ERASER "
                        "(the Tiny router only; an encoder router scans at route or effects, by word). Default: full, an encoder "
                        "router's effects")
    p.add_argument("--scheduler", help="address of an existing Dask scheduler (tcp://host:8786); default: a local "
                                       "cluster started for this scan ('synchronous': no cluster, this process)")
    p.add_argument("--workers", type=int, help="local cluster worker processes (default: one per core)")
    p.add_argument("--overwrite", action="store_true", help="start afresh in a folder holding another scan")
    p.add_argument("--partition-size", type=int, default=50_000, help="tickets per task (default 50,000)")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.set_defaults(func=_scan)


def add_parsers(sub) -> None:
    _scan_parser(sub)
