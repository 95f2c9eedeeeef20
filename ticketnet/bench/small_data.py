"""Small-data side by side: TF-IDF + logistic regression, TinyTransformer recipes and encoder fine-tunes, by k-fold or hold-out."""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import statistics
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch

from ticketnet.data.text import PAD_ID, UNK_ID, Vocab
from ticketnet.data.text import tokenize
from ticketnet.nn.subwords import SubwordEmbedding, ngram_table
from ticketnet.nn.transformer import TinyConfig, TinyTransformer, pad_batch
from ticketnet.training import UNLABELLED, TrainConfig, pretrain, train_epoch

CV_SEED = 20240524          # the folds' seed: every method sees the same folds
TABLE_COLUMNS = ("experiment", "method", "n_train", "n_eval", "folds", "accuracy_mean", "accuracy_std",
                 "macro_f1_mean", "macro_f1_std", "seconds_per_fold")


@dataclass(frozen=True)
class Recipe:
    """How one TinyTransformer is trained from labelled texts (the shipped shape unless d/h/blocks say otherwise)."""

    lr: float = 1e-2
    warmup_epochs: float = 1.0     # linear warm-up, then cosine decay to 0 at the last epoch
    epochs: int = 40
    batch_size: int = 32
    embed_scale: float = 0.1       # std of the token and position embeddings at start (PyTorch's default is 1.0)
    dropout: float = 0.3
    weight_decay: float = 0.1
    min_freq: int = 2
    token_loss: float = 0.3
    label_smoothing: float = 0.05
    unk_rate: float = 0.1
    drop_rate: float = 0.05
    average_last: int = 0          # >0: the kept weights are the mean of the last k epochs' weights
    select_epoch: bool = False     # True: hold out 10 % of the training texts and keep the best epoch on them
    pretrain_epochs: int = 0       # masked-token pretraining on the training (and unlabelled) texts first
    mask_rate: float = 0.15
    d: int = 64
    h: int = 4
    n_blocks: int = 2
    d_ff: int = 128
    max_len: int = 256
    ngram_buckets: int = 0         # >0: each word adds its hashed character 3–5-grams (ticketnet.nn.subwords)
    spell_rate: float = 0.0        # with n-grams: share of training tokens read by their spelling alone, per epoch
    distill: float = 0.0           # weight of the KL term to the teacher's probabilities on train (and unlabelled)
    teacher: str = "tfidf"         # tfidf (out of fold), minilm (fine-tuned on the same texts) or both (their mean)
    unlabelled: int = 0            # learning curve: this many other training tickets, teacher-scored, no label
    copies: int = 0                # augmented copies of each training ticket, scored by the tfidf teacher's fold
    word_vectors: str = ""         # "minilm": each word's embedding starts at MiniLM's vector of the word alone


SHIPPED = Recipe(lr=2e-3, epochs=40, batch_size=64, embed_scale=1.0, dropout=0.1, weight_decay=0.01)
ISSUE = Recipe()                   # the issue's first lever: lr 1e-2, embeddings at 0.1, dropout 0.3, decay 0.1

