"""Train a router on a folder of splits or on one export file, keep the best epoch on valid, and write its folder atomically."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F

from ticketnet._runtime.atomic import staged_folder, write_atomic
from ticketnet._runtime.hashing import file_sha256
from ticketnet.baseline import fit_baseline
from ticketnet.catalog import SEEDS_FOLDER  # where `--keep-all-seeds` keeps each run
from ticketnet.data.export import ExportColumns, read_export, split_export, splits_csv
from ticketnet.data.text import UNK_ID, Vocab
from ticketnet.data.thread import split_thread
from ticketnet.data.tickets import DataError, load_split, team_list, teams_of
from ticketnet.distill import SOFT_LABELS_FILE, Distillation, Unlabelled, WordVectors
from ticketnet.metrics import fit_temperature
from ticketnet.nn.transformer import TinyTransformer
from ticketnet.paths import ROUTER_DATA, data_dir, weights_dir
from ticketnet.predictions import write_predictions
from ticketnet.router import Router
from ticketnet.training import (
    HANDWRITTEN,
    UNLABELLED,
    Teacher,
    TrainConfig,
    WeightAverage,
    encode_rows,
    encode_texts,
    epoch_score,
    evaluate,
    fold_temperature,
    lr_schedule,
    ood_thresholds,
    predict_logits,
    predict_seqs,
    pretrain,
    raw_logits,
    train_epoch,
)

ROUTER_MARKER = "router.json"      # what makes a folder a router's, so `--out` may replace it


def new_model(cfg: TrainConfig, train_rows: list[dict], n_classes: int) -> tuple[Vocab, TinyTransformer]:
    """The vocabulary of `train_rows` and an untrained model of `cfg`'s shape with its embeddings at the recipe's
    scale: what every training run (a router, a label-issues fold) starts from. `cfg` must be resolved."""
    vocab = Vocab([split_thread(r["text"]).new for r in train_rows], min_freq=cfg.min_freq)
    model = TinyTransformer(cfg.model_config(len(vocab), n_classes))
    if cfg.embed_scale != 1.0:
        with torch.no_grad():
            model.embed.weight.mul_(cfg.embed_scale)
            model.position.weight.mul_(cfg.embed_scale)
    return vocab, model


def router_file(path: str | Path) -> Path:
    """A router's router.pt, given it or its folder."""
    path = Path(path)
    return path / "router.pt" if path.is_dir() else path


def adopt_vocabulary(model: TinyTransformer, old: Vocab, new: Vocab) -> TinyTransformer:
    """`model` (of vocabulary `old`) on vocabulary `new`: every weight kept, each token's embedding row taken from its
    row in `old`, a token `old` lacks given old's <unk> row, so the model reads every text as it did before."""
    adopted = TinyTransformer(replace(model.config, vocab_size=len(new)))
    state = model.state_dict()
    rows = torch.tensor([old.stoi.get(tok, UNK_ID) for tok in new.itos])          # (len(new),)
    state["embed.weight"] = state["embed.weight"][rows]                              # (len(new), d)
    adopted.load_state_dict(state)
    return adopted


def start_from(cfg: TrainConfig) -> tuple[Router, TinyTransformer]:
    """The router `cfg.init_from` names, and a trainable copy of its model: its dropout set to the recipe's, raw logits
    (a new temperature is fitted at the end)."""
    base = Router.load(router_file(cfg.init_from))
    return base, raw_logits(base, cfg.dropout)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def load_splits(data: Path, teams: Sequence[str] | None = None) -> tuple[tuple[str, ...], list[dict], dict]:
    """The teams (`teams`, else those of the training split, `teams_of`), the training rows, and the evaluated
    splits by name: valid, test and the hand-written sets the folder has, each checked against the teams."""
    train_rows = load_split(data / "train.csv", teams)
    teams = tuple(teams) if teams is not None else teams_of(train_rows, data)
    evaluated = {name: load_split(data / f"{name}.csv", teams) for name in ("valid", "test", *HANDWRITTEN)
                 if name in ("valid", "test") or (data / f"{name}.csv").is_file()}
    return teams, train_rows, evaluated


