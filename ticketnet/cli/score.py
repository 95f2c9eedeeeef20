"""`evaluate`, `baseline`, `predictions`, `predict`: a router scored, its baseline fitted, its tickets routed."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ticketnet.cli.common import ROUTER_HELP, router_weights


def _evaluate(args: argparse.Namespace) -> int:
    from ticketnet.data.tickets import load_split
    from ticketnet.loading import load_router
    from ticketnet.paths import router_data
    from ticketnet.training import evaluate, evaluate_probs, team_indices

    weights = router_weights(args)
    router = load_router(weights)                      # either kind
    folder = router_data(weights.parent)
    split = args.split or ("handwritten" if (folder / "handwritten.csv").is_file() else "test")
    path = Path(split) if split.endswith(".csv") else folder / f"{split}.csv"
    rows = load_split(path, router.teams)
    if router.kind == "tiny":
        m = evaluate(router.model, rows, router.vocab, router.teams)
    else:
        probs = router.predict_texts([r["text"] for r in rows])
        m = evaluate_probs(probs, team_indices(rows, router.teams), rows, router.teams)
    lo, hi = m["accuracy_interval"]
    print(f"{path}: {m['n']} tickets, accuracy {m['accuracy']:.4f} (95 % interval {lo:.3f}–{hi:.3f}), "
          f"macro F1 {m['macro_f1']:.4f}, ECE {m['ece']:.4f}"
          + (f", hard slice {m['hard_accuracy']:.4f} ({m['hard_n']})" if "hard_accuracy" in m else ""))
    recorded = router.meta.get("baseline", {}).get("metrics", {}).get(path.stem)
    if recorded is not None and path.parent == folder:
        print(f"a bag-of-words baseline (TF-IDF + logistic regression) routes {recorded['accuracy']:.4f} of these "
              f"tickets; this router {m['accuracy']:.4f}")
    width = max(len(t) for t in router.teams)
    for team, s in m["per_team"].items():
        print(f"  {team:<{width}} precision {s['precision']:.3f}  recall {s['recall']:.3f}  (n = {s['support']:.0f})")
    for style, s in m.get("per_style", {}).items():
        print(f"  style {style:<14} accuracy {s['accuracy']:.3f}  (n = {s['n']})")
    return 0


def _evaluate_parser(sub) -> None:
    p = sub.add_parser("evaluate", help="score the router on a labelled split (valid, test, handwritten, ...) or CSV")
    p.add_argument("split", nargs="?", help="split name in the router's data or a path to a .csv (default: "
                                            "handwritten where the data has it, else test)")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.set_defaults(func=_evaluate)


def _baseline(args: argparse.Namespace) -> int:
    from ticketnet.catalog import is_encoder

    weights = router_weights(args)
    log = lambda m: print(m, file=sys.stderr, flush=True)                  # noqa: E731
    if is_encoder(weights):
        from ticketnet.encoder.finetune import record_baseline

        base = record_baseline(weights.parent, log=log)
    else:
        from ticketnet.train import record_baseline

        base = record_baseline(weights, log=log)
    for split, m in base["metrics"].items():
        print(f"baseline on {split}: accuracy {m['accuracy']:.4f}, macro F1 {m['macro_f1']:.4f} (n = {m['n']:,})")
    print(f"recorded in {weights.parent / 'router.json'} (C {base['C']:g}, {base['seconds']:.0f} s)")
    return 0


def _baseline_parser(sub) -> None:
    p = sub.add_parser("baseline", help="fit the TF-IDF + logistic regression baseline on a router's splits and "
                                        "record it in its router.json (training does this too)")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.set_defaults(func=_baseline)


def _predictions(args: argparse.Namespace) -> int:
    from ticketnet.loading import load_router
    from ticketnet.paths import router_data
    from ticketnet.predictions import FOLDER, write_predictions

    weights = router_weights(args)
    manifest = write_predictions(load_router(weights), weights,
                                 Path(args.data) if args.data else router_data(weights.parent))
    for split, entry in manifest["splits"].items():
        print(f"{split}: {entry['tickets']:,} tickets, accuracy {entry['accuracy']:.4f}")
    print(f"written to {weights.parent / FOLDER}")
    return 0


def _predictions_parser(sub) -> None:
    p = sub.add_parser("predictions", help="write the router's predictions on valid, test and handwritten beside its "
                                           "weights (training does this too), for the dashboard's first page")
    p.add_argument("--data", help="folder with the split CSVs (default: the router's data)")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.set_defaults(func=_predictions)


def _predict(args: argparse.Namespace) -> int:
    import torch

    from ticketnet._runtime.atomic import atomic_text_writer
    from ticketnet.loading import load_router
    from ticketnet.predict import format_single, open_input, predict_stream

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    router = load_router(router_weights(args))           # either kind: predict reads any router
    if args.text is not None:
        report, notes = format_single(router, args.text)
        print(report)
        for note in notes:
            print(note, file=sys.stderr)
        return 0
    stream, source = open_input(args.csv)
    with stream:
        if args.out:
            with atomic_text_writer(args.out) as out:
                stats = predict_stream(router, stream, out, source, args.batch_size)
        else:
            stats = predict_stream(router, stream, sys.stdout, source, args.batch_size)
    if stats["truncated"]:
        print(f"note: {stats['truncated']} of {stats['tickets']} tickets were longer than "
              f"{router.max_len} tokens and were truncated (column 'truncated')", file=sys.stderr)
    if stats["threads"]:
        print(f"note: {stats['threads']:,} of {stats['tickets']:,} tickets are e-mail replies or forwards; the router "
              f"read their new message only (column 'set_aside_chars': the characters of quoted history, forwarded "
              f"chain and signature set aside)", file=sys.stderr)
    if "auto" in stats:
        print(f"note: the router's stored policy auto-routes {stats['auto']:,} of {stats['tickets']:,} tickets "
              f"(column 'auto'; 'team_set' is each ticket's shortlist)", file=sys.stderr)
    return 0


def _predict_parser(sub) -> None:
    p = sub.add_parser("predict", help="route tickets: a ticket_id,text CSV (file or stdin) or --text")
    p.add_argument("csv", nargs="?", help="input CSV with ticket_id,text ('-' or nothing: stdin)")
    p.add_argument("--text", help="route this one ticket and print the team probabilities")
    p.add_argument("--out", help="write the CSV here (atomically) instead of stdout")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.add_argument("--batch-size", type=int, default=512)
    p.set_defaults(func=_predict)


def add_parsers(sub) -> None:
    _evaluate_parser(sub)
    _baseline_parser(sub)
    _predictions_parser(sub)
    _predict_parser(sub)
