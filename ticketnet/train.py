"""Train the router on data/train.csv, keep the best epoch on valid, and write weights, vocabulary and card atomically."""

from __future__ import annotations

import io
import json
import math
import random
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F

from ticketnet._runtime.atomic import write_atomic
from ticketnet.data.text import UNK_ID, Vocab
from ticketnet.data.tickets import TEAMS, is_hard, load_split
from ticketnet.metrics import fit_temperature, summarize
from ticketnet.nn.batching import batched_probs
from ticketnet.nn.transformer import TinyConfig, TinyTransformer, pad_batch
from ticketnet.paths import TRAIN_SEED, data_dir, weights_dir
from ticketnet.predictions import write_predictions
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
    unk_rate: float = 0.1     # augmentation: share of training tokens replaced by <unk> (redrawn every epoch)
    drop_rate: float = 0.05   # augmentation: share of training tokens deleted (redrawn every epoch)
    dev_weight: float = 0.5   # weight of the hand-written development set's accuracy in the epoch score
    ood_accuracy: float = 0.67  # min_confidence: below it, valid tickets were routed right at most this often
    token_loss: float = 0.3   # weight of the per-token loss: every token's own logits must name the ticket's team

# Hand-written tickets, never trained on: the development set picks the epoch, the evaluation set is only reported.
HANDWRITTEN = ("handwritten_dev", "handwritten")


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


def augment(seq: list[int], rng: random.Random, unk_rate: float, drop_rate: float) -> list[int]:
    """A training copy of a ticket with some tokens deleted and some replaced by <unk> (never empty)."""
    out = []
    for t in seq:
        r = rng.random()
        if r < drop_rate:
            continue
        out.append(UNK_ID if r < drop_rate + unk_rate else t)
    return out or seq[:1]


