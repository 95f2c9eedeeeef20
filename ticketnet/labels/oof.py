"""Out-of-fold team probabilities: k stratified folds, each scored by a router (or baseline) that never trained on it."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ticketnet._runtime.hashing import file_sha256

SOURCES = ("router", "baseline")
DEFAULT_FOLDS = 5
FOLD_SEED = 0                          # StratifiedKFold's shuffle; recorded with the result
CACHE_FOLDER = "labels"                # inside the router folder
SYNCHRONOUS = "synchronous"            # --scheduler synchronous: every fold in this process (tests, debugging)
BASELINE_C = 10.0                      # the baseline's C when the router's card records none
ENCODER = "encoder"                    # the kind of router whose folds are fine-tunes of its base encoder
ENCODER_OOF_MAX = 5_000                # tickets in the split: beyond, a fine-tune per fold takes hours on a CPU
# Seconds per training ticket-epoch where the card records no fine-tune time: MiniLM, top 2 blocks, one thread,
# measured per fold (base loading and scoring included) on Brightwave's export (docs/label-issues.md).
ENCODER_SECONDS_PER_TICKET_EPOCH = 0.023


class LabelsError(ValueError):
    """Bad input to the label check: one readable line."""


@dataclass
class OutOfFold:
    """Every ticket's team probabilities from the fold model that did not train on it."""

    ticket_ids: list[str]
    given: np.ndarray                  # (N,) index of the given team in `teams`
    probs: np.ndarray                  # (N, C) out-of-fold probabilities
    fold: np.ndarray                   # (N,) the fold each ticket was held out in (and scored by)
    teams: tuple[str, ...]
    settings: dict                     # source, split, folds, epochs, seed, split hash, ...
    folds: list[dict]                  # per fold: tickets trained on, scored, seconds, and (router) epochs kept

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"ticket_id": self.ticket_ids, "given": self.given, "fold": self.fold,
                             **{f"p{j}": self.probs[:, j] for j in range(len(self.teams))}})


def fold_assignment(labels: Sequence[int], folds: int, seed: int = FOLD_SEED) -> np.ndarray:
    """The fold (0..folds-1) each ticket is held out in: scikit-learn's StratifiedKFold, shuffled with `seed`, so every
    fold holds about the same share of every team. Raises LabelsError where a team has fewer tickets than folds."""
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(labels)
    if folds < 2:
        raise LabelsError(f"--folds must be at least 2, got {folds}")
    counts = np.bincount(y)
    small = [int(i) for i in np.flatnonzero((counts > 0) & (counts < folds))]
    if small:
        raise LabelsError(f"{len(small)} team(s) have fewer tickets than --folds {folds} (fewest: {counts[small].min()}); "
                          f"use fewer folds")
    out = np.empty(len(y), dtype=np.int64)
    for k, (_, held) in enumerate(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y)):
        out[held] = k
    return out


