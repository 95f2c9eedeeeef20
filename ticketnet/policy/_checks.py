"""Input checks the policy functions share: aligned 1-d arrays, probabilities, α."""

from __future__ import annotations

import math

import numpy as np


def check_alpha(alpha: float) -> float:
    """α as a float strictly between 0 and 1; ValueError in one line otherwise."""
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}") from None
    if not (0.0 < value < 1.0) or math.isnan(value):
        raise ValueError(f"alpha must be strictly between 0 and 1 (0.05 asks for sets that hold the true team 95 % "
                         f"of the time), got {alpha!r}")
    return value


def check_target(name: str, value: float) -> float:
    """A target precision or coverage in (0, 1]; ValueError in one line otherwise."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"the target {name} must be a number in (0, 1], got {value!r}") from None
    if not (0.0 < v <= 1.0) or math.isnan(v):
        raise ValueError(f"the target {name} must be in (0, 1] (e.g. 0.98), got {value!r}")
    return v


def scores(confidence, correct) -> tuple[np.ndarray, np.ndarray]:
    """(confidence as float64, correct as bool), checked to be non-empty, equally long and finite."""
    conf = np.asarray(confidence, dtype=np.float64).reshape(-1)
    ok = np.asarray(correct).reshape(-1)
    if conf.size == 0:
        raise ValueError("no tickets: a risk-coverage curve needs at least one scored ticket")
    if conf.shape != ok.shape:
        raise ValueError(f"{conf.size} confidences but {ok.size} correct flags; they must describe the same tickets")
    if not np.isfinite(conf).all():
        raise ValueError("a confidence is not a finite number (NaN or infinite)")
    return conf, ok.astype(bool)


def probabilities(probs) -> np.ndarray:
    """An (n, k) array of non-negative probabilities, each row rescaled to sum to 1 (stored tables round to 4
    decimals, so their rows sum to 1 ± 0.0003); ValueError for anything else."""
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] < 2:
        raise ValueError(f"probabilities must be a (tickets, teams) table with at least 2 teams, got shape {p.shape}")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probabilities must be finite and non-negative")
    total = p.sum(axis=1, keepdims=True)
    if (total <= 0).any():
        raise ValueError("a ticket's probabilities sum to 0")
    return p / total
