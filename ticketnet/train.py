"""Train a router on a folder of splits or on one export file, keep the best epoch on valid, and write its folder atomically."""

from __future__ import annotations

import copy
import io
import json
import math
import os
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F

from ticketnet._runtime.atomic import staged_folder, write_atomic
from ticketnet._runtime.hashing import file_sha256
from ticketnet.baseline import fit_baseline
from ticketnet.catalog import SEEDS_FOLDER   # where `--keep-all-seeds` keeps each run
from ticketnet.data.export import ExportColumns, read_export, split_export, splits_csv
from ticketnet.data.text import UNK_ID, Vocab
from ticketnet.data.thread import split_thread
from ticketnet.data.tickets import DataError, is_hard, load_split, team_list, teams_of
from ticketnet.metrics import fit_temperature, summarize
from ticketnet.nn.batching import batched_probs
from ticketnet.nn.transformer import TinyConfig, TinyTransformer, pad_batch
from ticketnet.paths import ROUTER_DATA, TRAIN_SEED, data_dir, weights_dir
from ticketnet.predictions import write_predictions
from ticketnet.router import Router


@dataclass(frozen=True)
class TrainConfig:
    """How a router is trained. Fields left at None take the recipe for the training set's size (`resolved`)."""

    seed: int = TRAIN_SEED
    epochs: int | None = None
    batch_size: int | None = None
    lr: float | None = None   # peak learning rate, after a one-epoch warm-up, then cosine decay
    weight_decay: float | None = None
    label_smoothing: float = 0.05
    min_freq: int | None = None  # tokens seen fewer times in train become <unk>, so the model learns to read <unk>
    threads: int = 2
    unk_rate: float = 0.1     # augmentation: share of training tokens replaced by <unk> (redrawn every epoch)
    drop_rate: float = 0.05   # augmentation: share of training tokens deleted (redrawn every epoch)
    dev_weight: float = 0.5   # weight of the hand-written development set's accuracy in the epoch score
    ood_accuracy: float = 0.67  # min_confidence: below it, valid tickets were routed right at most this often
    token_loss: float = 0.3   # weight of the per-token loss: every token's own logits must name the ticket's team
    embed_scale: float | None = None  # token and position embeddings start at N(0, embed_scale²)
    dropout: float | None = None
    d: int = 64               # the model's shape (TinyConfig); recorded in router.json
    heads: int = 4
    blocks: int = 2
    d_ff: int = 128
    max_len: int = 256
    average_last: int | None = None  # keep the mean of the last k epochs' weights (0: the best valid epoch)
    warmup_epochs: int | None = None  # epochs of linear warm-up before the cosine decay
    recipe: str | None = None  # "large", "small" or "finetune"; None: by the training set's size, or "finetune"
    init_from: str | None = None  # a router's router.pt to start from: its shape, vocabulary, teams and weights
    # Weight of a distillation term that keeps a router's probabilities (`keep_from`, else `init_from`) on the training
    # tickets it already routes right (KL to its raw logits); the tickets it gets wrong are learnt from the labels.
    keep: float = 0.0
    keep_from: str | None = None  # that router, when it is not the starting one (its own vocabulary: read by token)
    # With init_from: the vocabulary built from the new training tickets instead of the starting router's; a word it
    # knew keeps its embedding, a new word starts at its <unk> embedding (what it read the word as).
    new_vocabulary: bool = False

    def __post_init__(self) -> None:
        for name in ("batch_size", "d", "heads", "blocks", "d_ff", "max_len", "threads"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.epochs is not None and self.epochs < 1:
            raise ValueError(f"--epochs must be at least 1, got {self.epochs}")
        if self.lr is not None and not self.lr > 0:
            raise ValueError(f"--lr must be positive, got {self.lr}")
        if self.keep < 0:
            raise ValueError(f"--keep must be at least 0, got {self.keep}")
        if self.new_vocabulary and not self.init_from:
            raise ValueError("--new-vocabulary needs --init-from: a training from scratch always builds its own")
        if self.keep and not (self.init_from or self.keep_from):
            raise ValueError("--keep needs --keep-from or --init-from: the router whose right answers it keeps")
        if self.d % self.heads:
            raise ValueError(f"--d {self.d} is not a multiple of --heads {self.heads}")

    def resolved(self, n_train: int) -> "TrainConfig":
        """This config with every None taken from the recipe for `n_train` training tickets."""
        recipe = self.recipe or ("finetune" if self.init_from else "small" if n_train < SMALL_DATA else "large")
        if recipe not in RECIPES:
            raise ValueError(f"unknown recipe {recipe!r}; expected one of {', '.join(RECIPES)}")
        chosen = {k: v for k, v in RECIPES[recipe].items() if getattr(self, k) is None}
        return replace(self, recipe=recipe, **chosen)

    def model_config(self, vocab_size: int, n_classes: int) -> TinyConfig:
        return TinyConfig(vocab_size, d=self.d, h=self.heads, n_blocks=self.blocks, d_ff=self.d_ff,
                          max_len=self.max_len, n_classes=n_classes, dropout=self.dropout)


# Fewer training tickets than this take the small-data recipe. The large one trained the shipped router on 60,000
# tickets. On a few hundred tickets it under-trains: at lr 2e-3 the N(0, 1) embeddings of rare words barely move in
# the ~500 steps there are, so the small recipe starts them at a tenth of that scale, steps ten times harder for
# longer, keeps every word seen, regularises harder, and keeps the mean of its last ten epochs: on ~50 valid tickets
# the best single epoch is mostly noise (measured side by side in docs/research-log.md: the small recipe beat the
# large one at 420, 500 and 2,000 tickets; between 2,000 and 60,000 the switch at 5,000 is not measured).
SMALL_DATA = 5_000
RECIPES: dict[str, dict] = {
    "large": {"epochs": 12, "lr": 2e-3, "weight_decay": 0.01, "embed_scale": 1.0, "dropout": 0.1, "batch_size": 64,
              "min_freq": 2, "average_last": 0, "warmup_epochs": 1},
    "small": {"epochs": 40, "lr": 1e-2, "weight_decay": 0.1, "embed_scale": 0.1, "dropout": 0.3, "batch_size": 32,
              "min_freq": 1, "average_last": 10, "warmup_epochs": 1},
    # From a trained router (`init_from`): its vocabulary and shape kept, a few epochs at half the large recipe's
    # peak rate with no warm-up, so what it has learnt moves little. Chosen on the hand-written development set
    # (docs/research-log.md, the e-mail thread round): 3e-4 for 2 epochs barely moved the router; 1e-3 for 3 epochs gained one or
    # two e-mail threads on every seed, and on one seed of three kept every other style within a ticket.
    "finetune": {"epochs": 3, "lr": 1e-3, "weight_decay": 0.01, "embed_scale": 1.0, "dropout": 0.1, "batch_size": 64,
                 "min_freq": 2, "average_last": 0, "warmup_epochs": 0},
}

# Hand-written tickets, never trained on: the development set picks the epoch, the evaluation set is only reported.
HANDWRITTEN = ("handwritten_dev", "handwritten")


def encode_rows(rows: list[dict], vocab: Vocab, max_len: int,
                teams: Sequence[str]) -> tuple[list[list[int]], torch.Tensor]:
    """Token ids (truncated to `max_len`) and team indices in the order of `teams`."""
    index = {t: i for i, t in enumerate(teams)}
    seqs = [vocab.encode(split_thread(r["text"]).new)[:max_len] for r in rows]
    try:
        labels = torch.tensor([index[r["team"]] for r in rows], dtype=torch.long)
    except KeyError as exc:
        raise DataError(f"team {exc.args[0]!r} is not one of the router's teams ({team_list(teams)})") from None
    return seqs, labels


def length_batches(seqs: list[list[int]], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of tickets of similar length, so little compute goes to padding."""
    order = sorted(range(len(seqs)), key=lambda i: (len(seqs[i]), rng.random()))
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


def augment(seq: list[int], rng: random.Random, unk_rate: float, drop_rate: float) -> list[int]:
    """A training copy of a ticket with some tokens deleted and some replaced by <unk> (never empty)."""
    out = []
    for t in seq:
        r = rng.random()
        if r < drop_rate:
            continue
        out.append(UNK_ID if r < drop_rate + unk_rate else t)
    return out or seq[:1]


@dataclass(frozen=True)
class Teacher:
    """A trained router's model, raw logits and frozen, reading the student's token ids through `id_map` (student id ->
    its own id, by token; a token it does not know is <unk>), or as they are where the vocabularies are the same."""
    model: TinyTransformer
    id_map: torch.Tensor | None = None

    @classmethod
    def of(cls, router: Router, vocab: Vocab) -> "Teacher":
        model = raw_logits(router).eval().requires_grad_(False)
        if router.vocab == vocab:
            return cls(model)
        return cls(model, torch.tensor([router.vocab.stoi.get(tok, UNK_ID) for tok in vocab.itos]))

    def __call__(self, ids: torch.Tensor, is_pad: torch.Tensor) -> torch.Tensor:
        return self.model(ids if self.id_map is None else self.id_map[ids], is_pad)


def ticket_loss(model: TinyTransformer, ids: torch.Tensor, is_pad: torch.Tensor, labels: torch.Tensor,
                cfg: TrainConfig, teacher: Teacher | None = None) -> torch.Tensor:
    """Cross-entropy of the ticket's logits, plus `token_loss` times the mean cross-entropy of each token's own logits,
    plus, with a `teacher` (a router kept, frozen), `keep` times the KL divergence from its probabilities on the
    tickets of the batch it routes right.

    The head is linear and the pooling a mean, so the ticket's logits are the mean of per-token logits
    head(norm(h_t)). The ticket loss only asks that mean to be right; the token term asks every token to carry the
    team, so a set-aside topic ("I don't want to send it back") must be turned around by what the token attends to
    rather than outvoted by the other tokens.
    """
    h = model.blocks(model.embeddings(ids), src_key_padding_mask=is_pad)    # (B, n, d)
    per_token = model.head(model.norm(h))                                   # (B, n, C)
    keep = (~is_pad).to(per_token.dtype).unsqueeze(-1)                      # (B, n, 1)
    logits = (per_token * keep).sum(1) / keep.sum(1)                        # (B, C), the same as model(ids, is_pad)
    loss = F.cross_entropy(logits, labels, label_smoothing=cfg.label_smoothing)
    if cfg.token_loss:
        real = ~is_pad                                                      # (B, n)
        token_labels = labels[:, None].expand_as(real)[real]                # (tokens,)
        loss = loss + cfg.token_loss * F.cross_entropy(per_token[real], token_labels,
                                                       label_smoothing=cfg.label_smoothing)
    if teacher is not None and cfg.keep:
        with torch.no_grad():
            kept = teacher(ids, is_pad)                                     # (B, C)
            right = kept.argmax(1).eq(labels)                               # (B,)
        if right.any():
            loss = loss + cfg.keep * F.kl_div(F.log_softmax(logits[right], -1), F.log_softmax(kept[right], -1),
                                              log_target=True, reduction="batchmean")
    return loss


def lr_schedule(opt, steps_per_epoch: int, cfg: TrainConfig) -> torch.optim.lr_scheduler.LambdaLR:
    """The rate per step: a linear warm-up over `cfg.warmup_epochs`, then a cosine decay to 0 at the last step."""
    total, warmup = cfg.epochs * steps_per_epoch, cfg.warmup_epochs * steps_per_epoch
    return torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (min(1.0, (s + 1) / warmup) if warmup else 1.0)
        * 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))


def train_epoch(model: TinyTransformer, seqs: list[list[int]], labels: torch.Tensor, opt, sched,
                cfg: TrainConfig, rng: random.Random, aug_rng: random.Random, teacher: Teacher | None = None) -> float:
    """One pass over the training tickets in shuffled length batches, each freshly augmented: a clipped AdamW step
    and a scheduler step per batch (`teacher`: see `ticket_loss`). Returns the summed loss (mean loss × tickets)."""
    loss_sum = 0.0
    for idx in length_batches(seqs, cfg.batch_size, rng):
        ids, is_pad = pad_batch([augment(seqs[i], aug_rng, cfg.unk_rate, cfg.drop_rate) for i in idx])
        loss = ticket_loss(model, ids, is_pad, labels[idx], cfg, teacher)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        loss_sum += loss.item() * len(idx)
    return loss_sum


def predict_seqs(model: TinyTransformer, seqs: list[list[int]], batch_size: int = 512) -> torch.Tensor:
    model.eval()
    return batched_probs(model, seqs, batch_size)


@torch.inference_mode()
def predict_logits(model: TinyTransformer, seqs: list[list[int]], batch_size: int = 512) -> torch.Tensor:
    model.eval()
    out = torch.empty(len(seqs), model.config.n_classes)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    for i in range(0, len(order), batch_size):
        idx = order[i : i + batch_size]
        out[idx] = model(*pad_batch([seqs[j] for j in idx]))
    return out


def accuracy_interval(correct: int, n: int) -> list[float]:
    """Wilson 95 % interval of an accuracy of `correct` out of `n` (statsmodels)."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(correct, n, alpha=0.05, method="wilson")
    return [round(float(lo), 4), round(float(hi), 4)]


def evaluate(model: TinyTransformer, rows: list[dict], vocab: Vocab, teams: Sequence[str]) -> dict:
    """Accuracy (with its Wilson 95 % interval), per-team scores, ECE, the hard slice where the rows mark one
    (`pattern`), and accuracy per `style` when the rows have one."""
    seqs, labels = encode_rows(rows, vocab, model.config.max_len, teams)
    return evaluate_probs(predict_seqs(model, seqs), labels, rows, teams)


def evaluate_probs(probs: torch.Tensor, labels: torch.Tensor, rows: list[dict], teams: Sequence[str]) -> dict:
    """`evaluate`'s figures from any router's probabilities (len(rows), teams) and the rows' team indices."""
    hard = torch.tensor([is_hard(r) for r in rows])
    groups = [r["style"] for r in rows] if rows and "style" in rows[0] else None
    out = summarize(probs, labels, tuple(teams), hard, groups)
    out["accuracy_interval"] = accuracy_interval(round(out["accuracy"] * out["n"]), out["n"])
    if groups is not None:
        out["per_style"] = out.pop("per_group")
    return out


def fold_temperature(model: TinyTransformer, temperature: float) -> None:
    """Divide the head's weights and bias by T, so the model's logits become logits / T everywhere."""
    with torch.no_grad():
        model.head.weight.div_(temperature)
        model.head.bias.div_(temperature)


def ood_thresholds(model: TinyTransformer, rows: list[dict], vocab: Vocab, teams: Sequence[str],
                   target_accuracy: float) -> dict:
    """Where a typed ticket stops looking like the training data, measured on valid (calibrated model).

    min_confidence: the largest confidence c (in steps of 0.01) such that valid tickets below c were routed right at
    most `target_accuracy` of the time. max_unknown_share: the 99th percentile of valid's share of unknown word
    tokens, and at least 0.25.
    """
    from ticketnet.data.text import tokenize
    from ticketnet.router import Encoded

    seqs, labels = encode_rows(rows, vocab, model.config.max_len, teams)
    conf, pred = predict_seqs(model, seqs).max(dim=1)
    correct = pred.eq(labels)
    min_conf = confidence_floor(conf, correct, target_accuracy)
    shares = sorted(Encoded(r["text"], tokenize(r["text"]), s, len(s), 0).unknown_share for r, s in zip(rows, seqs))
    p99 = shares[min(len(shares) - 1, int(0.99 * len(shares)))]
    below = conf < min_conf
    return {"min_confidence": round(min_conf, 2), "max_unknown_share": round(max(0.25, p99), 3),
            "valid_share_below_min_confidence": round(below.double().mean().item(), 4),
            "valid_accuracy_below_min_confidence": round(correct[below].double().mean().item(), 4) if below.any() else None,
            "valid_unknown_share_p99": round(p99, 3)}


def confidence_floor(conf: torch.Tensor, correct: torch.Tensor, target_accuracy: float) -> float:
    """The largest confidence c (in steps of 0.01, from 0.20) such that the tickets below c (at least 10) were
    routed right at most `target_accuracy` of the time; 0 where no c qualifies."""
    floor = 0.0
    for c in (x / 100 for x in range(20, 100)):
        below = conf < c
        if below.sum() >= 10 and correct[below].double().mean().item() <= target_accuracy:
            floor = c
    return floor


class WeightAverage:
    """The running mean of several state_dicts (summed in float64), for keeping the mean of the last epochs."""

    def __init__(self) -> None:
        self.total: dict[str, torch.Tensor] = {}
        self.count = 0

    def add(self, state: dict[str, torch.Tensor]) -> None:
        for k, v in state.items():
            if k in self.total:
                self.total[k] += v.detach().double()
            else:
                self.total[k] = v.detach().clone().double()
        self.count += 1

    def mean(self) -> dict[str, torch.Tensor]:
        if not self.count:
            raise ValueError("no weights were added")
        return {k: (v / self.count).float() for k, v in self.total.items()}


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


def raw_logits(router: Router, dropout: float | None = None) -> TinyTransformer:
    """A copy of the router's model with the calibration temperature taken back out of its head (training sees raw
    logits), its dropout set to `dropout` where given."""
    if dropout is None or dropout == router.model.config.dropout:
        model = copy.deepcopy(router.model)      # no second initialisation: the seed's stream starts with training
    else:
        model = TinyTransformer(replace(router.model.config, dropout=dropout))
        model.load_state_dict(router.model.state_dict())
    with torch.no_grad():
        model.head.weight.mul_(router.temperature)
        model.head.bias.mul_(router.temperature)
    return model


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
         baseline: dict | None = None, evaluate_on: Path | None = None) -> dict:
    """Train on the splits in `data`, keep the best valid epoch (or the mean of the last epochs), and write the
    router's files into `out` (a folder being staged: nobody reads it yet). `baseline`: one already fitted on
    these splits (a seed search fits it once). Returns the card.

    `evaluate_on`: another folder of splits, the router's home: its card (data hashes, metrics, OOD thresholds,
    baseline) and stored predictions are measured there, while `data` is trained on and picks the epoch (with the
    home's hand-written development set where `data` has none) and fits the temperature; `data`'s own hashes,
    metrics and baseline go under the card's `train.data`. A fine-tune on a regenerated draw of the generator is
    scored this way on the shipped splits it did not change."""
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
    if base is None:
        cfg = cfg.resolved(len(train_rows))
        vocab, model = new_model(cfg, train_rows, len(teams))
    elif cfg.new_vocabulary:
        vocab = Vocab([split_thread(r["text"]).new for r in train_rows], min_freq=cfg.min_freq)
        model = adopt_vocabulary(model, base.vocab, vocab)
    teacher = None
    if cfg.keep:
        source = Router.load(router_file(cfg.keep_from)) if cfg.keep_from else base
        if tuple(source.teams) != tuple(teams):
            raise DataError(f"--keep-from {cfg.keep_from}: its teams ({team_list(source.teams)}) are not the ones "
                            f"trained here ({team_list(teams)})")
        teacher = Teacher.of(source, vocab)
    seqs, labels = encode_rows(train_rows, vocab, model.config.max_len, teams)
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
        parts = {"valid_accuracy": round(valid_acc, 4)}
        if dev is None:
            return valid_acc, parts
        dev_acc = predict_seqs(model, dev[0]).argmax(1).eq(dev[1]).double().mean().item()
        parts["handwritten_dev_accuracy"] = round(dev_acc, 4)
        return (1 - cfg.dev_weight) * valid_acc + cfg.dev_weight * dev_acc, parts

    best, best_state, history, average = -1.0, None, [], WeightAverage()
    start, cpu_start = time.perf_counter(), time.process_time()
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        loss_sum = train_epoch(model, seqs, labels, opt, sched, cfg, rng, aug_rng, teacher)
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
                  **trained_on},
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
          log: Callable[[str], None] = print, extra: dict | None = None, evaluate_on: Path | None = None) -> dict:
    """Train on the train/valid/test CSVs in `data`, keep the best valid epoch, and write `router.pt`, `vocab.json`,
    `router.json` and `predictions/` into `out` as one folder swap: an interrupted run leaves `out` as it was.
    `evaluate_on`: the folder whose splits the card and predictions are measured on (see `_fit`)."""
    data = data or data_dir()
    with staged_folder(out or weights_dir(), ROUTER_MARKER) as stage:
        return _fit(data, stage, cfg, log, extra, evaluate_on=evaluate_on)




def train_seeds(seeds: list[int], data: Path | None = None, out: Path | None = None,
                cfg: TrainConfig = TrainConfig(), log: Callable[[str], None] = print,
                extra: dict | None = None, keep_all: bool = False) -> dict:
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
        return _fit_seeds(seeds, data, stage, cfg, log, extra, keep_all)


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
               extra: dict | None, keep_all: bool = False) -> dict:
    runs, best, baseline = [], None, None
    with tempfile.TemporaryDirectory(prefix=".seed-search-", dir=out) as tmp:
        for seed in seeds:
            log(f"seed {seed}")
            run_dir = Path(tmp) / f"seed-{seed}"
            run_dir.mkdir()
            # One baseline for the search: fitted with the first run (a sample of a split over MAX_TRAIN tickets
            # takes that run's seed), reused by the others, whose splits are the same.
            card = _fit(data, run_dir, replace(cfg, seed=seed), log, extra, baseline)
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
                 split_seed: int | None = None, fit: Callable[[Path, Path, dict], dict] | None = None) -> dict:
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
            return _fit_seeds(seeds, data, stage, cfg, log, extra, keep_all)
        return _fit(data, stage, cfg, log, extra)


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