# Named experiments; each is one change (or a few) from ISSUE unless its name says otherwise.
RECIPES: dict[str, Recipe] = {
    "shipped": SHIPPED,
    "issue": ISSUE,
    "min_freq1": replace(ISSUE, min_freq=1),
    "no_token_loss": replace(ISSUE, token_loss=0.0),
    "ls0.1": replace(ISSUE, label_smoothing=0.1),
    "ls0": replace(ISSUE, label_smoothing=0.0),
    "epochs80": replace(ISSUE, epochs=80),
    "avg10": replace(ISSUE, average_last=10),
    "warmup3": replace(ISSUE, warmup_epochs=3.0),
    "select_epoch": replace(ISSUE, select_epoch=True),
    "lr5e-3": replace(ISSUE, lr=5e-3),
    "lr2e-2": replace(ISSUE, lr=2e-2),
    "bs16": replace(ISSUE, batch_size=16),
    "dropout0.5": replace(ISSUE, dropout=0.5),
    "wd0.3": replace(ISSUE, weight_decay=0.3),
    "mlm20": replace(ISSUE, pretrain_epochs=20),
    "issue_mf1_avg10": replace(ISSUE, min_freq=1, average_last=10),
}
SMALL = RECIPES["issue_mf1_avg10"]
# The Tiny router's levers against the baseline, each one change from the small-data recipe, then together.
RECIPES.update({
    "ngrams": replace(SMALL, ngram_buckets=20_000),
    "ngrams_spell": replace(SMALL, ngram_buckets=20_000, spell_rate=0.1),
    "distill": replace(SMALL, distill=1.0),
    "ngrams_spell_distill": replace(SMALL, ngram_buckets=20_000, spell_rate=0.1, distill=1.0),
    "distill_minilm": replace(SMALL, distill=1.0, teacher="minilm"),
    "distill_both": replace(SMALL, distill=1.0, teacher="both"),
    "distill_u5k": replace(SMALL, distill=1.0, unlabelled=5_000),
    "distill_minilm_u5k": replace(SMALL, distill=1.0, teacher="minilm", unlabelled=5_000),
    "distill_copies4": replace(SMALL, distill=1.0, copies=4),
    "distill_copies4_e20": replace(SMALL, distill=1.0, copies=4, epochs=20, average_last=5),
    "distill_u5k_e12": replace(SMALL, distill=1.0, unlabelled=5_000, epochs=12, average_last=4),
    "minilm_words": replace(SMALL, word_vectors="minilm"),
    "minilm_words_distill": replace(SMALL, word_vectors="minilm", distill=1.0),
    "minilm_words_distill_u5k": replace(SMALL, word_vectors="minilm", distill=1.0, unlabelled=5_000),
    "mlm10_u5k": replace(SMALL, pretrain_epochs=10, unlabelled=5_000),
    "mlm10_distill_u5k": replace(SMALL, pretrain_epochs=10, distill=1.0, unlabelled=5_000),
})


# Up to this many training tickets the small-data recipe beat the shipped one on every set measured (Larkfield at
# 500 and 2,000, Brightwave at 420); the shipped recipe was tuned at 60,000. Between them is unmeasured.
SMALL_DATA_MAX = 2_000


def recipe_for_size(n_train: int) -> Recipe:
    """The recipe this side by side supports for a training set of `n_train` tickets (see docs/research-log.md)."""
    if n_train <= 0:
        raise ValueError(f"n_train must be positive, got {n_train}")
    return RECIPES["issue_mf1_avg10"] if n_train <= SMALL_DATA_MAX else replace(SHIPPED, epochs=12)


@dataclass
class Result:
    experiment: str
    method: str
    n_train: int
    n_eval: int
    accuracy: list[float] = field(default_factory=list)
    macro_f1: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def row(self) -> dict:
        def sd(xs):
            return round(statistics.stdev(xs), 4) if len(xs) > 1 else 0.0
        return {"experiment": self.experiment, "method": self.method, "n_train": self.n_train, "n_eval": self.n_eval,
                "folds": len(self.accuracy), "accuracy_mean": round(statistics.fmean(self.accuracy), 4),
                "accuracy_std": sd(self.accuracy), "macro_f1_mean": round(statistics.fmean(self.macro_f1), 4),
                "macro_f1_std": sd(self.macro_f1), "seconds_per_fold": round(statistics.fmean(self.seconds), 1)}


