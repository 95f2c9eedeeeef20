"""Routing quality: accuracy, per-team precision/recall/F1, confusion matrix and expected calibration error."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def confusion_matrix(y_true: Tensor, y_pred: Tensor, n_classes: int) -> Tensor:
    """(n_classes, n_classes) counts; rows are true teams, columns predicted teams."""
    idx = y_true.long() * n_classes + y_pred.long()
    return torch.bincount(idx, minlength=n_classes * n_classes).view(n_classes, n_classes)


def per_class(conf: Tensor) -> dict[str, Tensor]:
    """Precision, recall, F1 and support per class from a confusion matrix (0 where undefined)."""
    conf = conf.double()
    tp = conf.diag()
    predicted, actual = conf.sum(0), conf.sum(1)
    precision = torch.where(predicted > 0, tp / predicted.clamp(min=1), torch.zeros_like(tp))
    recall = torch.where(actual > 0, tp / actual.clamp(min=1), torch.zeros_like(tp))
    denom = precision + recall
    f1 = torch.where(denom > 0, 2 * precision * recall / denom.clamp(min=1e-12), torch.zeros_like(tp))
    return {"precision": precision, "recall": recall, "f1": f1, "support": actual}


def expected_calibration_error(probs: Tensor, y_true: Tensor, n_bins: int = 15) -> float:
    """ECE with equal-width confidence bins: Σ_b |B_b|/N · |accuracy(B_b) − confidence(B_b)|."""
    conf, pred = probs.max(dim=1)
    correct = pred.eq(y_true).double()
    bins = torch.clamp((conf * n_bins).long(), max=n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        inside = bins == b
        if inside.any():
            ece += inside.double().mean().item() * abs(correct[inside].mean().item() - conf[inside].double().mean().item())
    return ece


def summarize(probs: Tensor, y_true: Tensor, teams: tuple[str, ...], hard: Tensor | None = None,
              groups: list[str] | None = None) -> dict:
    """Everything the README's model card and the dashboard's quality panel show, as plain numbers.

    `groups` (one label per ticket, e.g. the hand-written set's `style`) adds `per_group`: n and accuracy per label.
    """
    pred = probs.argmax(dim=1)
    conf = confusion_matrix(y_true, pred, len(teams))
    pc = per_class(conf)
    out = {
        "n": int(len(y_true)),
        "accuracy": pred.eq(y_true).double().mean().item(),
        "ece": expected_calibration_error(probs, y_true),
        "per_team": {t: {k: round(float(v[i]), 4) for k, v in pc.items()} for i, t in enumerate(teams)},
        "macro_f1": pc["f1"].mean().item(),
        "confusion": conf.tolist(),
    }
    if hard is not None and bool(hard.any()):
        out["hard_n"] = int(hard.sum())
        out["hard_accuracy"] = pred[hard].eq(y_true[hard]).double().mean().item()
    if groups is not None:
        correct = pred.eq(y_true)
        out["per_group"] = {}
        for g in sorted(set(groups)):
            inside = torch.tensor([x == g for x in groups])
            out["per_group"][g] = {"n": int(inside.sum()), "accuracy": correct[inside].double().mean().item()}
    return out


def fit_temperature(logits: Tensor, y_true: Tensor, lo: float = 0.05, hi: float = 20.0, iters: int = 100) -> float:
    """The temperature T > 0 minimising the mean negative log-likelihood of softmax(logits / T).

    The NLL is convex in 1/T, so a golden-section search over log T between `lo` and `hi` finds its minimum.
    """
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