def _fit(data: Path, out: Path, cfg: TrainConfig, log: Callable[[str], None], extra: dict | None = None,
         baseline: dict | None = None, evaluate_on: Path | None = None,
         distillation: Distillation | None = None, unlabelled: Unlabelled | None = None,
         word_vectors: WordVectors | None = None) -> dict:
    """Train on the splits in `data`, keep the best valid epoch (or the mean of the last epochs), and write the
    router's files into `out` (a folder being staged: nobody reads it yet). `baseline`: one already fitted on
    these splits (a seed search fits it once). Returns the card.

    `evaluate_on`: another folder of splits, the router's home: its card (data hashes, metrics, OOD thresholds,
    baseline) and stored predictions are measured there, while `data` is trained on and picks the epoch (with the
    home's hand-written development set where `data` has none) and fits the temperature; `data`'s own hashes,
    metrics and baseline go under the card's `train.data`. A fine-tune on a regenerated draw of the generator is
    scored this way on the shipped splits it did not change.

    `unlabelled`: texts without teams; they join the vocabulary and `cfg.pretrain_epochs` of masked-token
    pretraining. `distillation`: a teacher whose probabilities on every training text (the unlabelled ones too,
    which then join the routing epochs with no label) the student also learns, with weight `cfg.distill`; they are
    written to the folder's soft_labels.parquet. `word_vectors(words, d, scale)`: each word's starting embedding
    (a pretrained encoder's, `ticketnet.encoder.word_vectors`), for a router trained from scratch."""
    if cfg.distill and distillation is None:
        raise ValueError("--distill weighs a teacher's soft labels: name the teacher with --teacher")
    if word_vectors is not None and cfg.init_from:
        raise ValueError("--word-vectors starts a new router's embeddings; --init-from keeps the starting router's")
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    rng = random.Random(cfg.seed)
    aug_rng = random.Random(cfg.seed + 1)
    base = None
    if cfg.init_from:
        cfg = cfg.resolved(0)
        base, model = start_from(cfg)
        vocab = base.vocab
    teams, train_rows, evaluated = load_splits(data, base.teams if base else None)
    valid_rows = evaluated["valid"]
    hand = {name: rows for name, rows in evaluated.items() if name in HANDWRITTEN}
    home_train, home = (load_splits(evaluate_on, teams)[1:] if evaluate_on is not None else (train_rows, evaluated))
    if "handwritten_dev" not in hand and "handwritten_dev" in home:
        hand["handwritten_dev"] = home["handwritten_dev"]
    extra_texts = unlabelled.texts if unlabelled is not None else []
    if base is None:
        cfg = cfg.resolved(len(train_rows))
        vocab, model = new_model(cfg, [*train_rows, *({"text": t} for t in extra_texts)], len(teams))
    elif cfg.new_vocabulary:
        vocab = Vocab([split_thread(t).new for t in (*(r["text"] for r in train_rows), *extra_texts)],
                      min_freq=cfg.min_freq)
        model = adopt_vocabulary(model, base.vocab, vocab)
    teacher = None
    if cfg.keep:
        source = Router.load(router_file(cfg.keep_from)) if cfg.keep_from else base
        if tuple(source.teams) != tuple(teams):
            raise DataError(f"--keep-from {cfg.keep_from}: its teams ({team_list(source.teams)}) are not the ones "
                            f"trained here ({team_list(teams)})")
        teacher = Teacher.of(source, vocab)
    seqs, labels = encode_rows(train_rows, vocab, model.config.max_len, teams)
    extra_seqs = encode_texts([split_thread(t).new for t in extra_texts], vocab, model.config.max_len)
    soft, added = None, ({"unlabelled": unlabelled.record} if unlabelled is not None else {})
    if word_vectors is not None:
        log(f"word vectors for {len(vocab) - 2:,} words from {word_vectors.record['name']}")
        with torch.no_grad():                 # <pad> and <unk> keep the recipe's start
            model.embed.weight[2:] = word_vectors(vocab.itos[2:], model.config.d, cfg.embed_scale)
        added["word_vectors"] = {**word_vectors.record, "words": len(vocab) - 2, "seconds": word_vectors.seconds}
    if cfg.pretrain_epochs:
        log(f"masked-token pretraining on {len(seqs) + len(extra_seqs):,} texts, {cfg.pretrain_epochs} epochs")
        began = time.perf_counter()
        losses = pretrain(model, seqs + extra_seqs, cfg, random.Random(cfg.seed + 2), log)
        added["pretraining"] = {"epochs": cfg.pretrain_epochs, "mask_rate": cfg.mask_rate,
                                "texts": len(seqs) + len(extra_seqs), "loss": [round(x, 4) for x in losses],
                                "seconds": round(time.perf_counter() - began, 1)}
    if distillation is not None:
        cfg = cfg if cfg.distill else replace(cfg, distill=1.0)
        log(f"the teacher scores {len(train_rows):,} training tickets"
            + (f" and {len(extra_texts):,} unlabelled texts" if extra_texts else ""))
        soft_labels = distillation.soft_labels(train_rows, teams, extra_texts, cfg.teacher_copies)
        # The unlabelled texts and the teacher's augmented copies are routed by their soft labels alone.
        copy_seqs = encode_texts(soft_labels.copies, vocab, model.config.max_len)
        seqs = seqs + extra_seqs + copy_seqs
        labels = torch.cat([labels, torch.full((len(extra_seqs) + len(copy_seqs),), UNLABELLED, dtype=torch.long)])
        soft = soft_labels.probs
        stored = soft_labels.to_parquet(teams)
        write_atomic(out / SOFT_LABELS_FILE, stored)
        added["distillation"] = {**soft_labels.record, "weight": cfg.distill, "file": SOFT_LABELS_FILE,
                                 "sha256": hashlib.sha256(stored).hexdigest()}
        log(f"teacher {soft_labels.record['teacher']}: {soft_labels.record['teacher_train_accuracy']:.4f} of the "
            f"training tickets right, in {_duration(soft_labels.record['seconds'])}")
    valid_seqs, valid_labels = encode_rows(valid_rows, vocab, model.config.max_len, teams)
    dev = (encode_rows(hand["handwritten_dev"], vocab, model.config.max_len, teams)
           if "handwritten_dev" in hand else None)

    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = lr_schedule(opt, math.ceil(len(seqs) / cfg.batch_size), cfg)

    log(f"{len(train_rows):,} training tickets, {len(teams)} teams, {len(vocab):,} tokens; {cfg.recipe} recipe: "
        f"{cfg.epochs} epochs at lr {cfg.lr:g}"
        + (f", from {cfg.init_from}" + (" (a new vocabulary: its words keep their embeddings)" if cfg.new_vocabulary
                                        else " (its vocabulary: words it never saw are <unk>)") if base else ""))
    def rule_score() -> tuple[float, dict]:
        """The epoch rule's score of the model as it is (valid, with the hand-written development set where there
        is one), and its parts rounded for the history."""
        valid_acc = predict_seqs(model, valid_seqs).argmax(1).eq(valid_labels).double().mean().item()
        dev_acc = None if dev is None else predict_seqs(model, dev[0]).argmax(1).eq(dev[1]).double().mean().item()
        return epoch_score(valid_acc, dev_acc, cfg.dev_weight)

    best, best_state, history, average = -1.0, None, [], WeightAverage()
    start, cpu_start = time.perf_counter(), time.process_time()
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        loss_sum = train_epoch(model, seqs, labels, opt, sched, cfg, rng, aug_rng, teacher, soft)
        score, parts = rule_score()
        entry = {"epoch": epoch, "train_loss": round(loss_sum / len(seqs), 4), **parts}
        history.append(entry)
        elapsed = time.perf_counter() - start
        log(f"epoch {epoch:2d}/{cfg.epochs}  loss {loss_sum / len(seqs):.4f}  "
            f"valid accuracy {parts['valid_accuracy']:.4f}"
            + (f"  hand-written dev {entry['handwritten_dev_accuracy']:.4f}" if dev is not None else "")
            + f"  ({_duration(elapsed)}, about {_duration(elapsed / epoch * (cfg.epochs - epoch))} left)")
        if cfg.average_last and epoch > cfg.epochs - cfg.average_last:
            average.add(model.state_dict())
        elif not cfg.average_last and score > best:
            best, best_epoch = score, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    if cfg.average_last:
        model.load_state_dict(average.mean())
        best_epoch = cfg.epochs
    else:
        model.load_state_dict(best_state)
    model.eval()
    if cfg.average_last:                  # the score of the weights kept, by the same rule as an epoch's
        best, _ = rule_score()
    # Wall time, and the CPU time of all this process's threads: on a shared machine the wall time also counts the
    # time other work held the cores, while the CPU time / threads is about what an idle machine would take.
    seconds = round(time.perf_counter() - start, 1)
    cpu_seconds = round(time.process_time() - cpu_start, 1)
    valid_logits = predict_logits(model, valid_seqs)
    nll_before = F.cross_entropy(valid_logits, valid_labels).item()
    temperature = fit_temperature(valid_logits, valid_labels)
    fold_temperature(model, temperature)
    calibration = {"temperature": round(temperature, 4), "fitted_on": "valid", "folded_into_head": True,
                   "valid_nll_before": round(nll_before, 4),
                   "valid_nll_after": round(F.cross_entropy(valid_logits / temperature, valid_labels).item(), 4)}
    if baseline is None:
        log("fitting the TF-IDF + logistic regression baseline on the same splits")
        baseline = fit_baseline(train_rows, valid_rows, teams, evaluated, seed=cfg.seed)
    trained_on = {}
    if evaluate_on is not None:
        trained_on = {"data": {"data_sha256": _hashes(data, evaluated), "tickets": len(train_rows),
                               "metrics": {name: evaluate(model, rows, vocab, teams)
                                           for name, rows in evaluated.items()},
                               "baseline": baseline}}
        log(f"fitting the baseline on {evaluate_on}'s splits, where the router is scored")
        baseline = fit_baseline(home_train, home["valid"], teams, home, seed=cfg.seed)
    card = {
        "config": model.config.to_dict(),
        "teams": list(teams),
        "train": {**cfg.__dict__, "tickets": len(train_rows), "best_epoch": best_epoch, "score": round(best, 6),
                  **({"averaged_epochs": [cfg.epochs - min(cfg.average_last, cfg.epochs) + 1, cfg.epochs]}
                     if cfg.average_last else {}),
                  "seconds": seconds, "cpu_seconds": cpu_seconds, "torch": torch.__version__, "history": history,
                  **({"init_from_sha256": file_sha256(router_file(cfg.init_from)),
                      "init_from_train": started_from(base.meta)} if base else {}),
                  **({"keep_from_sha256": file_sha256(router_file(cfg.keep_from))} if cfg.keep_from else {}),
                  **added, **trained_on},
        "calibration": calibration,
        "ood": ood_thresholds(model, home["valid"], vocab, teams, cfg.ood_accuracy),
        "data_sha256": _hashes(evaluate_on or data, home),
        "metrics": {name: evaluate(model, rows, vocab, teams) for name, rows in home.items()},
        "baseline": baseline,
        **(extra or {}),
    }
    router = Router(model, vocab, teams, card)
    save_router(router, out)
    write_predictions(router, out / "router.pt", evaluate_on or data)   # the home splits', for the dashboard
    return card