# -- the router's recipe ---------------------------------------------------------------------------------------
def router_recipe(meta: Mapping, epochs: int | None = None, seed: int | None = None,
                  trained_on: int | None = None) -> dict:
    """The TrainConfig fields the router was trained with (router.json's train record, its shape from config), as a
    plain dict a task can carry; `epochs` replaces the recipe's where given. Threads are 1: one process per fold.

    A card that does not name its recipe (older routers) gets the one its training-set size chose (the record's
    `tickets`, else `trained_on`), not the one a fold's smaller training part would choose. A fold starts from
    scratch, so a fine-tuned router's folds take the recipe of the router it started from where its card records
    that one (`init_from_train`, its seed included), else the recipe for its size in place of the fine-tune's;
    never the router it started from or the one it kept (`keep`, `keep_from`, `new_vocabulary`): a fold has
    neither. A router distilled from the baseline has each fold distilled from a baseline of the fold's own
    tickets (with its copies per ticket, `teacher_copies`); one distilled from a router trains on labels alone, as
    that router has read every fold's held-out tickets. Pretraining reads the fold's tickets, not the unlabelled
    file, which the folder does not keep."""
    from ticketnet.distill import BASELINE
    from ticketnet.training import RECIPES, SMALL_DATA, TrainConfig

    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    train = meta.get("train") or {}
    if train.get("recipe") == "finetune" and isinstance(train.get("init_from_train"), Mapping):
        train = train["init_from_train"]
    record = {k: v for k, v in train.items() if k in fields}
    for k in ("init_from", "keep", "keep_from", "new_vocabulary"):
        record.pop(k, None)
    if (train.get("distillation") or {}).get("teacher") != BASELINE:
        record.pop("distill", None)
    if record.get("recipe") == "finetune":
        for k in (*RECIPES["finetune"], "recipe"):
            record.pop(k, None)
    config = meta.get("config") or {}
    shape = {"d": config.get("d"), "heads": config.get("h"), "blocks": config.get("n_blocks"),
             "d_ff": config.get("d_ff"), "max_len": config.get("max_len"), "dropout": config.get("dropout")}
    record.update({k: v for k, v in shape.items() if v is not None})
    if record.get("recipe") is None:
        n = train.get("tickets") or trained_on
        if n:
            record["recipe"] = "small" if n < SMALL_DATA else "large"
    if epochs is not None:
        record["epochs"] = epochs
    if seed is not None:
        record["seed"] = seed
    record["threads"] = 1
    cfg = TrainConfig(**record)                        # checks the values (epochs >= 1, d a multiple of heads, ...)
    return dataclasses.asdict(cfg if cfg.distill else dataclasses.replace(cfg, teacher_copies=0))


def _rows(rows: Sequence[Mapping], idx) -> list[dict]:
    return [{"ticket_id": rows[i]["ticket_id"], "text": rows[i]["text"], "team": rows[i]["team"]} for i in idx]


def fit_router_fold(train_rows: list[dict], rule_sets: Mapping[str, list[dict]], teams: Sequence[str], cfg_fields: dict,
                    word_vectors: str | None = None):
    """A router trained on `train_rows` alone, by `_fit`'s recipe: the vocabulary from these rows, the same
    initialisation, augmentation, schedule and token loss; the kept epoch by the same rule on `rule_sets` (valid and
    the hand-written development set, whichever are given), or the last epoch where none is; the temperature fitted
    on valid where it is given; `word_vectors`: the encoder whose vectors of the words start the embeddings, as the
    router's card records. Returns (model, vocab, info)."""
    import torch

    from ticketnet.distill import baseline_soft_labels
    from ticketnet.metrics import fit_temperature
    from ticketnet.train import new_model
    from ticketnet.training import (
        UNLABELLED,
        TrainConfig,
        WeightAverage,
        encode_rows,
        encode_texts,
        fold_temperature,
        lr_schedule,
        predict_logits,
        predict_seqs,
        pretrain,
        train_epoch,
    )

    cfg = TrainConfig(**cfg_fields).resolved(len(train_rows))
    torch.manual_seed(cfg.seed)
    rng, aug_rng = random.Random(cfg.seed), random.Random(cfg.seed + 1)
    vocab, model = new_model(cfg, train_rows, len(teams))
    seqs, labels = encode_rows(train_rows, vocab, model.config.max_len, teams)
    if word_vectors:                          # the router's words started there: so do the fold's
        from ticketnet.encoder.word_vectors import EncoderWordVectors

        with torch.no_grad():
            model.embed.weight[2:] = EncoderWordVectors(word_vectors)(vocab.itos[2:], model.config.d,
                                                                      cfg.embed_scale)
    if cfg.pretrain_epochs:
        pretrain(model, seqs, cfg, random.Random(cfg.seed + 2))
    soft = None
    if cfg.distill:                           # the baseline of this fold's tickets, as `_fit` made the router's
        made = baseline_soft_labels(train_rows, teams, seed=cfg.seed, copies=cfg.teacher_copies)
        seqs = seqs + encode_texts(made.copies, vocab, model.config.max_len)
        labels = torch.cat([labels, torch.full((len(made.copies),), UNLABELLED, dtype=torch.long)])
        soft = made.probs
    rule = {name: encode_rows(rows, vocab, model.config.max_len, teams) for name, rows in rule_sets.items() if rows}
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = lr_schedule(opt, math.ceil(len(seqs) / cfg.batch_size), cfg)

    def rule_score() -> float:
        acc = {n: predict_seqs(model, s).argmax(1).eq(y).double().mean().item() for n, (s, y) in rule.items()}
        if "valid" in acc and "handwritten_dev" in acc:
            return (1 - cfg.dev_weight) * acc["valid"] + cfg.dev_weight * acc["handwritten_dev"]
        return next(iter(acc.values()))

    best, best_state, best_epoch, average = -1.0, None, cfg.epochs, WeightAverage()
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        train_epoch(model, seqs, labels, opt, sched, cfg, rng, aug_rng, soft=soft)
        if cfg.average_last:
            if epoch > cfg.epochs - cfg.average_last:
                average.add(model.state_dict())
        elif rule:
            score = rule_score()
            if score > best:
                best, best_epoch = score, epoch
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if cfg.average_last:
        model.load_state_dict(average.mean())
    elif best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    temperature = 1.0
    if "valid" in rule:
        temperature = fit_temperature(predict_logits(model, rule["valid"][0]), rule["valid"][1])
        fold_temperature(model, temperature)
    info = {"epochs": cfg.epochs, "kept_epoch": best_epoch, "recipe": cfg.recipe, "vocab": len(vocab),
            "temperature": round(float(temperature), 4), "rule_sets": sorted(rule),
            **({"distill": cfg.distill, "teacher_copies": cfg.teacher_copies} if cfg.distill else {}),
            **({"pretrain_epochs": cfg.pretrain_epochs} if cfg.pretrain_epochs else {}),
            **({"word_vectors": word_vectors} if word_vectors else {})}
    return model, vocab, info


