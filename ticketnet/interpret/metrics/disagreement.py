"""Where a signal and the deletion effect disagree on one ticket, by thresholds that mean something on it."""

# numpy only (scipy where it ranks): the dashboard's sentences read the thresholds without importing torch.

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


SMALL_EFFECT = 0.05          # a probability change below this counts as "little"
# …and in each unit the effects are shown in: the logit difference's keeps the ratio of the two units'
# negligible effects (signals.NEGLIGIBLE_EFFECT: 0.1 logit against 0.02 probability).
SMALL_EFFECTS = {"prob": SMALL_EFFECT, "logit_diff": 5 * SMALL_EFFECT}
HIGH_EFFECT_SHARE = 0.5      # "high effect": at least half of the ticket's largest change (and ≥ SMALL_EFFECT)
LOW_EFFECT_SHARE = 0.25      # "low effect": under a quarter of it (or under SMALL_EFFECT)


@dataclass(frozen=True)
class Disagreements:
    """Tokens where a signal and the deletion effect disagree, with the thresholds used (see `effect_disagreements`)."""

    high_signal_low_effect: list[tuple[int, str, float, float]]    # (position, token, signal, effect)
    low_signal_high_effect: list[tuple[int, str, float, float]]
    high_effect: float           # |effect| at least this is "high" (never below SMALL_EFFECT)
    low_effect: float            # |effect| below this is "low"
    largest_effect: float        # the ticket's largest |effect|


def effect_disagreements(signal, effect, tokens: Sequence[str], k: int = 3,
                         small: float = SMALL_EFFECT) -> Disagreements:
    """The tokens a signal and the deletion effect (drop in p(team) by default, any sign; in another unit, with
    that unit's `small` from SMALL_EFFECTS) disagree on, by thresholds that are meaningful on this ticket.

    High effect: |effect| ≥ max(small, HIGH_EFFECT_SHARE × the ticket's largest |effect|), so a ticket whose
    every deletion moves its score by less than `small` has no high-effect token at all. Low effect: |effect|
    below max(small, LOW_EFFECT_SHARE × largest). High signal: in the top third of the ticket's tokens by
    the signal; low signal: the bottom half. Each list holds at most k tokens: high signal / low effect by signal,
    low signal / high effect by |effect|, largest first."""
    s, e = _np(signal), _np(effect)
    n = len(tokens)
    if s.shape != (n,) or e.shape != (n,):
        raise ValueError(f"{n} tokens, {s.shape} signal values and {e.shape} effects")
    largest = float(np.abs(e).max()) if n else 0.0
    high = max(small, HIGH_EFFECT_SHARE * largest)
    low = max(small, LOW_EFFECT_SHARE * largest)
    if n < 2:
        return Disagreements([], [], high, low, largest)
    from scipy import stats

    pct = (stats.rankdata(s) - 1) / (n - 1)                    # 0 = lowest signal on the ticket, 1 = highest
    size = np.abs(e)
    hi_lo = [i for i in np.argsort(-s, kind="stable") if pct[i] >= 2 / 3 and size[i] < low][:k]
    lo_hi = [i for i in np.argsort(-size, kind="stable") if pct[i] <= 1 / 2 and size[i] >= high][:k]
    rows = lambda idx: [(int(i), tokens[i], float(s[i]), float(e[i])) for i in idx]    # noqa: E731
    return Disagreements(rows(hi_lo), rows(lo_hi), high, low, largest)
