"""`label-issues`: tickets whose team looks mislabelled, from out-of-fold probabilities."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ticketnet.cli.common import ROUTER_HELP, router_weights


def _label_issues(args: argparse.Namespace) -> int:
    import torch

    from ticketnet.labels.run import label_issues

    # The folds run in the workers; this process ranks and computes the evidence of the top tickets, where a second
    # intra-op thread only waits on a busy 2-core machine (20 tickets: 205 s with 2 threads, 21 s with 1, measured
    # under load).
    torch.set_num_threads(1)

    folder = router_weights(args).parent
    result = label_issues(folder, Path(args.out), split=args.split, folds=args.folds, epochs=args.epochs,
                          source=args.source, workers=args.workers, scheduler=args.scheduler, method=args.method,
                          evidence_rows=args.evidence_rows, recompute=args.recompute,
                          log=lambda m: print(m, file=sys.stderr, flush=True),
                          ignore_size_limit=args.ignore_size_limit)
    s = result["settings"]
    print(f"{result['flagged']:,} of {result['tickets']:,} tickets flagged ({s['source']} out-of-fold, {s['folds']} "
          f"folds{', ' + str(s['epochs']) + ' epochs' if s['source'] == 'router' else ''}; "
          f"{s['seconds']:.0f} s for the folds) → {args.out}")
    if "measured" in result:
        m = result["measured"]
        print(f"against the split's {m['wrong_labels']:,} wrong labels: precision {m['precision']:.3f}, recall "
              f"{m['recall']:.3f}, top-100 precision {m['top_100_precision']}, top-500 {m['top_500_precision']}")
    for pair in result["overlapping_pairs"][:3]:
        print(f"overlap: {pair['team_a']} / {pair['team_b']}: about {pair['tickets']:,} tickets")
    return 0


def _label_issues_parser(sub) -> None:
    p = sub.add_parser("label-issues", help="rank the labels to doubt in a split: out-of-fold probabilities (k-fold "
                                            "on Dask) and cleanlab, with the per-team quality and overlapping teams")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--split", default="train", help="the split to check (default: train), or a labelled .csv")
    p.add_argument("--folds", type=int, default=5, help="folds (default 5; 3 is cheaper)")
    p.add_argument("--epochs", type=int, help="epochs per fold router (default: the router's recipe; fewer is "
                                              "cheaper, and recorded)")
    p.add_argument("--source", choices=("router", "baseline"), default="router",
                   help="whose out-of-fold probabilities: the router's recipe (an encoder router: its base "
                        "fine-tuned per fold, on splits of up to 5,000 tickets) or the TF-IDF + LR baseline (fast)")
    p.add_argument("--ignore-size-limit", action="store_true",
                   help="with an encoder router's --source router: fine-tune per fold beyond 5,000 tickets anyway "
                        "(hours on a CPU; the refusal gives the estimate)")
    p.add_argument("--method", choices=("self_confidence", "normalized_margin"), default="self_confidence",
                   help="cleanlab's label-quality score (default self_confidence)")
    p.add_argument("--workers", type=int, help="local cluster worker processes (default: one per core, at most one "
                                               "per fold)")
    p.add_argument("--scheduler", help="address of an existing Dask scheduler; 'synchronous': this process")
    p.add_argument("--evidence-rows", type=int, default=200, help="top tickets given token evidence (default 200)")
    p.add_argument("--recompute", action="store_true", help="ignore the cached out-of-fold probabilities")
    p.add_argument("--out", required=True, help="the ranked CSV (the summary goes beside it as .json)")
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.set_defaults(func=_label_issues)


def add_parsers(sub) -> None:
    _label_issues_parser(sub)
