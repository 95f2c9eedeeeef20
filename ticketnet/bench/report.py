"""`python -m ticketnet bench`: run every case, print as it goes, and write the report as JSON."""

from __future__ import annotations

import json

from ticketnet._runtime.atomic import write_atomic
from ticketnet._runtime.timing import machine


def main(args) -> int:
    report = {"machine": machine(), "quick": bool(args.quick)}
    if getattr(args, "corpus", False):
        # The heavy corpus cases run on their own (minutes to an hour): the quick and default benches skip them.
        from pathlib import Path

        from ticketnet.bench.corpus import run_corpus

        sizes = tuple(int(x) for x in args.corpus_memory.split(",") if x.strip())
        report["corpus"] = run_corpus(Path(args.corpus_work), args.corpus_size, sizes,
                                      [Path(p) for p in args.corpus_page or []], log=print,
                                      encoder_size=getattr(args, "corpus_encoder", 0))
    else:
        from ticketnet.bench.cases import run_all

        report.update(run_all(quick=bool(args.quick), log=print))
    write_atomic(args.out, (json.dumps(report, indent=1) + "\n").encode("utf-8"))
    print(f"wrote {args.out}")
    return 0
