"""`synth`: the generator's splits, or a corpus of Parquet files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _synth(args: argparse.Namespace) -> int:
    from ticketnet.data.synth import write_splits
    from ticketnet.paths import CORPUS_SEED, SYNTH_SEED, data_dir

    if args.corpus is not None:
        import time

        from ticketnet.data.synth.corpus import write_corpus

        if not args.out:
            raise ValueError("--corpus needs --out DIR (the shipped data/ holds the splits only)")
        t0 = time.perf_counter()

        def progress(done: int, total: int) -> None:
            print(f"\r{done:,} of {total:,} tickets ({done / (time.perf_counter() - t0):,.0f}/s)", end="",
                  file=sys.stderr, flush=True)

        paths = write_corpus(args.corpus, Path(args.out), seed=CORPUS_SEED if args.seed is None else args.seed,
                             progress=progress)
        print(file=sys.stderr)
        print(f"{args.corpus:,} tickets in {len(paths)} Parquet files under {args.out} "
              f"({time.perf_counter() - t0:.1f} s)")
        return 0

    paths = write_splits(Path(args.out) if args.out else data_dir(), seed=SYNTH_SEED if args.seed is None else args.seed,
                         settled_share=args.settled_share)
    for split, path in paths.items():
        print(f"{split}: {path}")
    return 0


def _synth_parser(sub) -> None:
    from ticketnet.paths import SYNTH_SEED

    p = sub.add_parser("synth", help="write data/train.csv, valid.csv, test.csv from the fixed-seed generator")
    p.add_argument("--out", help="folder to write to (default: the shipped data/)")
    p.add_argument("--seed", type=int, help=f"generator seed (default: {SYNTH_SEED}; with --corpus its own)")
    p.add_argument("--corpus", type=int, metavar="N",
                   help="write N corpus tickets (ids C-NNNNNNNN) as Parquet files of 50,000 rows under --out")
    p.add_argument("--settled-share", type=float, default=0.0, metavar="P",
                   help="share of replies that close an earlier, settled matter of another team before or after the "
                        "request (default 0: the shipped splits have none)")
    p.set_defaults(func=_synth)


def add_parsers(sub) -> None:
    _synth_parser(sub)