# -- the encoder router's recipe -------------------------------------------------------------------------------
def encoder_recipe(meta: Mapping, epochs: int | None = None) -> dict:
    """The EncoderRecipe fields the encoder router was fine-tuned with (router.json's `train` record, the base as
    its `base` record resolved it), as a plain dict a task can carry; `epochs` replaces the recipe's where given.
    One thread (one process per fold) and no training sample: a fold fine-tunes on every ticket of the other folds,
    since cleanlab's flags are only as good as the fold models. LabelsError for a router that records no fine-tune
    (a team's saved classifier)."""
    from ticketnet.encoder.finetune import EncoderRecipe

    train = meta.get("train")
    if meta.get("source") == "classifier" or not isinstance(train, Mapping) or "encoder" not in train:
        raise LabelsError("this encoder router's card records no fine-tune (a team's saved classifier?), so --source "
                          "router has no recipe to fine-tune each fold by; use --source baseline")
    fields = {f.name for f in dataclasses.fields(EncoderRecipe)}
    record = {k: v for k, v in train.items() if k in fields}
    base = meta.get("base") or {}
    if base.get("encoder"):
        record["encoder"] = base["encoder"]
    record.update(threads=1, train_sample=None)
    if epochs is not None:
        record["epochs"] = epochs
    try:
        return dataclasses.asdict(EncoderRecipe(**record))
    except (TypeError, ValueError) as exc:
        raise LabelsError(f"the router card's fine-tune record does not make a recipe ({exc})") from None


def check_encoder_base(meta: Mapping, recipe: Mapping) -> None:
    """The base encoder the card names is here, with the files it was fine-tuned from (their pins), before any fold
    starts; LabelsError otherwise."""
    from ticketnet.encoder import files

    try:
        folder, pins = files.resolve(recipe["encoder"])
        recorded = (meta.get("base") or {}).get("pins") or {}
        if pins and recorded and pins != recorded:
            raise files.EncoderError(f"the installed {recipe['encoder']} has other pins than the files it was "
                                     f"fine-tuned from")
        if not pins:
            if not folder.is_dir():
                raise files.EncoderError(f"its base encoder {folder} is gone; restore it to fine-tune the folds")
            files.check_pins(folder, recorded, what="the base encoder the router was fine-tuned from")
    except files.EncoderError as exc:
        raise LabelsError(str(exc)) from None


