"""Routing quality: accuracy, per-team precision/recall/F1, confusion matrix and expected calibration error."""

from __future__ import annotations

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


def summarize(probs: Tensor, y_true: Tensor, teams: tuple[str, ...], hard: Tensor | None = None) -> dict:
    """Everything the README's model card and the dashboard's quality panel show, as plain numbers."""
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
    return out
