"""Routing quality: accuracy, per-team precision/recall/F1, confusion matrix and expected calibration error."""

# NumPy, not torch: the dashboard's first page shows these from stored predictions before torch is imported (a
# cold start that waits for torch's import is about a second slower). Tensors are accepted (`np.asarray` reads a CPU
# tensor without copying).

from __future__ import annotations

import math

import numpy as np


def confusion_matrix(y_true, y_pred, n_classes: int) -> np.ndarray:
    """(n_classes, n_classes) counts; rows are true teams, columns predicted teams."""
    idx = np.asarray(y_true, dtype=np.int64) * n_classes + np.asarray(y_pred, dtype=np.int64)
    return np.bincount(idx, minlength=n_classes * n_classes).reshape(n_classes, n_classes)


def per_class(conf) -> dict[str, np.ndarray]:
    """Precision, recall, F1 and support per class from a confusion matrix (0 where undefined)."""
    conf = np.asarray(conf, dtype=np.float64)
    tp = np.diag(conf)
    predicted, actual = conf.sum(0), conf.sum(1)
    precision = np.where(predicted > 0, tp / np.maximum(predicted, 1), 0.0)
    recall = np.where(actual > 0, tp / np.maximum(actual, 1), 0.0)
    denom = precision + recall
    f1 = np.where(denom > 0, 2 * precision * recall / np.maximum(denom, 1e-12), 0.0)
    return {"precision": precision, "recall": recall, "f1": f1, "support": actual}


def expected_calibration_error(probs, y_true, n_bins: int = 15) -> float:
    """ECE with equal-width confidence bins: Σ_b |B_b|/N · |accuracy(B_b) − confidence(B_b)|."""
    probs = np.asarray(probs)
    conf, pred = probs.max(axis=1), probs.argmax(axis=1)
    correct = (pred == np.asarray(y_true)).astype(np.float64)
    bins = np.minimum((conf * n_bins).astype(np.int64), n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        inside = bins == b
        if inside.any():
            gap = float(correct[inside].mean()) - float(conf[inside].astype(np.float64).mean())
            ece += float(inside.mean()) * abs(gap)
    return ece


def summarize(probs, y_true, teams: tuple[str, ...], hard=None, groups: list[str] | None = None) -> dict:
    """Everything the model card (docs/model-card.md) and the dashboard's quality panel show, as plain numbers.

    `probs` (N, teams), `y_true` (N,) team indices and `hard` (N,) booleans: arrays or tensors. `groups` (one label
    per ticket, e.g. the hand-written set's `style`) adds `per_group`: n and accuracy per label.
    """
    probs, y_true = np.asarray(probs), np.asarray(y_true, dtype=np.int64)
    pred = probs.argmax(axis=1)
    conf = confusion_matrix(y_true, pred, len(teams))
    pc = per_class(conf)
    correct = pred == y_true
    out = {
        "n": len(y_true),
        "accuracy": float(correct.mean()),
        "ece": expected_calibration_error(probs, y_true),
        "per_team": {t: {k: round(float(v[i]), 4) for k, v in pc.items()} for i, t in enumerate(teams)},
        "macro_f1": float(pc["f1"].mean()),
        "confusion": conf.tolist(),
    }
    if hard is not None:
        hard = np.asarray(hard, dtype=bool)
        if hard.any():
            out["hard_n"] = int(hard.sum())
            out["hard_accuracy"] = float(correct[hard].mean())
    if groups is not None:
        out["per_group"] = {}
        for g in sorted(set(groups)):
            inside = np.array([x == g for x in groups], dtype=bool)
            out["per_group"][g] = {"n": int(inside.sum()), "accuracy": float(correct[inside].mean())}
    return out


def fit_temperature(logits, y_true, lo: float = 0.05, hi: float = 20.0, iters: int = 100) -> float:
    """The temperature T > 0 minimising the mean negative log-likelihood of softmax(logits / T).

    The NLL is convex in 1/T, so a golden-section search over log T between `lo` and `hi` finds its minimum.
    """
    import torch  # training only: the rest of this module needs no torch

    logits, y = logits.double(), y_true.long()

    def nll(log_t: float) -> float:
        return torch.nn.functional.cross_entropy(logits / math.exp(log_t), y).item()

    a, b = math.log(lo), math.log(hi)
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = nll(c), nll(d)
    for _ in range(iters):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = nll(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = nll(d)
    return math.exp((a + b) / 2)