def encoder_rate(meta: Mapping) -> tuple[float, str]:
    """Seconds per training ticket-epoch of a fine-tune, and where the figure comes from: the router's own fine-tune
    (its card's seconds over tickets × epochs), else ENCODER_SECONDS_PER_TICKET_EPOCH."""
    train = meta.get("train") or {}
    seconds, tickets, epochs = train.get("seconds"), train.get("tickets"), train.get("epochs")
    if all(isinstance(v, (int, float)) and v > 0 for v in (seconds, tickets, epochs)):
        return (seconds / (tickets * epochs),
                f"its own fine-tune: {tickets:,} tickets × {epochs} epochs in {seconds:,.0f} s")
    return ENCODER_SECONDS_PER_TICKET_EPOCH, "measured on MiniLM, docs/label-issues.md"


def encoder_estimate(meta: Mapping, tickets: int, folds: int, epochs: int) -> float:
    """Seconds of fine-tuning for k folds: k × (k-1)/k × tickets × epochs at `encoder_rate` (scoring not counted)."""
    return (folds - 1) * tickets * epochs * encoder_rate(meta)[0]


def encoder_refusal(meta: Mapping, tickets: int, folds: int, epochs: int, instead: str) -> str | None:
    """Why a fine-tune per fold is not started on `tickets` tickets (over ENCODER_OOF_MAX), with the time it would
    take and what to run `instead`, as one line; None within the limit."""
    limit = ENCODER_OOF_MAX
    if tickets <= limit:
        return None
    rate, basis = encoder_rate(meta)
    train = meta.get("train") or {}
    sample = ""
    if train.get("train_sample") and (train.get("sampled_from") or 0) > (train.get("tickets") or 0):
        sample = (f" (the router itself was fine-tuned on a {train['tickets']:,}-ticket sample of "
                  f"{train['sampled_from']:,}; each fold would train on every ticket of the other folds)")
    per_fold = round(tickets * (folds - 1) / folds)
    # A sentence an analyst reads as it stands (the Label issues page shows it too), not the flag's name first.
    return (f"Out-of-fold probabilities from the router mean fine-tuning its encoder once per fold, done on "
            f"splits of up to {limit:,} tickets, and this split has {tickets:,}{sample}: {folds} folds × {epochs} epochs on about {per_fold:,} tickets each would take "
            f"about {duration(encoder_estimate(meta, tickets, folds, epochs))} of fine-tuning ({rate:.3f} s per "
            f"ticket-epoch, {basis}); use the baseline's out-of-fold probabilities instead: {instead}")


