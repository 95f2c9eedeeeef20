"""Split-conformal prediction sets (LAC, APS) fitted with MAPIE on valid, kept as one quantile for later tickets."""

# MAPIE fits the conformity scores of the calibration tickets (1 − p(true team) for LAC; the probability mass down
# to the true team, less a seeded uniform share of it, for APS) and takes their ⌈(n+1)(1−α)⌉-th smallest value.
# That one number is all a set needs afterwards, so `ConformalSets.sets` rebuilds MAPIE's sets from the stored
# quantile and the probabilities alone (no MAPIE, no model; tests check they are the same sets as MAPIE's). APS
# sets are built as MAPIE's `include_last_label=True` builds them: never empty, at least as large as the randomized
# ones, so the guarantee P(true team ∈ set) ≥ 1 − α holds on tickets exchangeable with the calibration tickets.

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ticketnet.policy._checks import check_alpha, probabilities

METHODS = ("lac", "aps")
EPSILON = 1e-8                          # MAPIE's machine-precision margin (mapie._machine_precision.EPSILON)
APS_SEED = 0                            # the seed of APS's uniform share in the calibration scores


class _GivenProbabilities:
    """A prefit scikit-learn-style classifier whose feature is a row number into stored probabilities: what MAPIE
    needs to be handed probabilities that were computed elsewhere (by the router, once)."""

    _estimator_type = "classifier"

    def __init__(self, probs: np.ndarray):
        self.probs = probs
        self.classes_ = np.arange(probs.shape[1])
        self.n_features_in_ = 1

    def fit(self, X, y):                # noqa: ARG002 - already fitted: the router was trained elsewhere
        return self

    def predict_proba(self, X) -> np.ndarray:
        return self.probs[np.asarray(X).reshape(len(X), -1)[:, 0].astype(np.int64)]

    def predict(self, X) -> np.ndarray:
        return self.predict_proba(X).argmax(axis=1)

    def get_params(self, deep: bool = True) -> dict:   # noqa: ARG002 - scikit-learn's clone protocol
        return {"probs": self.probs}

    def set_params(self, **params):
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, Tags, TargetTags

        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags())


def _check_labels(y, n: int, k: int) -> np.ndarray:
    labels = np.asarray(y).reshape(-1)
    if labels.size != n:
        raise ValueError(f"{n} rows of probabilities but {labels.size} true teams")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError("true teams must be given as team indices (0 .. teams − 1)")
    if labels.size and (labels.min() < 0 or labels.max() >= k):
        raise ValueError(f"a true team index is outside 0 .. {k - 1}")
    return labels.astype(np.int64)


def mapie_classifier(probs, y, alpha: float, method: str = "lac", later=None):
    """MAPIE's SplitConformalClassifier conformalized on these probabilities and true team indices (row numbers
    are the feature): the reference the stored quantile is taken from and tested against. `later`: probabilities
    of other tickets to ask it for sets afterwards, as rows len(probs), len(probs) + 1, ..."""
    import warnings

    from mapie.classification import SplitConformalClassifier

    p = probabilities(probs)
    labels = _check_labels(y, p.shape[0], p.shape[1])
    table = p if later is None else np.concatenate([p, probabilities(later)])
    estimator = _GivenProbabilities(table)
    clf = SplitConformalClassifier(estimator=estimator, confidence_level=1 - alpha, conformity_score=method,
                                   prefit=True, random_state=APS_SEED)
    with warnings.catch_warnings():     # "fewer labels than training": a team absent from valid is fine here
        warnings.simplefilter("ignore", UserWarning)
        clf.conformalize(np.arange(p.shape[0]).reshape(-1, 1), labels)
    return clf


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return method


@dataclass(frozen=True)
class ConformalSets:
    """A fitted split-conformal rule: the quantile of the calibration scores at level α, and what it was fitted on."""

    alpha: float
    method: str
    quantile: float
    fitted_on: str
    n_calibration: int

    def sets(self, probs) -> np.ndarray:
        """(n, teams) booleans: the teams in each ticket's set, as MAPIE's predict_set builds them."""
        p = probabilities(probs)
        if self.method == "lac":
            return (1 - p) - self.quantile <= EPSILON
        # APS: the teams in decreasing probability until the cumulative mass first reaches the quantile.
        order = np.flip(np.argsort(p, axis=1), axis=1)
        cumsum_sorted = np.cumsum(np.take_along_axis(p, order, axis=1), axis=1)
        cumsum = np.take_along_axis(cumsum_sorted, np.argsort(order, axis=1), axis=1)
        last = np.ma.masked_less(cumsum - self.quantile, -EPSILON).argmin(axis=1)[:, None]
        p_last = np.take_along_axis(p, last, axis=1)
        tiny = p_last <= EPSILON        # a zero last probability would pull in every zero team; MAPIE skips them
        if tiny.any():
            smallest = np.ma.masked_less(p, EPSILON).filled(fill_value=np.inf).min(axis=1, keepdims=True)
            p_last = np.where(tiny, smallest, p_last)
        return p - p_last >= -EPSILON

    def to_json(self) -> dict:
        return {"alpha": self.alpha, "method": self.method, "quantile": self.quantile, "fitted_on": self.fitted_on,
                "n_calibration": self.n_calibration}

    @classmethod
    def from_json(cls, d: Mapping) -> ConformalSets:
        try:
            found = cls(check_alpha(d["alpha"]), _check_method(str(d["method"])), float(d["quantile"]),
                        str(d["fitted_on"]), int(d["n_calibration"]))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a stored conformal rule ({exc})") from None
        if not math.isfinite(found.quantile):
            raise ValueError("not a stored conformal rule (its quantile is not a finite number)")
        return found


