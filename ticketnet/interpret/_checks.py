"""Argument checks and the stable ranking that every interpretation method shares."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor


def check_vector(x: Tensor | Sequence[float], name: str) -> Tensor:
    x = torch.as_tensor(x)
    if x.dim() != 1:
        raise ValueError(f"{name} must be a 1-D tensor (n,), got shape {tuple(x.shape)}")
    return x.detach().to("cpu", torch.float64)


def check_pair(a: Tensor | Sequence[float], b: Tensor | Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    a, b = check_vector(a, "a"), check_vector(b, "b")
    if a.numel() != b.numel():
        raise ValueError(f"rankings must cover the same tokens: {a.numel()} values against {b.numel()}")
    return a.numpy(), b.numpy()


def by_score(scores: Tensor) -> Tensor:
    """Positions from highest to lowest score; a stable sort so equal scores keep their reading order."""
    return torch.argsort(scores, descending=True, stable=True)