def started_from(meta: dict) -> dict:
    """What a fine-tune records of the router it started from: its training record without the per-epoch history,
    and the hashes of the data it was trained on, so the card names every ticket behind the weights."""
    record = {k: v for k, v in (meta.get("train") or {}).items() if k != "history"}
    return {**record, "data_sha256": meta.get("data_sha256", {})}


def _hashes(folder: Path, evaluated: dict) -> dict[str, str]:
    """The SHA-256 of the folder's train.csv and of each evaluated split's CSV."""
    return {s: file_sha256(folder / f"{s}.csv") for s in ("train", *evaluated)}


def train(data: Path | None = None, out: Path | None = None, cfg: TrainConfig = TrainConfig(),
          log: Callable[[str], None] = print, extra: dict | None = None, evaluate_on: Path | None = None,
          distillation: Distillation | None = None, unlabelled: Unlabelled | None = None,
          word_vectors: WordVectors | None = None) -> dict:
    """Train on the train/valid/test CSVs in `data`, keep the best valid epoch, and write `router.pt`, `vocab.json`,
    `router.json` and `predictions/` into `out` as one folder swap: an interrupted run leaves `out` as it was.
    `evaluate_on`: the folder whose splits the card and predictions are measured on (see `_fit`)."""
    data = data or data_dir()
    with staged_folder(out or weights_dir(), ROUTER_MARKER) as stage:
        return _fit(data, stage, cfg, log, extra, evaluate_on=evaluate_on, distillation=distillation,
                    unlabelled=unlabelled, word_vectors=word_vectors)




