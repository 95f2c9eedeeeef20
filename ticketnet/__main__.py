"""Command line: `python -m ticketnet {synth,train,baseline,evaluate,predictions,predict,scan,policy,compare,compare-scans,label-issues,bench}`; errors print one line and exit non-zero."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

ROUTER_HELP = "a router folder (default: $TICKETNET_ROUTER, else the shipped weights/)"


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


def _router_weights(args: argparse.Namespace) -> Path:
    """The router.pt a command reads: --router DIR, else --weights FILE, else $TICKETNET_ROUTER / the shipped one."""
    from ticketnet.paths import weights_path

    if getattr(args, "router", None):
        folder = Path(args.router)
        if not folder.is_dir():
            raise ValueError(f"--router {folder}: not a folder (a router folder holds router.pt, vocab.json, "
                             f"router.json)")
        return folder / "router.pt"
    return Path(args.weights) if getattr(args, "weights", None) else weights_path()


def _report(card: dict) -> None:
    """The trained router's test figures beside its baseline's, per team."""
    t = card["metrics"]["test"]
    b = card["baseline"]["metrics"]["test"]
    lo, hi = t["accuracy_interval"]
    kept = (f"mean of epochs {'–'.join(map(str, card['train']['averaged_epochs']))}"
            if "averaged_epochs" in card["train"] else f"best epoch {card['train']['best_epoch']}")
    print(f"{kept} of {card['train']['epochs']} ({card['train']['recipe']} recipe): "
          f"test accuracy {t['accuracy']:.4f} (95 % interval {lo:.3f}–{hi:.3f}, n = {t['n']:,}), macro F1 "
          f"{t['macro_f1']:.4f}, ECE {t['ece']:.4f}"
          + (f", hard slice {t['hard_accuracy']:.4f}" if "hard_accuracy" in t else ""))
    print(f"a bag-of-words baseline (TF-IDF + logistic regression, C {card['baseline']['C']:g}) routes "
          f"{b['accuracy']:.4f} of the test tickets (macro F1 {b['macro_f1']:.4f}); this router {t['accuracy']:.4f}")
    width = max(len(team) for team in card["teams"])
    for team, s in t["per_team"].items():
        print(f"  {team:<{width}}  recall {s['recall']:.3f}  baseline {b['recall'][team]:.3f}  (n = {s['support']:.0f})")
    for name in ("handwritten_dev", "handwritten"):
        if name in card["metrics"]:
            print(f"{name}: accuracy {card['metrics'][name]['accuracy']:.4f}, ECE {card['metrics'][name]['ece']:.4f}")


def _train(args: argparse.Namespace) -> int:
    from ticketnet.data.export import ExportColumns, parse_fractions
    from ticketnet.train import TrainConfig, train, train_export, train_seeds

    sizes = {k: v for k, v in (("d", args.d), ("heads", args.heads), ("blocks", args.blocks), ("d_ff", args.d_ff),
                               ("max_len", args.max_len)) if v is not None}
    if args.init_from and sizes:
        raise ValueError("--init-from keeps the starting router's shape; leave out "
                         + ", ".join(f"--{k.replace('_', '-')}" for k in sizes))
    cfg = TrainConfig(seed=TrainConfig.seed if args.seed is None else args.seed, epochs=args.epochs,
                      threads=args.threads, recipe=args.recipe, lr=args.lr, init_from=args.init_from, keep=args.keep,
                      keep_from=args.keep_from, new_vocabulary=args.new_vocabulary, **sizes)
    data = Path(args.data) if args.data else None
    out = Path(args.out) if args.out else None
    if args.keep_all_seeds and not args.seeds:
        raise ValueError("--keep-all-seeds keeps every run of a seed search; give --seeds too (e.g. --seeds 0-4)")
    evaluate_on = Path(args.evaluate_on) if args.evaluate_on else None
    if evaluate_on is not None:
        if args.seeds or (data is not None and data.is_file()):
            raise ValueError("--evaluate-on scores one run on a folder of splits: leave out --seeds and an export "
                             "--data FILE")
        if not (evaluate_on / "train.csv").is_file():
            raise ValueError(f"--evaluate-on {evaluate_on}: no train.csv there (a folder of train/valid/test.csv)")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if data is not None and data.is_file():
        if out is None:
            raise ValueError("--data FILE needs --out DIR (a new router folder, e.g. routers/mine)")
        texts = tuple(c.strip() for group in (args.text_column or ["text"]) for c in group.split(",") if c.strip())
        columns = ExportColumns(texts, args.team_column or "team", args.id_column or "ticket_id",
                                id_given=args.id_column is not None, text_given=bool(args.text_column))
        card = train_export(data, out, columns, parse_fractions(args.split), cfg, args.seeds, log,
                            keep_all=args.keep_all_seeds, split_seed=args.split_seed)
    else:
        if data is not None and not data.is_dir():
            raise ValueError(f"--data {data}: no such file or folder")
        if (args.text_column or args.team_column or args.id_column or args.split != DEFAULT_SPLIT
                or args.split_seed is not None):
            raise ValueError("--text-column, --team-column, --id-column, --split and --split-seed apply to --data "
                             "FILE (an export), not to a folder of train/valid/test CSVs")
        card = (train_seeds(args.seeds, data, out, cfg, log, keep_all=args.keep_all_seeds) if args.seeds
                else train(data, out, cfg, log, evaluate_on=evaluate_on))
    _report(card)
    return 0


def _train_parser(sub) -> None:
    from ticketnet.paths import TRAIN_SEED

    p = sub.add_parser("train", help="train a router on a folder of splits or on one export file, written atomically")
    p.add_argument("--data", help="a folder with train/valid/test.csv (default: data/), or one CSV/Parquet export "
                                  "to split into train/valid/test inside the router folder")
    p.add_argument("--out", help="the router folder (default: weights/; needed with an export, e.g. routers/mine)")
    p.add_argument("--text-column", action="append", metavar="NAME[,NAME]",
                   help="export column(s) holding the text, joined one per line (default: text, else the subject, title, "
                        "body, description or message columns the export has; e.g. subject,body)")
    p.add_argument("--team-column", help="export column holding the team (default: team)")
    p.add_argument("--id-column", help="export column holding the ticket id (default: ticket_id; made up if absent)")
    p.add_argument("--split", default=DEFAULT_SPLIT, help=f"train,valid,test fractions of an export, stratified by "
                                                          f"team (default: {DEFAULT_SPLIT})")
    seeds = p.add_mutually_exclusive_group()
    seeds.add_argument("--seed", type=int, help=f"the run's seed, and the export split's unless --split-seed is "
                                                f"given (default: {TRAIN_SEED})")
    seeds.add_argument("--seeds", type=seed_list, metavar="A-B|A,B,...",
                       help="train once per seed and keep the best by the epoch rule (how the shipped seed was chosen: "
                            "--seeds 0-4, 35 min on 2 cores)")
    p.add_argument("--split-seed", type=int, metavar="S",
                   help="seed of an export's train/valid/test split (default: the run's --seed); two runs with one "
                        "split seed share their splits, so the Compare page can set them side by side")
    p.add_argument("--keep-all-seeds", action="store_true",
                   help="with --seeds: keep every seed's run as its own router folder, OUT/seeds/seed-<k>/ (the "
                        "dashboard lists them as <name>/seed-<k> to compare)")
    p.add_argument("--epochs", type=int,
                   help="passes over train (default: by the recipe, 12 large, 40 small, 3 finetune)")
    p.add_argument("--recipe", choices=("large", "small", "finetune"),
                   help="training recipe (default: finetune with --init-from, else small below 5,000 training "
                        "tickets, else large)")
    p.add_argument("--init-from", metavar="ROUTER",
                   help="start from this router (its folder or router.pt): its shape, vocabulary, teams and weights, "
                        "then the finetune recipe (3 epochs at lr 1e-3); e.g. --init-from weights")
    p.add_argument("--new-vocabulary", action="store_true",
                   help="with --init-from: build the vocabulary from the new training tickets (as from scratch); "
                        "a word the router knew keeps its embedding, a new one starts at its <unk> embedding")
    p.add_argument("--keep", type=float, default=0.0, metavar="W",
                   help="weight of a distillation term that keeps a router's probabilities on the training tickets "
                        "it already routes right: --keep-from's, else --init-from's (default 0: none)")
    p.add_argument("--keep-from", metavar="ROUTER",
                   help="with --keep: the router to keep (its folder or router.pt; its own vocabulary, same teams)")
    p.add_argument("--evaluate-on", metavar="FOLDER",
                   help="score the router on this folder's splits instead: its card, baseline and stored "
                        "predictions (--data is trained on and picks the epoch); e.g. a fine-tune on a regenerated "
                        "draw, synth --settled-share 0.15 --out X, scored on the shipped data/")
    p.add_argument("--lr", type=float, help="peak learning rate (default: by the recipe)")
    p.add_argument("--d", type=int, help="model width (default 64)")
    p.add_argument("--heads", type=int, help="heads per block (default 4)")
    p.add_argument("--blocks", type=int, help="encoder blocks (default 2)")
    p.add_argument("--d-ff", type=int, help="feed-forward width (default 128)")
    p.add_argument("--max-len", type=int, help="tokens read per ticket (default 256)")
    p.add_argument("--threads", type=int, default=2)
    p.set_defaults(func=_train)


def _evaluate(args: argparse.Namespace) -> int:
    from ticketnet.data.tickets import load_split
    from ticketnet.paths import router_data
    from ticketnet.router import Router
    from ticketnet.train import evaluate

    weights = _router_weights(args)
    router = Router.load(weights)
    folder = router_data(weights.parent)
    split = args.split or ("handwritten" if (folder / "handwritten.csv").is_file() else "test")
    path = Path(split) if split.endswith(".csv") else folder / f"{split}.csv"
    m = evaluate(router.model, load_split(path, router.teams), router.vocab, router.teams)
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
    from ticketnet.train import record_baseline

    weights = _router_weights(args)
    base = record_baseline(weights, log=lambda m: print(m, file=sys.stderr, flush=True))
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
    from ticketnet.paths import router_data
    from ticketnet.predictions import FOLDER, write_predictions
    from ticketnet.router import Router

    weights = _router_weights(args)
    manifest = write_predictions(Router.load(weights), weights,
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
    from ticketnet.predict import format_single, open_input, predict_stream
    from ticketnet.router import Router

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    router = Router.load(_router_weights(args))
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

    summary = run_scan(args.input if len(args.input) > 1 else args.input[0], args.out, level=args.level, scheduler=args.scheduler, workers=args.workers,
                       overwrite=args.overwrite, partition_size=args.partition_size, weights=_router_weights(args),
                       progress=progress, log=lambda m: print(m, file=sys.stderr))
    print(file=sys.stderr)
    routing = ", ".join(f"{t} {c:,}" for t, c in summary["routing"].items())
    print(f"scanned {summary['tickets']:,} tickets at level {summary['level']} in {summary['seconds']:.1f} s "
          f"into {args.out}")
    print(f"routing: {routing}")
    if summary["accuracy"] is not None:
        print(f"accuracy on the {summary['labelled']:,} labelled tickets: {summary['accuracy']:.4f}")
    if ROLLOUT.name in summary[TAU]:
        print(f"mean Kendall τ, rollout vs deletion effect: {summary[TAU][ROLLOUT.name]['mean']:.3f}")
    return 0


def _scan_parser(sub) -> None:
    p = sub.add_parser("scan", help="interpret a whole ticket stream on Dask into a folder of Parquet results")
    p.add_argument("input", nargs="+", help="CSVs (ticket_id,text[,team]), Parquet files, or folders of them")
    p.add_argument("--out", required=True, help="the scan folder (resumed if it holds this scan unfinished)")
    p.add_argument("--level", choices=("route", "effects", "full"), default="full",
                   help="route: team and confidence; effects: + deletion effects, τ, token aggregates; full: + ERASER")
    p.add_argument("--scheduler", help="address of an existing Dask scheduler (tcp://host:8786); default: a local "
                                       "cluster started for this scan ('synchronous': no cluster, this process)")
    p.add_argument("--workers", type=int, help="local cluster worker processes (default: one per core)")
    p.add_argument("--overwrite", action="store_true", help="start afresh in a folder holding another scan")
    p.add_argument("--partition-size", type=int, default=50_000, help="tickets per task (default 50,000)")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.set_defaults(func=_scan)


def _interval(stat: dict, fmt: str = ".3f") -> str:
    if stat["value"] is None:
        return "–"
    if stat["low"] is None:
        return f"{stat['value']:{fmt}}"
    return f"{stat['value']:{fmt}} ({stat['low']:{fmt}}–{stat['high']:{fmt}})"


def _print_policy_result(result: dict, policy, teams) -> None:
    t, s = result["thresholds"], result["sets"]
    o = t["overall"]
    print(f"{result['split']} ({o['n']:,} tickets, {result['source']}):")
    width = max(8, *(len(team) for team in teams))
    print(f"  {'team':<{width}}  threshold  predicted  auto-routed  coverage (95 % interval)  "
          f"precision (95 % interval)  misroutes")
    for team in teams:
        row = t["per_team"][team]
        threshold = "never" if row["threshold"] == float("inf") else f"{row['threshold']:.4f}"
        print(f"  {team:<{width}}  {threshold:>9}  {row['predicted']:>9,}  {row['auto_routed']:>11,}  "
              f"{_interval(row['coverage']):<24}  {_interval(row['precision']):<25}  {row['misroutes']:>9,}")
    print(f"  overall: {o['auto_routed']:,} of {o['n']:,} auto-routed, coverage {_interval(o['coverage'])}, "
          f"precision {_interval(o['precision'])}, {o['misroutes']:,} misroutes "
          f"({_interval(o['misroutes_per_10000'], '.0f')} per 10,000 tickets); {o['to_person']:,} to a person")
    promised = 1 - policy.conformal.alpha
    sizes = ", ".join(f"{size}: {count:,}" for size, count in s["size_counts"].items())
    verdict = ""
    if s["coverage"]["high"] < promised:
        verdict = (f"; short of the promised {promised:g}: these tickets are not exchangeable with "
                   f"{policy.conformal.fitted_on}, where the guarantee holds")
    print(f"  sets ({policy.conformal.method.upper()}, alpha {policy.conformal.alpha:g}): coverage "
          f"{_interval(s['coverage'])} for a promised {promised:g}, mean size {s['mean_size']:.2f} "
          f"(sizes {sizes}){verdict}")
    a = result["aurc"]
    print(f"  risk–coverage area {a['router']:.4f} (oracle {a['oracle']:.4f}, random ranking {a['random ranking']:.4f})")


def _policy(args: argparse.Namespace) -> int:
    from ticketnet.card import load_card
    from ticketnet.paths import router_data
    from ticketnet.policy import load_policy, store_policy
    from ticketnet.policy._checks import check_alpha, check_target
    from ticketnet.policy.fit import FIT_SPLIT, REPORT_SPLITS, evaluate_policy, fit_policy, split_scores

    weights = _router_weights(args)
    card = load_card(weights)
    teams = card.teams
    data = router_data(weights.parent)
    fitting = args.precision is not None or args.coverage is not None
    router = None                                      # loaded once, only if some split must be routed now
    if fitting:
        if args.alpha is None:
            raise ValueError("give --alpha (e.g. 0.05: sets that hold the true team 95 % of the time)")
        check_alpha(args.alpha)
        if args.precision is not None:
            check_target("precision", args.precision)
        else:
            check_target("coverage", args.coverage)
        fit = split_scores(weights, FIT_SPLIT, data)
        if fit is None:
            raise ValueError(f"{data / (FIT_SPLIT + '.csv')}: not found; a policy is fitted on the router's valid split")
        policy = fit_policy(fit, teams, precision=args.precision, coverage=args.coverage, alpha=args.alpha,
                            method=args.method, guarantee=args.guarantee)
    else:
        if args.alpha is not None or args.method != "lac" or args.guarantee is not None:
            raise ValueError("--alpha, --method and --guarantee fit a policy: give --precision or --coverage too")
        if not args.show:
            raise ValueError("give --precision or --coverage (a target to fit), or --show for the stored policy")
        policy = load_policy(card)
        if policy is None:
            raise ValueError(f"{weights.parent / 'router.json'}: no stored policy; fit one with --precision or "
                             f"--coverage")
    target = ", ".join(f"{k} {v:g}" for k, v in policy.thresholds.target.items())
    f = policy.fitted
    print(f"fitted on {f.get('split', FIT_SPLIT)} ({f.get('n', 0):,} tickets, {f.get('source', '?')}, "
          f"{f.get('date', '?')}): target {target}; {policy.conformal.method.upper()} sets at alpha "
          f"{policy.conformal.alpha:g} (quantile {policy.conformal.quantile:.4f})")
    if not policy.thresholds.reached:
        print(f"  the target is not reached by every team on {f.get('split', FIT_SPLIT)}; the highest precision "
              f"every team reaches is {policy.thresholds.best_reachable:.4f}")
    for message in policy.thresholds.messages:
        print(f"  {message}")
    reported = 0
    for split in REPORT_SPLITS:
        scores = split_scores(weights, split, data, router)
        if scores is None:
            continue
        _print_policy_result(evaluate_policy(policy, scores, teams), policy, teams)
        reported += 1
    if not reported:
        print(f"no test or handwritten split in {data}: nothing to report the policy on (never on the split it "
              f"was fitted on)")
    if fitting and not args.show:
        path = store_policy(weights.parent, policy)
        print(f"stored in {path} under \"policy\"; predict and scan now add the columns auto and team_set")
    return 0


def _policy_parser(sub) -> None:
    p = sub.add_parser("policy", help="fit per-team auto-routing thresholds and conformal prediction sets on valid, "
                                      "report them on test and handwritten, and store them in router.json")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--precision", type=float, help="target precision of the auto-routed tickets (e.g. 0.98)")
    target.add_argument("--coverage", type=float, help="target automation rate: the share auto-routed (e.g. 0.6)")
    p.add_argument("--alpha", type=float, help="the sets miss the true team at most this often (e.g. 0.05)")
    p.add_argument("--method", choices=("lac", "aps"), default="lac",
                   help="conformal score: lac (smallest sets) or aps (sets that grow with doubt); default lac")
    p.add_argument("--guarantee", type=float, metavar="DELTA",
                   help="with --precision: thresholds whose precision holds with probability >= 1 - DELTA on tickets "
                        "like valid (exact binomial tests), instead of the lowest that reach it on valid")
    p.add_argument("--show", action="store_true", help="report without storing; alone: the stored policy")
    p.add_argument("--router", help=ROUTER_HELP)
    p.add_argument("--weights", help="older: a router.pt with vocab.json and router.json beside it")
    p.set_defaults(func=_policy)


# -- compare (issue 25): two routers on one split, two scans of one input -------------------------------------------
def _write_json(path: str, result: dict) -> None:
    import json

    from ticketnet._runtime.atomic import write_atomic

    write_atomic(Path(path), (json.dumps(result, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    print(f"written to {path}")


def _compare(args: argparse.Namespace) -> int:
    from ticketnet.compare.report import compare_lines
    from ticketnet.compare.tables import compare_routers

    if args.resamples < 1:
        raise ValueError(f"--resamples {args.resamples}: needs at least 1")
    result = compare_routers(Path(args.router_a), Path(args.router_b), args.split, args.resamples, args.seed)
    print("\n".join(compare_lines(result)))
    if args.out:
        _write_json(args.out, result)
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
        _write_json(args.out, result)
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


def _label_issues(args: argparse.Namespace) -> int:
    import torch

    from ticketnet.labels.run import label_issues

    # The folds run in the workers; this process ranks and computes the evidence of the top tickets, where a second
    # intra-op thread only waits on a busy 2-core machine (20 tickets: 205 s with 2 threads, 21 s with 1, measured
    # under load).
    torch.set_num_threads(1)

    folder = _router_weights(args).parent
    result = label_issues(folder, Path(args.out), split=args.split, folds=args.folds, epochs=args.epochs,
                          source=args.source, workers=args.workers, scheduler=args.scheduler, method=args.method,
                          evidence_rows=args.evidence_rows, recompute=args.recompute,
                          log=lambda m: print(m, file=sys.stderr, flush=True))
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
                   help="whose out-of-fold probabilities: the router's recipe or the TF-IDF + LR baseline (fast)")
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


def _bench(args: argparse.Namespace) -> int:
    from ticketnet.bench.report import main as bench_main
    from ticketnet.paths import ROUTER_ENV

    if args.router:                                    # the bench's servers and cases all read the router from here
        os.environ[ROUTER_ENV] = str(_router_weights(args).parent.resolve())

    return bench_main(args)


def _bench_parser(sub) -> None:
    p = sub.add_parser("bench", help="measure the hot paths side by side and write a JSON report")
    p.add_argument("--quick", action="store_true", help="CI-sized run")
    p.add_argument("--out", default="bench.json", help="JSON report path")
    p.add_argument("--corpus", action="store_true", help="run the corpus cases instead (scan throughput, worker "
                                                         "memory, Corpus page timings; minutes to an hour)")
    p.add_argument("--corpus-size", type=int, default=20_000, help="tickets for the throughput case (0: skip)")
    p.add_argument("--corpus-memory", default="20000,100000", help="corpus sizes for the memory case ('' : skip)")
    p.add_argument("--corpus-page", action="append", metavar="SCAN_DIR", help="time the Corpus page on this scan")
    p.add_argument("--corpus-work", default="artifacts/bench/corpus", help="where corpora and scans are written")
    p.add_argument("--router", help=ROUTER_HELP)
    p.set_defaults(func=_bench)


DEFAULT_SPLIT = "0.8,0.1,0.1"


def seed_list(text: str) -> list[int]:
    """`0-4` or `0,3,7` as a list of distinct seeds, for argparse."""
    try:
        if "-" in text.strip("-"):
            a, b = (int(x) for x in text.split("-", 1))
            seeds = list(range(a, b + 1))
        else:
            seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seed range (0-4) or list (0,3,7)") from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"{text!r} names no seed or the same seed twice")
    return seeds


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ticketnet", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_synth_parser, _train_parser, _evaluate_parser, _baseline_parser, _predictions_parser, _predict_parser, _scan_parser, _policy_parser, _compare_parser, _compare_scans_parser, _label_issues_parser, _bench_parser):
        add(sub)
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


if __name__ == "__main__":
    sys.exit(main())