def min_calibration(alpha: float) -> int:
    """The fewest calibration tickets for which the ⌈(n+1)(1−α)⌉-th score exists (n ≥ (1−α)/α)."""
    alpha = check_alpha(alpha)
    n = 1
    while math.ceil((n + 1) * (1 - alpha) - 1e-9) > n:
        n += 1
    return n


def fit_conformal(probs, y, alpha: float, method: str = "lac", fitted_on: str = "valid") -> ConformalSets:
    """Split-conformal sets at level α fitted by MAPIE on calibration probabilities (n, teams) and true team indices;
    `method` "lac" (smallest sets) or "aps" (sets that grow with the router's doubt). Raises ValueError for α
    outside (0, 1) or too few calibration tickets for α."""
    alpha = check_alpha(alpha)
    method = _check_method(method)
    p = probabilities(probs)
    n = p.shape[0]
    need = min_calibration(alpha)
    if n < need:
        raise ValueError(f"{fitted_on} has {n} tickets; sets at alpha {alpha:g} need at least {need} to calibrate "
                         f"on (raise alpha or calibrate on more tickets)")
    labels = _check_labels(y, n, p.shape[1])
    if method == "aps" and np.unique(labels).size < 3:
        raise ValueError(f"APS sets need the true teams of {fitted_on} to span at least 3 teams (MAPIE refuses APS "
                         f"for two); use method lac")
    clf = mapie_classifier(p, labels, alpha, method)
    conformity = np.asarray(clf.conformity_scores, dtype=np.float64).reshape(-1)
    # MAPIE's quantile (mapie.utils._compute_classification_quantile): the ⌈(n+1)(1−α)⌉-th smallest score.
    quantile = float(np.quantile(conformity, math.ceil((n + 1) * (1 - alpha)) / n, method="lower"))
    return ConformalSets(alpha, method, quantile, fitted_on, n)


def _wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    phat = successes / n
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def set_report(sets, y) -> dict:
    """Empirical coverage (share of tickets whose true team is in their set, Wilson 95 % interval), mean set size,
    the count of each size, empty sets, n."""
    s = np.asarray(sets, dtype=bool)
    if s.ndim != 2:
        raise ValueError(f"sets must be a (tickets, teams) table of booleans, got shape {s.shape}")
    labels = _check_labels(y, s.shape[0], s.shape[1])
    n = s.shape[0]
    if n == 0:
        raise ValueError("no tickets to report on")
    hit = int(s[np.arange(n), labels].sum())
    sizes = s.sum(axis=1)
    low, high = _wilson(hit, n)
    counts = np.bincount(sizes, minlength=s.shape[1] + 1)
    return {"coverage": {"value": hit / n, "low": low, "high": high}, "mean_size": float(sizes.mean()),
            "size_counts": {int(size): int(c) for size, c in enumerate(counts) if c},
            "empty": int(counts[0]), "n": n}


def team_set_labels(sets, teams: Sequence[str], probs=None) -> list[str]:
    """Each ticket's set as words, "delivery or returns", teams in decreasing probability when `probs` is given
    (else in the router's team order); "" for an empty set."""
    s = np.asarray(sets, dtype=bool)
    names = list(teams)
    if s.ndim != 2 or s.shape[1] != len(names):
        raise ValueError(f"sets must have one column per team ({len(names)}), got shape {s.shape}")
    if probs is None:
        order = np.broadcast_to(np.arange(len(names)), s.shape)
    else:
        order = np.argsort(-np.asarray(probs, dtype=np.float64), axis=1, kind="stable")
    out = []
    for row, ranks in zip(s, order):
        members = [names[j] for j in ranks if row[j]]
        out.append(" or ".join(members) if len(members) <= 2 else ", ".join(members[:-1]) + " or " + members[-1])
    return out
