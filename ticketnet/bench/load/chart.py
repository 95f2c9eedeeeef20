"""The capacity curve as an SVG for the docs: p50 and p95 action time against concurrent analysts, per deployment.

    python -m ticketnet.bench.load.chart --out docs/img/capacity.svg "1 server=artifacts/load/capacity-1.json" \
        "2 servers behind HAProxy=artifacts/load/capacity-2.json"

Each input is a report of `python -m ticketnet.bench.load.run --capacity` (its `curve`); the output is written
atomically, with no timestamp in it, so the same reports give the same file.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from ticketnet._runtime.atomic import write_atomic


def curve_points(report: Mapping) -> list[tuple[int, float, float, float]]:
    """(analysts, p50 s, p95 s, worst page's p95 s) of each step of a capacity report, in step order."""
    points = []
    for step in report["curve"]:
        pages = [v for v in step.get("p95_s_by_page", {}).values() if v is not None]
        points.append((int(step["sessions"]), float(step["p50_s"]), float(step["p95_s"]),
                       max(pages) if pages else float(step["p95_s"])))
    return points


def capacity_svg(reports: Mapping[str, Mapping], target_s: float = 1.0) -> str:
    """One panel: for each labelled report, p50 (dashed) and the worst page's p95 (solid) against analysts, with
    the target as a horizontal line. Returns the SVG text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "ticketnet"                       # stable ids: the same input, the same file
    plt.rcParams["svg.fonttype"] = "none"                            # text as text: small, selectable
    fig, ax = plt.subplots(figsize=(10.5, 4.6), dpi=100)
    try:
        for i, (label, report) in enumerate(reports.items()):
            pts = curve_points(report)
            if not pts:
                continue
            n = [p[0] for p in pts]
            colour = f"C{i}"
            ax.plot(n, [p[3] for p in pts], "-o", color=colour, label=f"{label}: p95, worst page")
            ax.plot(n, [p[1] for p in pts], "--", color=colour, alpha=0.8, label=f"{label}: p50, all actions")
        ax.axhline(target_s, color="0.3", linewidth=1, linestyle=":")
        ax.annotate(f"target: p95 ≤ {target_s:g} s", (0.01, target_s), xycoords=("axes fraction", "data"),
                    textcoords="offset points", xytext=(2, 4), fontsize=9, color="0.3")
        ax.set_xlabel("concurrent analysts (one action every 10 s each)")
        ax.set_ylabel("action time, s (message sent → run finished)")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)   # beside, never on a curve
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
        return buf.getvalue()
    finally:
        plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ticketnet.bench.load.chart", description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="+", metavar="LABEL=REPORT.json")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--target", type=float, default=1.0, help="the p95 target line, s (default 1)")
    args = ap.parse_args(argv)
    reports = {}
    for item in args.reports:
        label, sep, path = item.partition("=")
        if not sep or not label:
            print(f"error: {item!r} is not LABEL=REPORT.json", file=sys.stderr)
            return 2
        if label in reports:                      # a second curve under one label would replace the first unseen
            print(f"error: the label {label!r} is given twice; each curve needs its own", file=sys.stderr)
            return 2
        try:
            reports[label] = json.loads(Path(path).read_text())
            curve_points(reports[label])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: {path} is not a capacity report ({type(exc).__name__}: {exc})", file=sys.stderr)
            return 2
    write_atomic(args.out, capacity_svg(reports, args.target).encode())
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