def duration(seconds: float) -> str:
    """`seconds` as a reader says it: 40 s, 12 min, 4.7 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def fit_encoder_fold(train_rows: list[dict], rule_sets: Mapping[str, list[dict]], teams: Sequence[str],
                     recipe_fields: dict):
    """The base encoder fine-tuned on `train_rows` alone, as `fine_tune` starts and trains it (`start_router`,
    `train_loop`): the kept epoch by the same rule on `rule_sets` (valid and the hand-written development set,
    whichever are given; the last epoch where none is), its tensors rounded as the card stores them, the
    temperature fitted on valid where it is given. Returns (router, temperature, info)."""
    from ticketnet.encoder.finetune import EncoderRecipe, start_router, train_loop
    from ticketnet.metrics import fit_temperature
    from ticketnet.training import epoch_score, team_indices

    recipe = EncoderRecipe(**recipe_fields)
    router, _, first = start_router(recipe, tuple(teams))
    encoded = [router.encode(r["text"]) for r in train_rows]
    rule = {name: ([router.encode(r["text"]) for r in rows], team_indices(rows, teams))
            for name, rows in rule_sets.items() if rows}

    def score_epoch() -> tuple[float, dict]:
        acc = {n: router.logits(e).argmax(1).eq(y).double().mean().item() for n, (e, y) in rule.items()}
        if "valid" in acc:
            return epoch_score(acc["valid"], acc.get("handwritten_dev"), recipe.dev_weight)
        return acc["handwritten_dev"], {"handwritten_dev_accuracy": round(acc["handwritten_dev"], 4)}

    best_state, history, best_epoch, _ = train_loop(router, encoded, team_indices(train_rows, teams), recipe, first,
                                                    score_epoch if rule else None, log=lambda _m: None)
    kept = {k: (v.half() if recipe.half else v).float() for k, v in best_state.items()}
    router.model.load_state_dict({**router.model.state_dict(), **kept})
    router.model.eval()
    temperature = 1.0
    if "valid" in rule:
        temperature = fit_temperature(router.logits(rule["valid"][0]), rule["valid"][1])
    info = {"epochs": recipe.epochs, "kept_epoch": best_epoch, "train_blocks": recipe.train_blocks,
            "temperature": round(float(temperature), 4), "rule_sets": sorted(rule),
            "history": history}
    return router, temperature, info


def score_fold(job: dict) -> dict:
    """The task: train on the job's training rows (router or baseline) and score its held-out rows. Single-threaded
    torch, seeded by the job alone, so a fold gives the same numbers in any process on any worker."""
    t0 = time.perf_counter()
    teams = job["teams"]
    if job["source"] == "router" and job.get("kind") == ENCODER:
        import torch

        threads = torch.get_num_threads()
        try:
            router, temperature, info = fit_encoder_fold(job["train"], job["rule_sets"], teams, job["recipe"])
            logits = router.logits([router.encode(r["text"]) for r in job["held"]])
            probs = torch.softmax(logits.double() / temperature, dim=-1).numpy()
        finally:
            torch.set_num_threads(threads)
    elif job["source"] == "router":
        import torch

        from ticketnet.nn.batching import batched_probs
        from ticketnet.training import encode_rows

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            model, vocab, info = fit_router_fold(job["train"], job["rule_sets"], teams, job["cfg"],
                                                 job.get("word_vectors"))
            seqs, _ = encode_rows(job["held"], vocab, model.config.max_len, teams)
            probs = batched_probs(model, seqs, 512).double().numpy()
        finally:
            torch.set_num_threads(threads)
    else:
        probs, info = _baseline_fold(job["train"], job["held"], teams, job["C"], job["seed"])
    return {"fold": job["fold"], "probs": probs, "train_ids": [r["ticket_id"] for r in job["train"]],
            "scored_ids": [r["ticket_id"] for r in job["held"]], "seconds": round(time.perf_counter() - t0, 1),
            "pid": os.getpid(), **info}


def _baseline_fold(train: list[dict], held: list[dict], teams: Sequence[str], c: float, seed: int):
    """The router card's TF-IDF + logistic regression baseline (its features and C), fitted on `train`."""
    from sklearn.linear_model import LogisticRegression

    from ticketnet.baseline import make_features, texts_read

    index = {t: i for i, t in enumerate(teams)}
    features = make_features()
    x = features.fit_transform(texts_read(train))
    model = LogisticRegression(C=c, max_iter=2000, random_state=seed).fit(x, [index[r["team"]] for r in train])
    probs = np.zeros((len(held), len(teams)))
    probs[:, model.classes_] = model.predict_proba(features.transform(texts_read(held)))
    return probs, {"C": c, "features": int(x.shape[1])}


