"""`python -m ticketnet bench`: run every case, print as it goes, and write the report as JSON."""

from __future__ import annotations

import json

from ticketnet._runtime.atomic import write_atomic
from ticketnet._runtime.timing import machine


def main(args) -> int:
    from ticketnet.bench.cases import run_all

    report = {"machine": machine(), "quick": bool(args.quick)}
    report.update(run_all(quick=bool(args.quick), log=print))
    write_atomic(args.out, (json.dumps(report, indent=1) + "\n").encode("utf-8"))
    print(f"wrote {args.out}")
    return 0
