"""Train the router on data/train.csv, keep the best epoch on valid, and write weights, vocabulary and card atomically."""

from __future__ import annotations

import io
import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from ticketnet._runtime.atomic import write_atomic
from ticketnet.data.text import Vocab
from ticketnet.data.tickets import TEAMS, is_hard, load_split
from ticketnet.metrics import summarize
from ticketnet.nn.batching import batched_probs
from ticketnet.nn.transformer import TinyConfig, TinyTransformer, pad_batch
from ticketnet.paths import TRAIN_SEED, data_dir, weights_dir
from ticketnet.router import Router, file_sha256


@dataclass(frozen=True)
class TrainConfig:
    seed: int = TRAIN_SEED
    epochs: int = 12
    batch_size: int = 64
    lr: float = 2e-3          # peak learning rate, after a one-epoch warm-up, then cosine decay
    weight_decay: float = 0.01
    label_smoothing: float = 0.05
    min_freq: int = 2         # tokens seen once in train become <unk>, so the model learns to read <unk>
    threads: int = 2


def encode_rows(rows: list[dict], vocab: Vocab, max_len: int) -> tuple[list[list[int]], torch.Tensor]:
    seqs = [vocab.encode(r["text"])[:max_len] for r in rows]
    labels = torch.tensor([TEAMS.index(r["team"]) for r in rows])
    return seqs, labels


def length_batches(seqs: list[list[int]], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of tickets of similar length, so little compute goes to padding."""
    order = sorted(range(len(seqs)), key=lambda i: (len(seqs[i]), rng.random()))
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


def predict_seqs(model: TinyTransformer, seqs: list[list[int]], batch_size: int = 512) -> torch.Tensor:
    model.eval()
    return batched_probs(model, seqs, batch_size)


def evaluate(model: TinyTransformer, rows: list[dict], vocab: Vocab) -> dict:
    seqs, labels = encode_rows(rows, vocab, model.config.max_len)
    hard = torch.tensor([is_hard(r) for r in rows])
    return summarize(predict_seqs(model, seqs), labels, TEAMS, hard)


def train(data: Path | None = None, out: Path | None = None, cfg: TrainConfig = TrainConfig(),
          log=print) -> dict:
    """Train, keep the best valid epoch, write `router.pt`, `vocab.json`, `router.json` into `out`; return the card."""
    data = data or data_dir()
    out = out or weights_dir()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    rng = random.Random(cfg.seed)
    train_rows, valid_rows, test_rows = (load_split(data / f"{s}.csv") for s in ("train", "valid", "test"))
    vocab = Vocab([r["text"] for r in train_rows], min_freq=cfg.min_freq)
    model = TinyTransformer(TinyConfig(len(vocab)))
    seqs, labels = encode_rows(train_rows, vocab, model.config.max_len)
    valid_seqs, valid_labels = encode_rows(valid_rows, vocab, model.config.max_len)

    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps_per_epoch = math.ceil(len(seqs) / cfg.batch_size)
    total = cfg.epochs * steps_per_epoch
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / steps_per_epoch) * 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))

    best, best_state, history = -1.0, None, []
    start = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        loss_sum = 0.0
        for idx in length_batches(seqs, cfg.batch_size, rng):
            ids, is_pad = pad_batch([seqs[i] for i in idx])
            loss = F.cross_entropy(model(ids, is_pad), labels[idx], label_smoothing=cfg.label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            loss_sum += loss.item() * len(idx)
        valid_acc = predict_seqs(model, valid_seqs).argmax(1).eq(valid_labels).double().mean().item()
        history.append({"epoch": epoch, "train_loss": round(loss_sum / len(seqs), 4), "valid_accuracy": round(valid_acc, 4)})
        log(f"epoch {epoch:2d}  loss {loss_sum / len(seqs):.4f}  valid accuracy {valid_acc:.4f}  "
            f"({time.perf_counter() - start:.0f} s)")
        if valid_acc > best:
            best, best_epoch = valid_acc, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    model.load_state_dict(best_state)
    model.eval()
    card = {
        "config": model.config.to_dict(),
        "teams": list(TEAMS),
        "train": {**cfg.__dict__, "best_epoch": best_epoch, "seconds": round(time.perf_counter() - start, 1),
                  "torch": torch.__version__, "history": history},
        "data_sha256": {s: file_sha256(data / f"{s}.csv") for s in ("train", "valid", "test")},
        "metrics": {"valid": evaluate(model, valid_rows, vocab), "test": evaluate(model, test_rows, vocab)},
    }
    save_router(Router(model, vocab, TEAMS, card), out)
    return card


def save_router(router: Router, out: Path) -> None:
    """Write the three files atomically; the weights last, so a reader never sees new weights with an old card."""
    buf = io.BytesIO()
    torch.save(router.model.state_dict(), buf)
    router.vocab.save(out / "vocab.json")
    write_atomic(out / "router.json", (json.dumps(router.meta, indent=1) + "\n").encode("utf-8"))
    write_atomic(out / "router.pt", buf.getvalue())