def read_labelled(path: Path, text_columns: tuple[str, ...], team_column: str) -> tuple[list[str], list[str]]:
    """Texts (the text columns joined by a space) and team names of a CSV; a missing column is named."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f, strict=True)
        header = reader.fieldnames or []
        missing = [c for c in (*text_columns, team_column) if c not in header]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(header)})")
        rows = list(reader)
    return [" ".join(r[c] for c in text_columns) for r in rows], [r[team_column] for r in rows]


def macro_f1(y_true: list[int], y_pred: list[int], n_classes: int) -> float:
    scores = []
    for c in range(n_classes):
        tp = sum(t == c and p == c for t, p in zip(y_true, y_pred))
        fp = sum(t != c and p == c for t, p in zip(y_true, y_pred))
        fn = sum(t == c and p != c for t, p in zip(y_true, y_pred))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return statistics.fmean(scores)


def fit_tfidf(texts: list[str], labels: list[int], c: float | None = 10.0, seed: int = CV_SEED):
    """Word 1-2 and char_wb 2-5 TF-IDF and logistic regression; returns a predictor from texts to class ids.

    `c=None` picks C from (1, 10, 100) by 3-fold CV inside the training texts (the features fitted once on them:
    IDF sees no labels); a fixed C=10 is within noise of it on the sets measured here and ten times cheaper.
    """
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    word = TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True, min_df=1)
    char = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2)
    x = hstack([word.fit_transform(texts), char.fit_transform(texts)]).tocsr()
    if c is None:
        inner = StratifiedKFold(n_splits=3, shuffle=True, random_state=seed)
        search = GridSearchCV(LogisticRegression(max_iter=3000), {"C": [1.0, 10.0, 100.0]}, cv=inner, n_jobs=1)
        c = float(search.fit(x, labels).best_params_["C"])
    model = LogisticRegression(C=c, max_iter=3000).fit(x, labels)
    return lambda xs: [int(p) for p in model.predict(hstack([word.transform(xs), char.transform(xs)]).tocsr())]


def teacher_probs(texts: list[str], labels: list[int], n_classes: int, teacher: str, unlabelled: list[str] = (),
                  seed: int = CV_SEED, copies: int = 0) -> tuple[torch.Tensor, list[str]]:
    """The soft labels (len(texts) + len(unlabelled) + copies, n_classes) the student learns, and the augmented
    copies' texts: the product's baseline teacher (`ticketnet.distill`, out of fold, with `copies` per ticket),
    MiniLM fine-tuned on the same texts (its probabilities on its own training texts), or the mean of both."""
    probs, made = [], []
    if copies and teacher != "tfidf":
        raise ValueError("augmented copies are scored by the tfidf teacher's folds only")
    if teacher in ("tfidf", "both"):
        from ticketnet.distill import baseline_soft_labels

        rows = [{"text": t, "team": str(y)} for t, y in zip(texts, labels)]
        soft = baseline_soft_labels(rows, [str(k) for k in range(n_classes)], unlabelled, seed=seed, copies=copies)
        probs.append(soft.probs)
        made = list(soft.copies)
    if teacher in ("minilm", "both"):
        router = _fine_tuned_encoder(texts, labels, n_classes, {}, seed)
        probs.append(router.predict_encoded([router.encode(t) for t in [*texts, *unlabelled]]).float())
    if not probs:
        raise ValueError(f"unknown teacher {teacher!r}: tfidf, minilm or both")
    return torch.stack(probs).mean(0), made


def minilm_word_vectors(words: list[str], d: int, scale: float) -> torch.Tensor:
    """(len(words), d): the product's `EncoderWordVectors` of all-MiniLM-L6-v2."""
    from ticketnet.encoder.word_vectors import EncoderWordVectors

    return EncoderWordVectors()(words, d, scale)


def _init_embeddings(model: TinyTransformer, scale: float) -> None:
    with torch.no_grad():
        model.embed.weight.normal_(0.0, scale)
        model.embed.weight[PAD_ID].zero_()
        model.position.weight.normal_(0.0, scale)
        if isinstance(model.embed, SubwordEmbedding):
            model.embed.grams.weight.normal_(0.0, scale)
            model.embed.grams.weight[0].zero_()


def _schedule(opt, steps_per_epoch: int, epochs: int, warmup_epochs: float):
    total = epochs * steps_per_epoch
    warm = max(1, round(warmup_epochs * steps_per_epoch))
    return torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))


