"""The steps every training run is made of: the recipe, rows encoded, batches and augmentation, the loss, an epoch, the evaluation, calibration, the OOD thresholds."""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F

from ticketnet.data.text import UNK_ID, Vocab
from ticketnet.data.thread import split_thread
from ticketnet.data.tickets import DataError, is_hard, team_list
from ticketnet.metrics import summarize
from ticketnet.nn.batching import batched_probs
from ticketnet.nn.transformer import TinyConfig, TinyTransformer, pad_batch
from ticketnet.paths import TRAIN_SEED
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
    # Weight of a soft-label term: the KL divergence from a teacher's probabilities on each training ticket, computed
    # once before training (any kind of teacher, labelled tickets or not); 0 learns from the labels alone.
    distill: float = 0.0
    # Epochs of masked-token pretraining of the embeddings and blocks on every text (the training tickets and the
    # unlabelled ones) before the routing epochs; `mask_rate` of each text's tokens are hidden as <unk> and named.
    pretrain_epochs: int = 0
    mask_rate: float = 0.15
    # Augmented copies of each training ticket that the teacher scores (`ticketnet.distill.text_copies`); they
    # join the routing epochs on those soft labels alone.
    teacher_copies: int = 0

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
        if self.teacher_copies < 0:
            raise ValueError(f"--teacher-copies must be at least 0, got {self.teacher_copies}")
        if self.pretrain_epochs < 0:
            raise ValueError(f"--pretrain-epochs must be at least 0, got {self.pretrain_epochs}")
        if not 0 < self.mask_rate < 1:
            raise ValueError(f"the mask rate must be between 0 and 1, got {self.mask_rate}")
        if self.distill < 0:
            raise ValueError(f"--distill must be at least 0, got {self.distill}")
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
    seqs = [vocab.encode(split_thread(r["text"]).new)[:max_len] for r in rows]
    return seqs, team_indices(rows, teams)


def encode_texts(texts: Sequence[str], vocab: Vocab, max_len: int) -> list[list[int]]:
    """Token ids of texts with no team (unrouted tickets, a teacher's copies), truncated; a text with no token is read
    as <unk>, so no sequence is empty."""
    return [vocab.encode(t)[:max_len] or [UNK_ID] for t in texts]


def team_indices(rows: list[dict], teams: Sequence[str]) -> torch.Tensor:
    """Each row's team as its index in `teams`; DataError naming a team that is not one of them."""
    index = {t: i for i, t in enumerate(teams)}
    try:
        return torch.tensor([index[r["team"]] for r in rows], dtype=torch.long)
    except KeyError as exc:
        raise DataError(f"team {exc.args[0]!r} is not one of the router's teams ({team_list(teams)})") from None


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


# The label of a text a teacher scored but nobody routed (`train --unlabelled`): only the soft-label term reads it.
UNLABELLED = -100


def ticket_loss(model: TinyTransformer, ids: torch.Tensor, is_pad: torch.Tensor, labels: torch.Tensor,
                cfg: TrainConfig, teacher: Teacher | None = None, soft: torch.Tensor | None = None) -> torch.Tensor:
    """Cross-entropy of the ticket's logits, plus `token_loss` times the mean cross-entropy of each token's own logits,
    plus, with a `teacher` (a router kept, frozen), `keep` times the KL divergence from its probabilities on the
    tickets of the batch it routes right, plus, with `soft` (B, C) probabilities a teacher gave each ticket,
    `distill` times the KL divergence from them (every ticket, whatever the teacher routes it to). A ticket labelled
    UNLABELLED counts in that last term only.

    The head is linear and the pooling a mean, so the ticket's logits are the mean of per-token logits
    head(norm(h_t)). The ticket loss only asks that mean to be right; the token term asks every token to carry the
    team, so a set-aside topic ("I don't want to send it back") must be turned around by what the token attends to
    rather than outvoted by the other tokens.
    """
    h = model.blocks(model.embeddings(ids), src_key_padding_mask=is_pad)    # (B, n, d)
    per_token = model.head(model.norm(h))                                   # (B, n, C)
    keep = (~is_pad).to(per_token.dtype).unsqueeze(-1)                      # (B, n, 1)
    logits = (per_token * keep).sum(1) / keep.sum(1)                        # (B, C), the same as model(ids, is_pad)
    known = labels.ne(UNLABELLED)                                           # (B,)
    loss = logits.sum() * 0.0                                               # a batch of unlabelled texts only
    if known.any():
        loss = loss + F.cross_entropy(logits[known], labels[known], label_smoothing=cfg.label_smoothing)
        if cfg.token_loss:
            real = ~is_pad[known]                                           # (B', n)
            token_labels = labels[known][:, None].expand_as(real)[real]     # (tokens,)
            loss = loss + cfg.token_loss * F.cross_entropy(per_token[known][real], token_labels,
                                                           label_smoothing=cfg.label_smoothing)
    if teacher is not None and cfg.keep:
        with torch.no_grad():
            kept = teacher(ids, is_pad)                                     # (B, C)
            right = kept.argmax(1).eq(labels)                               # (B,)
        if right.any():
            loss = loss + cfg.keep * F.kl_div(F.log_softmax(logits[right], -1), F.log_softmax(kept[right], -1),
                                              log_target=True, reduction="batchmean")
    if soft is not None and cfg.distill:
        loss = loss + cfg.distill * F.kl_div(F.log_softmax(logits, -1), soft.clamp(min=1e-8).log(), log_target=True,
                                             reduction="batchmean")
    return loss