def train_seeds(seeds: list[int], data: Path | None = None, out: Path | None = None,
                cfg: TrainConfig = TrainConfig(), log: Callable[[str], None] = print,
                extra: dict | None = None, keep_all: bool = False, distillation: Distillation | None = None,
                unlabelled: Unlabelled | None = None, word_vectors: WordVectors | None = None) -> dict:
    """Train once per seed and keep the run whose kept epoch scores best by the training rule (ties: the first seed).

    Each run is the same recipe, so the seeds differ only in initialisation, batch order and augmentation; the
    comparison reads valid and the hand-written development set only. The kept run's files go to `out`, its card
    recording every run under `train.seed_search`; the other runs are deleted, or with `keep_all` each run (the kept
    one too) stays as its own router folder `out/seeds/seed-<k>/`, with its predictions (and a copy of `out`'s
    data/ when the splits live there), for the dashboard's Compare page.
    """
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {seeds}")
    data = data or data_dir()
    with staged_folder(out or weights_dir(), ROUTER_MARKER) as stage:
        return _fit_seeds(seeds, data, stage, cfg, log, extra, keep_all, distillation, unlabelled, word_vectors)


def _keep_runs(runs_dir: Path, out: Path, data: Path) -> None:
    """Move every seed's run folder into out/seeds/, each a router folder the dashboard can open."""
    import shutil

    kept = out / SEEDS_FOLDER
    kept.mkdir()
    own_data = data.resolve().is_relative_to(out.resolve())
    for run_dir in sorted(Path(runs_dir).iterdir()):
        if own_data:                          # a router trained on an export reads its splits from its own data/
            shutil.copytree(data, run_dir / ROUTER_DATA)
        os.replace(run_dir, kept / run_dir.name)