@torch.inference_mode()
def _predict(model: TinyTransformer, seqs: list[list[int]], batch_size: int = 256) -> list[int]:
    model.eval()
    out = [0] * len(seqs)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    for i in range(0, len(order), batch_size):
        idx = order[i : i + batch_size]
        preds = model(*pad_batch([seqs[j] or [UNK_ID] for j in idx])).argmax(1).tolist()
        for j, p in zip(idx, preds):
            out[j] = p
    return out


def fit_transformer(texts: list[str], labels: list[int], n_classes: int, recipe: Recipe, seed: int = 0,
                    unlabelled: list[str] = ()):
    """Train one TinyTransformer by `recipe`; returns a predictor from texts to class ids."""
    torch.manual_seed(seed)
    rng, aug_rng = random.Random(seed), random.Random(seed + 1)
    held_out: list[int] = []
    if recipe.select_epoch:
        from sklearn.model_selection import train_test_split

        keep, held_out = train_test_split(list(range(len(texts))), test_size=0.1, stratify=labels, random_state=seed)
        texts, labels, hold_texts, hold_labels = ([texts[i] for i in keep], [labels[i] for i in keep],
                                                  [texts[i] for i in held_out], [labels[i] for i in held_out])
    vocab = Vocab([*texts, *unlabelled], min_freq=recipe.min_freq)
    cfg = TinyConfig(len(vocab), d=recipe.d, h=recipe.h, n_blocks=recipe.n_blocks, d_ff=recipe.d_ff,
                     max_len=recipe.max_len, n_classes=n_classes, dropout=recipe.dropout)
    model = TinyTransformer(cfg)
    index = dict(vocab.stoi)
    if recipe.ngram_buckets:
        # Each word's twin (id + len(vocab) − 2) has its spelling and no word vector: what a word unseen in training
        # reads as, and what `spell_rate` of the training tokens are read as.
        words = [*vocab.itos, *vocab.itos[2:]]
        known = torch.tensor([True] * len(vocab) + [False] * (len(vocab) - 2))
        model.embed = SubwordEmbedding(torch.nn.Embedding(len(words), recipe.d, padding_idx=PAD_ID),
                                       ngram_table(words, recipe.ngram_buckets, skip=vocab.itos[:2]), known,
                                       recipe.ngram_buckets)
    _init_embeddings(model, recipe.embed_scale)
    if recipe.word_vectors:
        with torch.no_grad():
            model.embed.weight[2 : len(vocab)] = minilm_word_vectors(vocab.itos[2:], recipe.d, recipe.embed_scale)

    def encode(xs):
        if not recipe.ngram_buckets:
            return [vocab.encode(x)[: cfg.max_len] or [UNK_ID] for x in xs]
        new = sorted({t for x in xs for t in tokenize(x)[: cfg.max_len] if t not in index})
        for word, i in zip(new, model.embed.extend(new)):
            index[word] = i
        return [[index[t] for t in tokenize(x)[: cfg.max_len]] or [UNK_ID] for x in xs]

    def spelt(seqs_in, rng_spell):
        twin = len(vocab) - 2
        return [[t + twin if 2 <= t < len(vocab) and rng_spell.random() < recipe.spell_rate else t for t in q]
                for q in seqs_in]

    seqs = encode(texts)
    hold = (encode(hold_texts), hold_labels) if held_out else None   # before the optimiser: new words grow the table
    y = torch.tensor(labels)
    if recipe.pretrain_epochs:
        pretrain(model, seqs + encode(unlabelled),
                 TrainConfig(lr=recipe.lr, weight_decay=recipe.weight_decay, batch_size=recipe.batch_size,
                             warmup_epochs=recipe.warmup_epochs, pretrain_epochs=recipe.pretrain_epochs,
                             mask_rate=recipe.mask_rate), random.Random(seed + 2))
    loss_cfg = TrainConfig(label_smoothing=recipe.label_smoothing, token_loss=recipe.token_loss,
                           batch_size=recipe.batch_size, unk_rate=recipe.unk_rate, drop_rate=recipe.drop_rate,
                           distill=recipe.distill)
    soft = None
    if recipe.distill:
        soft, made = teacher_probs(texts, labels, n_classes, recipe.teacher, list(unlabelled), seed, recipe.copies)
        extra = [*unlabelled, *made]     # the unlabelled texts and the copies train on their soft labels alone
        seqs = seqs + encode(extra)
        y = torch.cat([y, torch.full((len(extra),), UNLABELLED, dtype=torch.long)])
    spell_rng = random.Random(seed + 3)
    opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    sched = _schedule(opt, math.ceil(len(seqs) / recipe.batch_size), recipe.epochs, recipe.warmup_epochs)
    best_score, best_state, averaged, n_averaged = -1.0, None, None, 0
    for epoch in range(1, recipe.epochs + 1):
        model.train()
        epoch_seqs = spelt(seqs, spell_rng) if recipe.spell_rate else seqs
        train_epoch(model, epoch_seqs, y, opt, sched, loss_cfg, rng, aug_rng, soft=soft)
        if hold is not None:
            score = statistics.fmean(p == t for p, t in zip(_predict(model, hold[0]), hold[1]))
            if score >= best_score:      # ties go to the later epoch: the schedule has cooled further
                best_score, best_state = score, {k: v.detach().clone() for k, v in model.state_dict().items()}
        if recipe.average_last and epoch > recipe.epochs - recipe.average_last:
            state = model.state_dict()
            if averaged is None:
                averaged = {k: v.detach().clone().float() for k, v in state.items()}
            else:
                for k, v in state.items():
                    averaged[k] += v.float()
            n_averaged += 1
    if best_state is not None:
        model.load_state_dict(best_state)
    elif averaged is not None:
        model.load_state_dict({k: v / n_averaged for k, v in averaged.items()})
    return lambda xs: _predict(model, encode(xs))


