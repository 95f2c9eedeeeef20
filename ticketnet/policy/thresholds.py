"""Per-team confidence thresholds for a target precision or automation rate, fitted on one split, scored on others."""

# A ticket is auto-routed when its confidence is at least the threshold of the team it was predicted for; the rest go
# to a person. For a target precision each predicted team gets the lowest threshold whose auto-routed tickets reach
# that precision on the fitted data (the most tickets at that precision); a team that no threshold brings there is
# never auto-routed, and the fit says so with the best precision it could reach. For a target automation rate the
# thresholds are those of the highest precision target that still auto-routes at least that share: the most precise
# per-team policy at that rate (coverage only grows as the precision target falls, so a bisection finds it).

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ticketnet.policy._checks import check_target, scores

NEVER = float("inf")                     # the threshold of a team that is never auto-routed
CONFIDENCE = 0.95                        # the bootstrap intervals' level
_TOLERANCE = 1e-12                       # precision compared with the target: 49/50 is 0.98, not 0.97999...


@dataclass(frozen=True)
class TeamThresholds:
    """One confidence threshold per predicted team (NEVER: always sent to a person) and how the fit went."""

    thresholds: dict[str, float]
    target: dict                               # {"precision": 0.98} or {"coverage": 0.6}
    reached: bool
    best_reachable: float
    messages: tuple[str, ...] = ()
    fitted: dict = field(default_factory=dict)   # coverage, precision, n of the fitted data under these thresholds

    def to_json(self) -> dict:
        return {"thresholds": {t: (None if math.isinf(v) else v) for t, v in self.thresholds.items()},
                "target": dict(self.target), "reached": self.reached, "best_reachable": self.best_reachable,
                "messages": list(self.messages), "fitted": dict(self.fitted)}

    @classmethod
    def from_json(cls, d: Mapping) -> TeamThresholds:
        try:
            thresholds = {str(t): (NEVER if v is None else float(v)) for t, v in d["thresholds"].items()}
            return cls(thresholds, dict(d["target"]), bool(d["reached"]), float(d["best_reachable"]),
                       tuple(str(m) for m in d.get("messages", ())), dict(d.get("fitted", {})))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a stored set of team thresholds ({exc})") from None


@dataclass(frozen=True)
class _TeamCurve:
    """One predicted team's precision at each of its distinct confidences, highest confidence first."""

    thresholds: np.ndarray
    auto_routed: np.ndarray
    precision: np.ndarray

    def threshold_for(self, precision: float) -> float:
        reach = np.flatnonzero(self.precision >= precision - _TOLERANCE)
        return float(self.thresholds[reach[-1]]) if reach.size else NEVER

    def auto_routed_for(self, precision: float) -> int:
        reach = np.flatnonzero(self.precision >= precision - _TOLERANCE)
        return int(self.auto_routed[reach[-1]]) if reach.size else 0


def _team_curve(conf: np.ndarray, ok: np.ndarray) -> _TeamCurve:
    order = np.argsort(-conf, kind="stable")
    conf, ok = conf[order], ok[order]
    last = np.flatnonzero(np.r_[conf[1:] != conf[:-1], True])
    auto = last + 1
    return _TeamCurve(conf[last], auto, np.cumsum(ok)[last] / auto)


def _predicted(predicted, n: int) -> np.ndarray:
    pred = np.asarray(predicted).reshape(-1)
    if pred.size != n:
        raise ValueError(f"{n} confidences but {pred.size} predicted teams; they must describe the same tickets")
    return pred


def fit_team_thresholds(confidence, predicted, correct, teams: Sequence[str], *, precision: float | None = None,
                        coverage: float | None = None, fitted_on: str = "valid") -> TeamThresholds:
    """One threshold per predicted team for exactly one target, fitted on the tickets given (valid): `precision`
    (the auto-routed tickets' precision, per team and so overall) or `coverage` (the share auto-routed)."""
    if (precision is None) == (coverage is None):
        raise ValueError("give exactly one target: a precision (e.g. 0.98) or a coverage (e.g. 0.6)")
    conf, ok = scores(confidence, correct)
    pred = _predicted(predicted, conf.size)
    unknown = sorted(set(np.unique(pred).tolist()) - set(teams))
    if unknown:
        raise ValueError(f"predicted team(s) {', '.join(map(repr, unknown[:3]))} are not among the router's teams")
    curves = {t: _team_curve(conf[pred == t], ok[pred == t]) for t in teams if (pred == t).any()}
    messages = [f"{t}: never predicted on {fitted_on}, so never auto-routed" for t in teams if t not in curves]
    n = conf.size

    def thresholds_at(level: float) -> dict[str, float]:
        return {t: (curves[t].threshold_for(level) if t in curves else NEVER) for t in teams}

    def coverage_at(level: float) -> float:
        return sum(c.auto_routed_for(level) for c in curves.values()) / n

    if precision is not None:
        level = check_target("precision", precision)
        target = {"precision": level}
        best = {t: float(c.precision.max()) for t, c in curves.items()}
        failing = [t for t in curves if best[t] < level - _TOLERANCE]
        messages += [f"{t}: no threshold reaches precision {level:g} on {fitted_on} (best {best[t]:.4f}); its "
                     f"tickets all go to a person" for t in failing]
        reached = not failing and bool(curves)
        # The highest precision target every predicted team reaches.
        best_reachable = min(best.values()) if best else 0.0
        if failing and len(failing) == len(curves):
            messages.insert(0, f"no threshold reaches precision {level:g} on {fitted_on}; the best any team "
                               f"reaches is {max(best.values()):.4f}")
    else:
        share = check_target("coverage", coverage)
        target = {"coverage": share}
        levels = np.unique(np.concatenate([c.precision for c in curves.values()] + [np.zeros(1)]))
        lo, hi = 0, levels.size - 1            # coverage_at(levels[0] = 0) is 1; find the highest level still >= share
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if coverage_at(levels[mid]) >= share - _TOLERANCE:
                lo = mid
            else:
                hi = mid - 1
        level = float(levels[lo])
        reached, best_reachable = True, 1.0
        messages.append(f"the thresholds of precision target {level:.4f} per team auto-route "
                        f"{coverage_at(level):.4f} of {fitted_on} (target {share:g})")
    thresholds = thresholds_at(level)
    auto = auto_routed(thresholds, conf, pred)
    fitted = {"split": fitted_on, "n": n, "coverage": float(auto.mean()),
              "precision": float(ok[auto].mean()) if auto.any() else None}
    return TeamThresholds(thresholds, target, reached, float(best_reachable), tuple(messages), fitted)