def ticket_loss(model: TinyTransformer, ids: torch.Tensor, is_pad: torch.Tensor, labels: torch.Tensor,
                cfg: TrainConfig) -> torch.Tensor:
    """Cross-entropy of the ticket's logits, plus `token_loss` times the mean cross-entropy of each token's own logits.

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
    return loss


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


def evaluate(model: TinyTransformer, rows: list[dict], vocab: Vocab) -> dict:
    """Accuracy, per-team scores, ECE, the hard slice, and accuracy per `style` when the rows have one."""
    seqs, labels = encode_rows(rows, vocab, model.config.max_len)
    hard = torch.tensor([is_hard(r) for r in rows])
    groups = [r["style"] for r in rows] if rows and "style" in rows[0] else None
    out = summarize(predict_seqs(model, seqs), labels, TEAMS, hard, groups)
    if groups is not None:
        out["per_style"] = out.pop("per_group")
    return out


def fold_temperature(model: TinyTransformer, temperature: float) -> None:
    """Divide the head's weights and bias by T, so the model's logits become logits / T everywhere."""
    with torch.no_grad():
        model.head.weight.div_(temperature)
        model.head.bias.div_(temperature)


def ood_thresholds(model: TinyTransformer, rows: list[dict], vocab: Vocab, target_accuracy: float) -> dict:
    """Where a typed ticket stops looking like the training data, measured on valid (calibrated model).

    min_confidence: the largest confidence c (in steps of 0.01) such that valid tickets below c were routed right at
    most `target_accuracy` of the time. max_unknown_share: the 99th percentile of valid's share of unknown word
    tokens, and at least 0.25.
    """
    from ticketnet.data.text import tokenize
    from ticketnet.router import Encoded

    seqs, labels = encode_rows(rows, vocab, model.config.max_len)
    conf, pred = predict_seqs(model, seqs).max(dim=1)
    correct = pred.eq(labels)
    min_conf = 0.0
    for c in (x / 100 for x in range(20, 100)):
        below = conf < c
        if below.sum() >= 10 and correct[below].double().mean().item() <= target_accuracy:
            min_conf = c
    shares = sorted(Encoded(r["text"], tokenize(r["text"]), s, len(s), 0).unknown_share for r, s in zip(rows, seqs))
    p99 = shares[min(len(shares) - 1, int(0.99 * len(shares)))]
    below = conf < min_conf
    return {"min_confidence": round(min_conf, 2), "max_unknown_share": round(max(0.25, p99), 3),
            "valid_share_below_min_confidence": round(below.double().mean().item(), 4),
            "valid_accuracy_below_min_confidence": round(correct[below].double().mean().item(), 4) if below.any() else None,
            "valid_unknown_share_p99": round(p99, 3)}


def train(data: Path | None = None, out: Path | None = None, cfg: TrainConfig = TrainConfig(),
          log=print) -> dict:
    """Train, keep the best valid epoch, write `router.pt`, `vocab.json`, `router.json` into `out`; return the card."""
    data = data or data_dir()
    out = out or weights_dir()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    rng = random.Random(cfg.seed)
    aug_rng = random.Random(cfg.seed + 1)
    train_rows, valid_rows, test_rows = (load_split(data / f"{s}.csv") for s in ("train", "valid", "test"))
    hand = {name: load_split(data / f"{name}.csv") for name in HANDWRITTEN if (data / f"{name}.csv").is_file()}
    vocab = Vocab([r["text"] for r in train_rows], min_freq=cfg.min_freq)
    model = TinyTransformer(TinyConfig(len(vocab)))
    seqs, labels = encode_rows(train_rows, vocab, model.config.max_len)
    valid_seqs, valid_labels = encode_rows(valid_rows, vocab, model.config.max_len)
    dev = encode_rows(hand["handwritten_dev"], vocab, model.config.max_len) if "handwritten_dev" in hand else None

    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps_per_epoch = math.ceil(len(seqs) / cfg.batch_size)
    total = cfg.epochs * steps_per_epoch
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / steps_per_epoch) * 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))

    best, best_state, history = -1.0, None, []
    start, cpu_start = time.perf_counter(), time.process_time()
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        loss_sum = 0.0
        for idx in length_batches(seqs, cfg.batch_size, rng):
            ids, is_pad = pad_batch([augment(seqs[i], aug_rng, cfg.unk_rate, cfg.drop_rate) for i in idx])
            loss = ticket_loss(model, ids, is_pad, labels[idx], cfg)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            loss_sum += loss.item() * len(idx)
        valid_acc = predict_seqs(model, valid_seqs).argmax(1).eq(valid_labels).double().mean().item()
        entry = {"epoch": epoch, "train_loss": round(loss_sum / len(seqs), 4), "valid_accuracy": round(valid_acc, 4)}
        score = valid_acc
        if dev is not None:
            dev_acc = predict_seqs(model, dev[0]).argmax(1).eq(dev[1]).double().mean().item()
            entry["handwritten_dev_accuracy"] = round(dev_acc, 4)
            score = (1 - cfg.dev_weight) * valid_acc + cfg.dev_weight * dev_acc
        history.append(entry)
        log(f"epoch {epoch:2d}  loss {loss_sum / len(seqs):.4f}  valid accuracy {valid_acc:.4f}"
            + (f"  hand-written dev {entry['handwritten_dev_accuracy']:.4f}" if dev is not None else "")
            + f"  ({time.perf_counter() - start:.0f} s)")
        if score > best:
            best, best_epoch = score, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    model.load_state_dict(best_state)
    model.eval()
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
    names = ("train", "valid", "test", *hand)
    card = {
        "config": model.config.to_dict(),
        "teams": list(TEAMS),
        "train": {**cfg.__dict__, "best_epoch": best_epoch, "score": round(best, 6), "seconds": seconds,
                  "cpu_seconds": cpu_seconds, "torch": torch.__version__, "history": history},
        "calibration": calibration,
        "ood": ood_thresholds(model, valid_rows, vocab, cfg.ood_accuracy),
        "data_sha256": {s: file_sha256(data / f"{s}.csv") for s in names},
        "metrics": {"valid": evaluate(model, valid_rows, vocab), "test": evaluate(model, test_rows, vocab),
                    **{name: evaluate(model, rows, vocab) for name, rows in hand.items()}},
    }
    router = Router(model, vocab, TEAMS, card)
    save_router(router, out)
    write_predictions(router, out / "router.pt", data)    # the evaluation splits' predictions, for the dashboard
    return card


def train_seeds(seeds: list[int], data: Path | None = None, out: Path | None = None,
                cfg: TrainConfig = TrainConfig(), log=print) -> dict:
    """Train once per seed and keep the run whose kept epoch scores best by the training rule (ties: the first seed).

    Each run is the same recipe, so the seeds differ only in initialisation, batch order and augmentation; the
    comparison reads valid and the hand-written development set only. The kept run's files go to `out`, its card
    recording every run under `train.seed_search`; the other runs are deleted.
    """
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {seeds}")
    data = data or data_dir()
    out = out or weights_dir()
    out.mkdir(parents=True, exist_ok=True)
    runs, best = [], None
    with tempfile.TemporaryDirectory(prefix=".seed-search-", dir=out) as tmp:
        for seed in seeds:
            log(f"seed {seed}")
            run_dir = Path(tmp) / f"seed-{seed}"
            run_dir.mkdir()
            card = train(data, run_dir, replace(cfg, seed=seed), log=log)
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
    log("seed search: " + ", ".join(f"seed {r['seed']} {r['score']:.4f}" for r in runs) + f"; kept seed {best[1]}")
    return router.meta


def save_router(router: Router, out: Path) -> None:
    """Write the three files atomically; the weights last, so a reader never sees new weights with an old card."""
    buf = io.BytesIO()
    torch.save(router.model.state_dict(), buf)
    router.vocab.save(out / "vocab.json")
    write_atomic(out / "router.json", (json.dumps(router.meta, indent=1) + "\n").encode("utf-8"))
    write_atomic(out / "router.pt", buf.getvalue())
