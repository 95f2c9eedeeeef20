"""Command line: `python -m ticketnet {synth,train,baseline,evaluate,predictions,predict,scan,policy,compare,compare-scans,label-issues,routers,bench}`; errors print one line and exit non-zero."""

from __future__ import annotations

import argparse
import signal
import sys
from importlib import import_module

from ticketnet.cli.common import seed_list  # noqa: F401  (argparse's seed type, for tests and callers)

# One module per group of commands, each with add_parsers(sub) beside its handlers; help lists them in this order.
COMMANDS = ("synth", "train", "score", "scan", "policy", "compare", "labels", "routers", "bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ticketnet", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        import_module(f"ticketnet.cli.{module}").add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ticketnet._runtime.allocator import keep_freed_memory

    keep_freed_memory()                                 # steady speed for the repeated tensor work of every command
    # A terminated command (SIGTERM: a closed terminal, a job stopped) unwinds like Ctrl-C, so a half-written
    # router folder or output file is removed rather than left behind.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("ticketnet: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (ValueError, OSError, ImportError) as exc:  # DataError and WeightsError are ValueErrors
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"ticketnet {args.command}: error: {message}", file=sys.stderr)
        return 1