# Encoder fine-tunes side by side with the Tiny recipes and the baseline, on the same folds (`--encoders`); each
# keeps its last epoch, as the Tiny recipes do, so no fold's evaluation tickets choose anything.
ENCODERS: dict[str, dict] = {
    "minilm_top2": {},
    "minilm_all": {"train_blocks": None},
    "minilm_top2_e10": {"epochs": 10},
    "minilm_all_e3": {"train_blocks": None, "epochs": 3},
    "minilm_top2_lr3e-4": {"lr": 3e-4},
}


def _fine_tuned_encoder(texts: list[str], labels: list[int], n_classes: int, overrides: dict, seed: int = 0):
    """MiniLM fine-tuned on the texts by ticketnet.encoder.finetune's recipe with `overrides`, in eval mode."""
    from ticketnet.encoder.finetune import EncoderRecipe, start_router, train_loop

    recipe = EncoderRecipe(seed=seed, threads=torch.get_num_threads(), **overrides)
    router, _, first = start_router(recipe, tuple(str(k) for k in range(n_classes)))
    encoded = [router.encode(t) for t in texts]
    state, *_ = train_loop(router, encoded, torch.tensor(labels), recipe, first, log=lambda m: None)
    router.model.load_state_dict({**router.model.state_dict(), **state})
    router.model.eval()
    return router


def fit_encoder(texts: list[str], labels: list[int], n_classes: int, overrides: dict, seed: int = 0):
    """Fine-tune MiniLM (`_fine_tuned_encoder`) on the texts; a predict function."""
    router = _fine_tuned_encoder(texts, labels, n_classes, overrides, seed)
    return lambda xs: router.predict_encoded([router.encode(t) for t in xs]).argmax(1).tolist()


def _score(result: Result, fit, train_x, train_y, eval_x, eval_y, n_classes: int) -> None:
    start = time.perf_counter()
    predict = fit(train_x, train_y)
    pred = predict(eval_x)
    result.seconds.append(time.perf_counter() - start)
    result.accuracy.append(statistics.fmean(p == t for p, t in zip(pred, eval_y)))
    result.macro_f1.append(macro_f1(eval_y, pred, n_classes))