def _fit_seeds(seeds: list[int], data: Path, out: Path, cfg: TrainConfig, log: Callable[[str], None],
               extra: dict | None, keep_all: bool = False, distillation: Distillation | None = None,
               unlabelled: Unlabelled | None = None, word_vectors: WordVectors | None = None) -> dict:
    runs, best, baseline = [], None, None
    with tempfile.TemporaryDirectory(prefix=".seed-search-", dir=out) as tmp:
        for seed in seeds:
            log(f"seed {seed}")
            run_dir = Path(tmp) / f"seed-{seed}"
            run_dir.mkdir()
            # One baseline for the search: fitted with the first run (a sample of a split over MAX_TRAIN tickets
            # takes that run's seed), reused by the others, whose splits are the same.
            card = _fit(data, run_dir, replace(cfg, seed=seed), log, extra, baseline, distillation=distillation,
                        unlabelled=unlabelled, word_vectors=word_vectors)
            baseline = card["baseline"]
            t, m = card["train"], card["metrics"]
            runs.append({"seed": seed, "best_epoch": t["best_epoch"], "score": t["score"], "seconds": t["seconds"],
                         "valid_accuracy": round(m["valid"]["accuracy"], 4),
                         **({"handwritten_dev_accuracy": round(m["handwritten_dev"]["accuracy"], 4)}
                            if "handwritten_dev" in m else {})})
            if best is None or t["score"] > best[0]:
                best = (t["score"], seed, run_dir)
        router = Router.load(best[2] / "router.pt")
        router.meta["train"]["seed_search"] = runs
        if (best[2] / SOFT_LABELS_FILE).is_file():     # the same teacher's labels for every seed: kept once
            os.replace(best[2] / SOFT_LABELS_FILE, out / SOFT_LABELS_FILE)
        save_router(router, out)
        write_predictions(router, out / "router.pt", data)
        if keep_all:
            _keep_runs(Path(tmp), out, data)
            log(f"every seed's run kept under {out.name}/{SEEDS_FOLDER}/ (seed-<k>)")
    log("seed search: " + ", ".join(f"seed {r['seed']} {r['score']:.4f}" for r in runs) + f"; kept seed {best[1]}")
    return router.meta


