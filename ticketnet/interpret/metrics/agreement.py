"""Rank agreement between a token signal and the removal effect: Kendall τ, Spearman ρ, top-k overlap, chance."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor

# scipy.stats is imported where it is used: its import is slow (docs/performance.md, "Cold start"), and the Heads
# page imports this package (through the interventions) without ranking anything on its first view.
from ticketnet.interpret import signals as sig
from ticketnet.interpret._checks import by_score, check_pair, check_vector

AGREEMENT_COLUMNS = (sig.SIGNAL, *sig.AGREEMENT_METRICS)


def _constant(x: np.ndarray) -> bool:
    return x.size < 2 or bool(np.all(x == x[0]))


def _tau_method(n: int) -> str:
    # Only the statistic is used; the asymptotic p-value skips scipy's slow exact one for short tickets,
    # but it divides by n − 2, so two tokens take scipy's default (two distinct values cannot tie).
    return "asymptotic" if n >= 3 else "auto"


def kendall_tau(a: Tensor | Sequence[float], b: Tensor | Sequence[float]) -> float:
    """Kendall's τ-b between two scores over the same tokens (scipy); nan when either is constant."""
    from scipy import stats

    a, b = check_pair(a, b)
    if _constant(a) or _constant(b):
        return float("nan")                                           # no ranking to compare, not a disagreement
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.kendalltau(a, b, method=_tau_method(a.size)).statistic)


def kendall_taus(signals: Tensor, effect: Tensor) -> Tensor:
    """Kendall's τ-b of each row of `signals` (S, n) against `effect` (n,) -> (S,) float64, nan for constant rows.

    The same statistic as `kendall_tau` (scipy's, to rounding), for every row at once (`tau_b_rows`): a whole split
    asks for ~20,000, and scipy's kendalltau ranks one pair of vectors per call even when given an axis.
    """
    if signals.dim() != 2 or effect.dim() != 1 or signals.shape[1] != effect.shape[0]:
        raise ValueError(f"need signals (S, n) and effect (n,), got {tuple(signals.shape)} and {tuple(effect.shape)}")
    s = signals.detach().to("cpu", torch.float64).numpy()
    e = effect.detach().to("cpu", torch.float64).numpy()
    return torch.from_numpy(tau_b_rows(s, e))


PAIR_SIGNS_PER_CHUNK = 2_000_000      # 16 MB of float64 pair signs at a time, whatever the ticket's length


def tau_b_rows(rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of each row of `rows` (m, n) against `y` (n,) -> (m,), nan where a row or `y` is constant.

    scipy.stats.kendalltau's statistic, in its own arithmetic: over the n(n−1)/2 pairs, (concordant − discordant)
    / √(pairs − pairs tied in x) / √(pairs − pairs tied in y), from the signs of every pair's differences (one
    matrix–vector product per chunk of rows) instead of one sort per row.
    """
    rows = np.asarray(rows, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    m, n = rows.shape
    out = np.full(m, np.nan)
    if n < 2 or _constant(y):
        return out
    first, second = np.triu_indices(n, 1)
    pairs = first.size
    sy = np.sign(y[second] - y[first])
    untied_y = pairs - np.count_nonzero(sy == 0)
    chunk = max(1, PAIR_SIGNS_PER_CHUNK // pairs)
    for start in range(0, m, chunk):
        block = rows[start:start + chunk]
        sx = np.sign(block[:, second] - block[:, first])                   # (c, pairs)
        untied_x = pairs - np.count_nonzero(sx == 0, axis=1)
        live = untied_x > 0
        con_minus_dis = sx[live] @ sy
        tau = con_minus_dis / np.sqrt(untied_x[live]) / np.sqrt(untied_y)
        out[start:start + chunk][live] = np.clip(tau, -1, 1)
    return out


def spearman(a: Tensor | Sequence[float], b: Tensor | Sequence[float]) -> float:
    """Spearman's ρ between two scores over the same tokens (scipy); nan when either is constant."""
    from scipy import stats

    a, b = check_pair(a, b)
    if _constant(a) or _constant(b):
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.spearmanr(a, b).statistic)