def _fitters(n_classes: int, recipes: dict[str, Recipe], seed: int, baseline: bool, encoders: tuple[str, ...] = (),
             pool: list[str] | None = None):
    """(experiment, method, fit) for each method; `pool`: the texts a recipe's `unlabelled` are drawn from (None:
    there are none, as in a k-fold run, and such a recipe is refused)."""
    if baseline:
        yield "tfidf", "tfidf_logreg", fit_tfidf
    for name, recipe in recipes.items():
        if recipe.unlabelled and pool is None:
            raise ValueError(f"recipe {name}: unlabelled texts come from a learning curve's other training tickets "
                             "(--eval); a k-fold run has none")
        extra = (pool or [])[: recipe.unlabelled]
        yield name, "transformer", (lambda r, u: lambda x, y: fit_transformer(x, y, n_classes, r, seed, u))(recipe,
                                                                                                           extra)
    for name in encoders:
        yield name, "encoder", (lambda o: lambda x, y: fit_encoder(x, y, n_classes, o, seed))(ENCODERS[name])


def cross_validate(texts: list[str], teams: list[str], recipes: dict[str, Recipe], folds: int = 5,
                   seed: int = CV_SEED, baseline: bool = True, log=print, encoders: tuple[str, ...] = ()) -> list[dict]:
    """Stratified k-fold: every method on the same folds; one table row per method."""
    from sklearn.model_selection import StratifiedKFold

    names = sorted(set(teams))
    y = [names.index(t) for t in teams]
    results = {}
    splits = list(StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(texts, y))
    for exp, method, fit in _fitters(len(names), recipes, seed, baseline, encoders):
        res = results[exp] = Result(exp, method, len(splits[0][0]), len(splits[0][1]))
        for k, (tr, ev) in enumerate(splits):
            _score(res, fit, [texts[i] for i in tr], [y[i] for i in tr], [texts[i] for i in ev], [y[i] for i in ev],
                   len(names))
            log(f"{exp} fold {k + 1}: accuracy {res.accuracy[-1]:.4f} ({res.seconds[-1]:.1f} s)")
        log(format_table([res.row()]))
    return [r.row() for r in results.values()]


def stratified_sample(teams: list[str], n: int, seed: int) -> list[int]:
    from sklearn.model_selection import train_test_split

    if n >= len(teams):
        return list(range(len(teams)))
    keep, _ = train_test_split(list(range(len(teams))), train_size=n, stratify=teams, random_state=seed)
    return sorted(keep)


def learning_curve(train_texts: list[str], train_teams: list[str], eval_texts: list[str], eval_teams: list[str],
                   sizes: list[int], recipes: dict[str, Recipe], seed: int = CV_SEED, baseline: bool = True,
                   log=print, encoders: tuple[str, ...] = ()) -> list[dict]:
    """Train on stratified subsamples of the training set, score on the fixed evaluation set; a row per size and method."""
    names = sorted(set(train_teams))
    rows = []
    for n in sizes:
        idx = stratified_sample(train_teams, n, seed)
        tx, ty = [train_texts[i] for i in idx], [names.index(train_teams[i]) for i in idx]
        ey = [names.index(t) for t in eval_teams]
        chosen = set(idx)
        pool = [train_texts[i] for i in random.Random(seed).sample(range(len(train_texts)), len(train_texts))
                if i not in chosen]
        for exp, method, fit in _fitters(len(names), recipes, seed, baseline, encoders, pool):
            res = Result(exp, method, len(tx), len(eval_texts))
            _score(res, fit, tx, ty, eval_texts, ey, len(names))
            rows.append(res.row())
            log(format_table(rows[-1:]))
    return rows


