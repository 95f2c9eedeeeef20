"""`bench`: the hot paths measured side by side."""

from __future__ import annotations

import argparse
import os

from ticketnet.cli.common import ROUTER_HELP, router_weights


def _bench(args: argparse.Namespace) -> int:
    from ticketnet.bench.report import main as bench_main
    from ticketnet.paths import ROUTER_ENV

    if args.router:                                    # the bench's servers and cases all read the router from here
        os.environ[ROUTER_ENV] = str(router_weights(args).parent.resolve())

    return bench_main(args)


def _bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="measure the hot paths side by side and write a JSON report")
    p.add_argument("--quick", action="store_true", help="CI-sized run")
    p.add_argument("--out", default="bench.json", help="JSON report path")
    p.add_argument("--corpus", action="store_true", help="run the corpus cases instead (scan throughput, worker "
                                                         "memory, Corpus page timings; minutes to an hour)")
    p.add_argument("--corpus-size", type=int, default=20_000, help="tickets for the throughput case (0: skip)")
    p.add_argument("--corpus-memory", default="20000,100000", help="corpus sizes for the memory case ('' : skip)")
    p.add_argument("--corpus-encoder", type=int, default=300, metavar="N",
                   help="test tickets for the encoder router's scan case (weights/larkfield-minilm; 0: skip)")
    p.add_argument("--corpus-page", action="append", metavar="SCAN_DIR", help="time the Corpus page on this scan")
    p.add_argument("--corpus-work", default="artifacts/bench/corpus", help="where corpora and scans are written")
    p.add_argument("--router", help=ROUTER_HELP)
    p.set_defaults(func=_bench)


def add_parsers(sub) -> None:
    _bench_parser(sub)