def spearmans(signals: Tensor, effect: Tensor) -> Tensor:
    """Spearman's ρ of each row of `signals` (S, n) against `effect` (n,) -> (S,) float64, nan for constant rows.

    `spearman`'s statistic (scipy's, to rounding) for every row at once: Pearson's r of the average ranks
    (`scipy.stats.rankdata` along the rows), instead of one scipy call per signal.
    """
    from scipy import stats

    if signals.dim() != 2 or effect.dim() != 1 or signals.shape[1] != effect.shape[0]:
        raise ValueError(f"need signals (S, n) and effect (n,), got {tuple(signals.shape)} and {tuple(effect.shape)}")
    s = signals.detach().to("cpu", torch.float64).numpy()
    e = effect.detach().to("cpu", torch.float64).numpy()
    out = np.full(s.shape[0], np.nan)
    if e.size < 2 or _constant(e):
        return torch.from_numpy(out)
    rx = stats.rankdata(s, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry = stats.rankdata(e)
    ry -= ry.mean()
    norm_x = np.sqrt((rx * rx).sum(axis=1))
    live = norm_x > 0
    out[live] = np.clip((rx[live] @ ry) / norm_x[live] / np.sqrt(ry @ ry), -1, 1)
    return torch.from_numpy(out)


def top_k_overlap(a: Tensor | Sequence[float], b: Tensor | Sequence[float], k: int) -> float:
    """|top-k(a) ∩ top-k(b)| / k, equal scores ranked by position; k is capped at the number of tokens."""
    a, b = check_pair(a, b)
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    k = min(k, a.size)
    if k == 0:
        return float("nan")
    top_a = set(by_score(torch.from_numpy(a))[:k].tolist())
    top_b = set(by_score(torch.from_numpy(b))[:k].tolist())
    return len(top_a & top_b) / k


def random_tau_baseline(effect: Tensor, n_draws: int = 200, seed: int = 0) -> Tensor:
    """τ between uniformly random rankings and `effect` (n,) -> (n_draws,): the chance distribution.

    A signal's τ means little unless it stands clear of this; with few tokens it is wide. The draws are
    `torch.randperm` in turn from one generator seeded `seed`, all ranked against `effect` at once (`tau_b_rows`).
    """
    effect = check_vector(effect, "effect")
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}")
    gen = torch.Generator().manual_seed(seed)
    n = effect.numel()
    orders = torch.stack([torch.randperm(n, generator=gen) for _ in range(n_draws)]).double().numpy()
    return torch.from_numpy(tau_b_rows(orders, effect.detach().to("cpu", torch.float64).numpy()))


@dataclass(frozen=True)
class ChanceBand:
    """The τ that random orderings reach on one ticket: the central `coverage` share of `draws` random draws."""

    low: float
    high: float
    draws: int
    coverage: float

    def verdict(self, tau: float) -> str:
        """'yes' above the band, 'reversed' below it, 'no' inside it, '—' for an undefined τ."""
        if not math.isfinite(tau):
            return "—"
        return "yes" if tau > self.high else ("reversed" if tau < self.low else "no")


def chance_band(random_tau: Tensor, coverage: float = 0.9) -> ChanceBand | None:
    """The band of `random_tau_baseline` draws a signal's τ must leave to say anything; None when every draw is
    undefined (all deletions move p(team) equally, so there is no ranking to agree with)."""
    if not 0 < coverage < 1:
        raise ValueError(f"coverage must lie in (0, 1), got {coverage}")
    draws = check_vector(random_tau, "random_tau").numpy()
    draws = draws[np.isfinite(draws)]
    if not draws.size:
        return None
    tail = 50 * (1 - coverage)
    low, high = np.percentile(draws, [tail, 100 - tail])
    return ChanceBand(float(low), float(high), int(draws.size), coverage)


def disagreements(signal: Tensor, effect: Tensor, tokens: Sequence[str], k: int = 3) -> dict[str, list[tuple]]:
    """The k tokens where `signal` (n,) and `effect` (n,) disagree most, as (position, token, signal, effect), by
    rank alone: for scores without a scale of their own (attention edges against their cut's effect); a ticket's
    tokens against their deletion effect take `effect_disagreements`, whose thresholds are in probability.

    Both are turned into rank percentiles (0 = lowest of this ticket, 1 = highest; ties share their average
    rank) because their raw scales cannot be compared: attention is a share summing to 1, effect a
    probability change that may be negative. `high_attention_low_effect` lists tokens whose signal
    percentile exceeds their effect percentile by most; `low_attention_high_effect` the reverse. Only
    tokens with a real gap (> 0) are listed, so lists may be shorter than k.
    """
    from scipy import stats

    s, e = check_pair(signal, effect)
    if len(tokens) != s.size:
        raise ValueError(f"{len(tokens)} tokens for {s.size} scores")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    out: dict[str, list[tuple]] = {"high_attention_low_effect": [], "low_attention_high_effect": []}
    n = s.size
    if n < 2:
        return out
    gap = (stats.rankdata(s) - stats.rankdata(e)) / (n - 1)            # percentile(signal) − percentile(effect)
    gap_t = torch.from_numpy(gap)
    for key, scores in (("high_attention_low_effect", gap_t), ("low_attention_high_effect", -gap_t)):
        for i in by_score(scores)[:k].tolist():
            if scores[i] > 0:
                out[key].append((i, tokens[i], float(s[i]), float(e[i])))
    return out


def agreement_table(signals: Mapping[str, Tensor], effect: Tensor, k: int = 3) -> pd.DataFrame:
    """τ, ρ and top-k overlap of each signal against `effect` (n,). Columns: signal, kendall_tau, spearman,
    top3_overlap (named for the default k)."""
    rows = [(name, kendall_tau(s, effect), spearman(s, effect), top_k_overlap(s, effect, k))
            for name, s in signals.items()]
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


def random_signal(n: int, seed: int) -> Tensor:
    # A random ordering as an ERASER baseline: a faithful signal must beat it.
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed)).double()