def format_table(rows: list[dict]) -> str:
    """A Markdown table of result rows: accuracy and macro F1 as mean ± std, and the seconds per fold."""
    lines = ["| experiment | method | n_train | folds | accuracy | macro F1 | s / fold |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['experiment']} | {r['method']} | {r['n_train']} | {r['folds']} | "
                     f"{r['accuracy_mean']:.3f} ± {r['accuracy_std']:.3f} | "
                     f"{r['macro_f1_mean']:.3f} ± {r['macro_f1_std']:.3f} | {r['seconds_per_fold']:.1f} |")
    return "\n".join(lines)


def _columns(value: str) -> tuple[str, ...]:
    cols = tuple(c.strip() for c in value.split(",") if c.strip())
    if not cols:
        raise argparse.ArgumentTypeError("name at least one text column")
    return cols


def _overrides(parser: argparse.ArgumentParser, items: list[str]) -> dict:
    fields = {f: type(v) for f, v in asdict(Recipe()).items()}
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in fields:
            parser.error(f"--set {item!r}: expected FIELD=VALUE with FIELD one of {', '.join(fields)}")
        kind = fields[key]
        try:
            out[key] = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
        except ValueError:
            parser.error(f"--set {item!r}: {value!r} is not a {kind.__name__}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ticketnet.bench.small_data", description=__doc__)
    p.add_argument("--data", type=Path, required=True, help="labelled CSV (k-fold) or the training CSV (--eval)")
    p.add_argument("--eval", type=Path, help="a fixed evaluation CSV: hold-out learning curve instead of k-fold")
    p.add_argument("--sizes", default="500,2000", help="training-set sizes for the learning curve (with --eval)")
    p.add_argument("--text-columns", type=_columns, default=("subject", "body"))
    p.add_argument("--team-column", default="team")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--limit", type=int, help="use a stratified sample of this many labelled tickets")
    p.add_argument("--recipes", default="shipped,issue",
                   help=f"comma-separated, from: {', '.join(RECIPES)}; 'none' for the baseline only")
    p.add_argument("--encoders", default="", help=f"comma-separated encoder fine-tunes, from: {', '.join(ENCODERS)}")
    p.add_argument("--epochs", type=int, help="override every recipe's epochs")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override a recipe field in every recipe (repeatable), e.g. --set epochs=80 --set lr=0.02")
    p.add_argument("--name", help="the experiment's name in the table when one recipe is run with --set")
    p.add_argument("--no-baseline", action="store_true")
    p.add_argument("--json", type=Path, help="also write the rows and the recipes as JSON here")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    names = [] if args.recipes == "none" else [n.strip() for n in args.recipes.split(",") if n.strip()]
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        p.error(f"unknown recipe(s) {', '.join(unknown)}; known: {', '.join(RECIPES)}")
    encoders = tuple(n.strip() for n in args.encoders.split(",") if n.strip())
    if [n for n in encoders if n not in ENCODERS]:
        p.error(f"unknown encoder fine-tune(s); known: {', '.join(ENCODERS)}")
    overrides = _overrides(p, args.set) | ({"epochs": args.epochs} if args.epochs is not None else {})
    recipes = {n: replace(RECIPES[n], **overrides) for n in names}
    if args.name:
        if len(recipes) != 1:
            p.error("--name needs exactly one recipe")
        recipes = {args.name: next(iter(recipes.values()))}
    texts, teams = read_labelled(args.data, args.text_columns, args.team_column)
    if args.limit:
        idx = stratified_sample(teams, args.limit, CV_SEED)
        texts, teams = [texts[i] for i in idx], [teams[i] for i in idx]
    if args.eval:
        eval_texts, eval_teams = read_labelled(args.eval, args.text_columns, args.team_column)
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        rows = learning_curve(texts, teams, eval_texts, eval_teams, sizes, recipes, baseline=not args.no_baseline,
                              encoders=encoders)
    else:
        rows = cross_validate(texts, teams, recipes, args.folds, baseline=not args.no_baseline, encoders=encoders)
    print(format_table(rows))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "recipes": {n: asdict(r) for n, r in recipes.items()}},
                                        indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