def auto_routed(thresholds: TeamThresholds | Mapping[str, float], confidence, predicted) -> np.ndarray:
    """Which tickets skip the person: confidence >= the threshold of their predicted team (a team without a
    threshold never does)."""
    table = thresholds.thresholds if isinstance(thresholds, TeamThresholds) else thresholds
    conf = np.asarray(confidence, dtype=np.float64).reshape(-1)
    pred = _predicted(predicted, conf.size)
    if conf.size == 0:
        return np.zeros(0, dtype=bool)
    names, index = np.unique(pred, return_inverse=True)
    limits = np.array([float(table.get(str(t), NEVER)) for t in names])
    return conf >= limits[index.reshape(-1)]


def _interval(value: float | None, draws: np.ndarray) -> dict:
    kept = draws[np.isfinite(draws)]
    if value is None or kept.size == 0:
        return {"value": value, "low": None, "high": None}
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(kept, [tail, 100 - tail])
    return {"value": float(value), "low": float(low), "high": float(high)}


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def threshold_report(thresholds: TeamThresholds | Mapping[str, float], confidence, predicted, correct,
                     teams: Sequence[str], resamples: int = 1000, seed: int = 0) -> dict:
    """Coverage, precision and misroutes of `thresholds` on these tickets (test or handwritten, never the fitted
    split), overall and per predicted team, with percentile bootstrap 95 % intervals over `resamples` resamples
    of the tickets (seeded). Misroutes per 10,000 counts the wrong auto-routed tickets per 10,000 incoming."""
    conf, ok = scores(confidence, correct)
    pred = _predicted(predicted, conf.size)
    teams = list(teams)
    position = {t: i for i, t in enumerate(teams)}
    unknown = sorted(set(np.unique(pred).tolist()) - set(position))
    if unknown:
        raise ValueError(f"predicted team(s) {', '.join(map(repr, unknown[:3]))} are not among the router's teams")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    table = thresholds.thresholds if isinstance(thresholds, TeamThresholds) else dict(thresholds)
    auto = auto_routed(table, conf, pred)
    good = auto & ok
    team_index = np.array([position[t] for t in pred.tolist()], dtype=np.int64)
    n, k = conf.size, len(teams)

    # Resampled counts per team, a chunk of resamples at a time (the index matrix stays near 2 million entries).
    draws_pred = np.zeros((resamples, k))
    draws_auto = np.zeros((resamples, k))
    draws_good = np.zeros((resamples, k))
    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // n)
    for start in range(0, resamples, chunk):
        m = min(chunk, resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        keys = (team_index[idx] + k * np.arange(m)[:, None]).ravel()
        size = m * k
        draws_pred[start:start + m] = np.bincount(keys, minlength=size).reshape(m, k)
        draws_auto[start:start + m] = np.bincount(keys, weights=auto[idx].ravel(), minlength=size).reshape(m, k)
        draws_good[start:start + m] = np.bincount(keys, weights=good[idx].ravel(), minlength=size).reshape(m, k)

    total_auto, total_good = draws_auto.sum(axis=1), draws_good.sum(axis=1)
    n_auto, n_good = int(auto.sum()), int(good.sum())
    overall = {
        "n": n, "auto_routed": n_auto, "misroutes": n_auto - n_good, "to_person": n - n_auto,
        "coverage": _interval(n_auto / n, total_auto / n),
        "precision": _interval(n_good / n_auto if n_auto else None, _ratio(total_good, total_auto)),
        "misroutes_per_10000": _interval((n_auto - n_good) / n * 10_000, (total_auto - total_good) / n * 10_000),
    }
    per_team = {}
    for i, team in enumerate(teams):
        mask = team_index == i
        predicted_n, auto_n, good_n = int(mask.sum()), int(auto[mask].sum()), int(good[mask].sum())
        per_team[team] = {
            "threshold": float(table.get(team, NEVER)), "predicted": predicted_n, "auto_routed": auto_n,
            "misroutes": auto_n - good_n,
            "coverage": _interval(auto_n / predicted_n if predicted_n else None,
                                  _ratio(draws_auto[:, i], draws_pred[:, i])),
            "precision": _interval(good_n / auto_n if auto_n else None, _ratio(draws_good[:, i], draws_auto[:, i])),
        }
    return {"overall": overall, "per_team": per_team, "resamples": resamples, "seed": seed}
