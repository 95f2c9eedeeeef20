"""`compare`, `compare-scans`: two routers on one split, two scans of one input."""

from __future__ import annotations

import argparse
from pathlib import Path

from ticketnet.cli.common import write_json


def _compare(args: argparse.Namespace) -> int:
    from ticketnet.compare.report import compare_lines
    from ticketnet.compare.tables import compare_routers

    if args.resamples < 1:
        raise ValueError(f"--resamples {args.resamples}: needs at least 1")
    result = compare_routers(Path(args.router_a), Path(args.router_b), args.split, args.resamples, args.seed)
    print("\n".join(compare_lines(result)))
    if args.out:
        write_json(args.out, result)
    return 0


def _compare_parser(sub) -> None:
    p = sub.add_parser("compare", help="two routers on one split: metrics with paired intervals, McNemar's exact "
                                       "test, agreement and the tickets one fixed and the other broke")
    p.add_argument("router_a", help="router folder A, the reference (e.g. weights)")
    p.add_argument("router_b", help="router folder B, the candidate (e.g. routers/retrain)")
    p.add_argument("--split", default="test", help="a split name of A's data (else B's), or a labelled .csv "
                                                   "(default: test)")
    p.add_argument("--out", help="write the comparison as JSON here (atomically)")
    p.add_argument("--resamples", type=int, default=2000, help="paired bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    p.set_defaults(func=_compare)


def _compare_scans(args: argparse.Namespace) -> int:
    from ticketnet.compare.report import scans_lines
    from ticketnet.compare.scans import compare_scans

    result = compare_scans(Path(args.scan_a), Path(args.scan_b), sample=args.sample, words=args.words)
    print("\n".join(scans_lines(result)))
    if args.out:
        write_json(args.out, result)
    return 0


def _compare_scans_parser(sub) -> None:
    p = sub.add_parser("compare-scans", help="two scans of one input by two routers: tickets that change team, "
                                             "routing-mix deltas, words whose deletion effect moved most")
    p.add_argument("scan_a", help="scan folder A (python -m ticketnet scan ... --out A)")
    p.add_argument("scan_b", help="scan folder B, of the same input")
    p.add_argument("--out", help="write the comparison as JSON here (atomically)")
    p.add_argument("--sample", type=int, default=10, help="tickets that change team to list (default 10)")
    p.add_argument("--words", type=int, default=5, help="words per team whose effect moved most (default 5)")
    p.set_defaults(func=_compare_scans)


def add_parsers(sub) -> None:
    _compare_parser(sub)
    _compare_scans_parser(sub)