# -- running the folds -----------------------------------------------------------------------------------------
def run_tasks(jobs: list[dict], scheduler: str | None, workers: int | None,
              log: Callable[[str], None]) -> list[dict]:
    """Every job's `score_fold`, on the scan's Dask cluster (a local one of `workers` processes, or the scheduler at
    `scheduler`), or in this process for "synchronous"; results in job order."""
    if scheduler == SYNCHRONOUS:
        out = []
        for job in jobs:
            out.append(score_fold(job))
            log(f"fold {job['fold'] + 1}/{len(jobs)} done in {out[-1]['seconds']:.0f} s")
        return out
    from distributed import as_completed

    from ticketnet.corpus.cluster import dask_client

    with dask_client(scheduler, workers or min(len(jobs), os.cpu_count() or 1), log) as client:
        futures = [client.submit(score_fold, job, key=f"ticketnet-labels-fold-{job['fold']}-{job['key']}",
                                 pure=False, retries=1) for job in jobs]
        done: dict[int, dict] = {}
        for future in as_completed(futures, loop=client.loop):
            result = future.result()
            done[result["fold"]] = result
            log(f"fold {result['fold'] + 1}/{len(jobs)} done in {result['seconds']:.0f} s ({len(done)} of "
                f"{len(jobs)})")
    return [done[job["fold"]] for job in jobs]


def out_of_fold(rows: Sequence[Mapping], teams: Sequence[str], source: str = "router", folds: int = DEFAULT_FOLDS,
                meta: Mapping | None = None, epochs: int | None = None, rule_sets: Mapping | None = None,
                scheduler: str | None = None, workers: int | None = None, seed: int = FOLD_SEED,
                log: Callable[[str], None] = lambda _m: None, settings: dict | None = None, kind: str | None = None,
                size_limit: bool = True, instead: str = "--source baseline") -> OutOfFold:
    """Out-of-fold probabilities of `rows` (ticket_id, text, team): each fold's tickets scored by a model trained on
    the other folds only. `source` "router": the router's recipe and shape from `meta` (router.json), `epochs` where
    given, the epoch rule on `rule_sets` (splits other than `rows`); for `kind` "encoder", its base encoder
    fine-tuned per fold by the card's recipe, refused (`encoder_refusal`, naming `instead`) beyond ENCODER_OOF_MAX
    tickets unless `size_limit` is off; "baseline": the card's TF-IDF + LR at its C."""
    if source not in SOURCES:
        raise LabelsError(f"--source must be one of {', '.join(SOURCES)}, got {source!r}")
    if epochs is not None and epochs < 1:
        raise LabelsError(f"--epochs must be at least 1, got {epochs}")
    if workers is not None and workers < 1:
        raise LabelsError(f"--workers must be at least 1, got {workers}")
    meta = meta or {}
    index = {t: i for i, t in enumerate(teams)}
    unknown = sorted({r["team"] for r in rows} - set(index))
    if unknown:
        raise LabelsError(f"team(s) {', '.join(map(repr, unknown[:5]))} are not the router's teams")
    given = np.array([index[r["team"]] for r in rows], dtype=np.int64)
    fold = fold_assignment(given, folds, seed)
    base = {"source": source, "teams": list(teams), "seed": seed}
    if source == "router" and kind == ENCODER:
        cfg = encoder_recipe(meta, epochs)
        refusal = encoder_refusal(meta, len(rows), folds, cfg["epochs"], instead) if size_limit else None
        if refusal:
            raise LabelsError(refusal)
        check_encoder_base(meta, cfg)
        base.update(kind=ENCODER, recipe=cfg,
                    rule_sets={k: _rows(v, range(len(v))) for k, v in (rule_sets or {}).items()})
        recipe = {"kind": ENCODER, "epochs": cfg["epochs"], "train_blocks": cfg["train_blocks"],
                  "recipe": "encoder fine-tune", "base": (meta.get("base") or {}).get("name") or cfg["encoder"],
                  "lr": cfg["lr"], "max_pieces": cfg["max_pieces"], "train_seed": cfg["seed"]}
    elif source == "router":
        cfg = router_recipe(meta, epochs, trained_on=len(rows))
        base.update(cfg=cfg, rule_sets={k: _rows(v, range(len(v))) for k, v in (rule_sets or {}).items()},
                    word_vectors=((meta.get("train") or {}).get("word_vectors") or {}).get("encoder"))
        recipe = {"epochs": cfg["epochs"], "recipe": cfg["recipe"], "train_seed": cfg["seed"]}
    else:
        c = float((meta.get("baseline") or {}).get("C", BASELINE_C))
        base.update(C=c)
        recipe = {"C": c}
    key = f"{source}-{folds}-{len(rows)}-{seed}"
    jobs = [{**base, "fold": k, "key": key, "train": _rows(rows, np.flatnonzero(fold != k)),
             "held": _rows(rows, np.flatnonzero(fold == k))} for k in range(folds)]
    if recipe.get("kind") == ENCODER:
        log(f"{len(rows):,} tickets, {folds} folds, source {source}: {recipe['base']} fine-tuned per fold, the top "
            f"{recipe['train_blocks'] or 'every'} block(s), {recipe['epochs']} epochs")
    else:
        log(f"{len(rows):,} tickets, {folds} folds, source {source}" +
            (f", {recipe['epochs']} epochs ({recipe['recipe'] or 'by size'} recipe)" if source == "router" else ""))
    t0 = time.perf_counter()
    results = run_tasks(jobs, scheduler, workers, log)
    probs = np.zeros((len(rows), len(teams)))
    for k, result in enumerate(results):
        probs[np.flatnonzero(fold == k)] = result["probs"]
    per_fold = [{k: v for k, v in r.items() if k != "probs"} for r in results]
    settings = {**(settings or {}), "source": source, "folds": folds, "fold_seed": seed, "tickets": len(rows),
                **recipe, "seconds": round(time.perf_counter() - t0, 1),
                "fold_seconds": [r["seconds"] for r in results], "workers_used": len({r["pid"] for r in results})}
    return OutOfFold([r["ticket_id"] for r in rows], given, probs, fold, tuple(teams), settings, per_fold)