def lr_schedule(opt, steps_per_epoch: int, cfg: TrainConfig) -> torch.optim.lr_scheduler.LambdaLR:
    """The rate per step: a linear warm-up over `cfg.warmup_epochs`, then a cosine decay to 0 at the last step."""
    total, warmup = cfg.epochs * steps_per_epoch, cfg.warmup_epochs * steps_per_epoch
    return torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (min(1.0, (s + 1) / warmup) if warmup else 1.0)
        * 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))


def train_epoch(model: TinyTransformer, seqs: list[list[int]], labels: torch.Tensor, opt, sched,
                cfg: TrainConfig, rng: random.Random, aug_rng: random.Random, teacher: Teacher | None = None,
                soft: torch.Tensor | None = None) -> float:
    """One pass over the training tickets in shuffled length batches, each freshly augmented: a clipped AdamW step
    and a scheduler step per batch (`teacher` and `soft` (tickets, C): see `ticket_loss`). Returns the summed loss
    (mean loss × tickets)."""
    loss_sum = 0.0
    for idx in length_batches(seqs, cfg.batch_size, rng):
        ids, is_pad = pad_batch([augment(seqs[i], aug_rng, cfg.unk_rate, cfg.drop_rate) for i in idx])
        loss = ticket_loss(model, ids, is_pad, labels[idx], cfg, teacher, None if soft is None else soft[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        loss_sum += loss.item() * len(idx)
    return loss_sum


def pretrain(model: TinyTransformer, seqs: list[list[int]], cfg: TrainConfig, rng: random.Random,
             log=lambda message: None) -> list[float]:
    """Masked-token pretraining for `cfg.pretrain_epochs` epochs: in each text, `cfg.mask_rate` of the tokens (redrawn
    every epoch) become <unk>, and the blocks must name each hidden token through the embedding matrix itself (tied
    output, plus a bias per token). The routing head is not touched. AdamW at the recipe's rate, warm-up and cosine
    decay, as the routing epochs. Returns each epoch's mean loss per hidden token."""
    bias = torch.zeros(model.embed.weight.shape[0], requires_grad=True)            # (vocab,)
    params = [p for n, p in model.named_parameters() if not n.startswith("head.")] + [bias]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = lr_schedule(opt, math.ceil(len(seqs) / cfg.batch_size), replace(cfg, epochs=cfg.pretrain_epochs))
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    losses = []
    model.train()
    for epoch in range(1, cfg.pretrain_epochs + 1):
        total, hidden = 0.0, 0
        for idx in length_batches(seqs, cfg.batch_size, rng):
            ids, is_pad = pad_batch([seqs[i] or [UNK_ID] for i in idx])           # (B, n)
            pick = (torch.rand(ids.shape, generator=gen) < cfg.mask_rate) & ~is_pad & ids.ne(UNK_ID)
            if not bool(pick.any()):
                continue
            h = model.norm(model.blocks(model.embeddings(ids.masked_fill(pick, UNK_ID)),
                                        src_key_padding_mask=is_pad))              # (B, n, d)
            logits = h[pick] @ model.embed.weight.T + bias                          # (hidden, vocab)
            loss = F.cross_entropy(logits, ids[pick])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            total, hidden = total + loss.item() * int(pick.sum()), hidden + int(pick.sum())
        losses.append(total / max(hidden, 1))
        log(f"pretraining epoch {epoch:2d}/{cfg.pretrain_epochs}  masked-token loss {losses[-1]:.4f}")
    return losses


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


def epoch_score(valid_acc: float, dev_acc: float | None, dev_weight: float) -> tuple[float, dict]:
    """The epoch rule of every router: valid's accuracy, mixed with the hand-written development set's (by
    `dev_weight`) where there is one; and its parts rounded for the history."""
    parts = {"valid_accuracy": round(valid_acc, 4)}
    if dev_acc is None:
        return valid_acc, parts
    parts["handwritten_dev_accuracy"] = round(dev_acc, 4)
    return (1 - dev_weight) * valid_acc + dev_weight * dev_acc, parts