def train_export(export: Path, out: Path, columns: ExportColumns = ExportColumns(),
                 fractions: Sequence[float] = (0.8, 0.1, 0.1), cfg: TrainConfig = TrainConfig(),
                 seeds: list[int] | None = None, log: Callable[[str], None] = print, keep_all: bool = False,
                 split_seed: int | None = None, fit: Callable[[Path, Path, dict], dict] | None = None,
                 distillation: Distillation | None = None, unlabelled: Unlabelled | None = None,
                 word_vectors: WordVectors | None = None) -> dict:
    """A router from one export file: checked, split (stratified by team, seeded by `split_seed`, else by
    `cfg.seed`) into the router folder's data/, trained there, all in one folder swap. Routers of one export that
    share a split seed share their splits, whatever their training seeds, so they can be compared. Bad input raises
    DataError before anything is written. `fit(data, stage, extra)` trains another kind of router on the splits
    (an encoder's fine-tune) in place of the Tiny router's training."""
    found = read_export(export, columns)
    rows = found.rows
    split_seed = cfg.seed if split_seed is None else split_seed
    splits = split_export(rows, fractions, seed=split_seed)
    extra = {"export": {"file": Path(export).name, "sha256": file_sha256(export), "tickets": len(rows),
                        "text_columns": list(found.text_columns), "team_column": columns.team,
                        "id_column": None if found.ids_made_up else columns.ticket_id,
                        "split": list(fractions), "split_seed": split_seed,
                        "split_tickets": {name: len(part) for name, part in splits.items()}}}
    log(f"{Path(export).name}: {len(rows):,} tickets, text from {', '.join(found.text_columns)}; split "
        + ", ".join(f"{n} {len(p):,}" for n, p in splits.items()))
    with staged_folder(out, ROUTER_MARKER) as stage:
        data = stage / ROUTER_DATA
        for name, part in splits.items():
            write_atomic(data / f"{name}.csv", splits_csv(part))
        if fit is not None:
            return fit(data, stage, extra)
        if seeds:
            return _fit_seeds(seeds, data, stage, cfg, log, extra, keep_all, distillation, unlabelled, word_vectors)
        return _fit(data, stage, cfg, log, extra, distillation=distillation, unlabelled=unlabelled,
                    word_vectors=word_vectors)


def save_router(router: Router, out: Path) -> None:
    """Write the three files atomically; the weights last, so a reader never sees new weights with an old card."""
    buf = io.BytesIO()
    torch.save(router.model.state_dict(), buf)
    router.vocab.save(out / "vocab.json")
    write_card(router, out)
    write_atomic(out / "router.pt", buf.getvalue())


def write_card(router: Router, out: Path) -> None:
    """router.json from the router's metadata, atomically (team names kept as written, not escaped)."""
    write_atomic(out / ROUTER_MARKER, (json.dumps(router.meta, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


def record_baseline(weights: Path, log: Callable[[str], None] = print) -> dict:
    """Fit the baseline on the splits of an existing router (one trained before routers carried one) and record it
    in its router.json; the weights stay as they are, and the stored predictions are rewritten under the new card's
    hash. Returns the baseline."""
    from ticketnet.paths import router_data

    router = Router.load(weights)
    data = router_data(Path(weights).parent)
    teams, train_rows, evaluated = load_splits(data, router.teams)
    log(f"fitting the TF-IDF + logistic regression baseline on {len(train_rows):,} training tickets")
    router.meta["baseline"] = fit_baseline(train_rows, evaluated["valid"], teams, evaluated,
                                           seed=router.meta.get("train", {}).get("seed", 0))
    write_card(router, Path(weights).parent)
    write_predictions(router, Path(weights), data)
    return router.meta["baseline"]