# -- the cache in the router folder ----------------------------------------------------------------------------
def cache_path(router_folder: Path, source: str, split: str, folds: int, epochs: int | None) -> Path:
    """labels/oof-<source>-<split>-k<folds>[-e<epochs>].parquet inside the router folder (epochs: router only)."""
    tail = f"-e{epochs}" if source == "router" else ""
    return Path(router_folder) / CACHE_FOLDER / f"oof-{source}-{split}-k{folds}{tail}.parquet"


def write_cache(oof: OutOfFold, path: Path) -> None:
    """The out-of-fold frame, atomically, with the teams and settings (split hash included) in its metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(oof.frame(), preserve_index=False)
    meta = {b"ticketnet.labels": json.dumps({"teams": list(oof.teams), "settings": oof.settings,
                                             "folds": [{k: v for k, v in f.items() if k not in ("train_ids",
                                                                                                 "scored_ids")}
                                                       for f in oof.folds]}).encode("utf-8")}
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_cache(path: Path, split_csv: Path | None = None) -> OutOfFold | None:
    """The cached out-of-fold result at `path`, or None when there is none or it was computed on another version of
    the split (its hash differs from `split_csv`'s)."""
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        return None
    table = pq.read_table(path)
    info = json.loads((table.schema.metadata or {}).get(b"ticketnet.labels", b"{}"))
    settings = info.get("settings", {})
    if split_csv is not None and settings.get("split_sha256") != file_sha256(split_csv):
        return None
    frame = table.to_pandas()
    teams = tuple(info["teams"])
    probs = frame[[f"p{j}" for j in range(len(teams))]].to_numpy(dtype=np.float64)
    return OutOfFold(frame["ticket_id"].astype(str).tolist(), frame["given"].to_numpy(np.int64), probs,
                     frame["fold"].to_numpy(np.int64), teams, settings, info.get("folds", []))


def cached_results(router_folder: Path) -> list[Path]:
    """Every out-of-fold result cached in the router folder, newest first."""
    folder = Path(router_folder) / CACHE_FOLDER
    if not folder.is_dir():
        return []
    return sorted(folder.glob("oof-*.parquet"), key=lambda p: p.stat().st_mtime, reverse=True)
