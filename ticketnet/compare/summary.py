"""Two routers' routed tables of the same tickets side by side: metrics with paired bootstrap intervals, McNemar, flips."""

# A is the reference (the old router), B the candidate (the retrain); every difference is B minus A. The bootstrap
# resamples ticket indices once per resample and reuses them for every metric of both routers (paired), as one
# matrix product of the resample counts with a table of per-ticket indicator columns, so all metrics cost one pass.

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ticketnet.metrics import expected_calibration_error

ECE_BINS = 15                             # ticketnet.metrics' default, so the point estimates agree
LEVEL = 0.95
_CELLS = 4_000_000                        # resample counts held at once (resamples x tickets), about 32 MB


def _align(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`b` in `a`'s ticket order; ValueError when the two tables hold different or repeated tickets."""
    for name, t in (("A", a), ("B", b)):
        if "ticket_id" not in t.columns:
            raise ValueError(f"router {name}'s table has no ticket_id column")
        if t["ticket_id"].duplicated().any():
            dup = t.loc[t["ticket_id"].duplicated(), "ticket_id"].iloc[0]
            raise ValueError(f"router {name}'s table holds ticket {dup} twice")
    ids_a, ids_b = set(a["ticket_id"]), set(b["ticket_id"])
    if ids_a != ids_b:
        only_a, only_b = len(ids_a - ids_b), len(ids_b - ids_a)
        raise ValueError(f"the two tables hold different tickets ({only_a} only in A, {only_b} only in B): "
                         f"compare the routers on the same split")
    a = a.reset_index(drop=True)
    b = b.set_index("ticket_id").loc[a["ticket_id"]].reset_index()
    return a, b


def shared_teams(teams_a: Sequence[str], teams_b: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """(teams both routers know in A's order, teams only A knows, teams only B knows); ValueError, one line, when
    they share none."""
    teams_a, teams_b = [str(t) for t in teams_a], [str(t) for t in teams_b]
    shared = [t for t in teams_a if t in set(teams_b)]
    if not shared:
        raise ValueError(f"the routers share no team (A: {', '.join(teams_a[:5])}{', …' if len(teams_a) > 5 else ''}; "
                         f"B: {', '.join(teams_b[:5])}{', …' if len(teams_b) > 5 else ''}): nothing to compare")
    return shared, [t for t in teams_a if t not in set(shared)], [t for t in teams_b if t not in set(shared)]


def _r(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 4)


def _interval(value: float | None, samples: np.ndarray) -> dict:
    samples = samples[np.isfinite(samples)]
    if value is None or samples.size == 0:
        return {"value": _r(value), "low": None, "high": None}
    low, high = np.percentile(samples, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2])
    return {"value": _r(value), "low": _r(low), "high": _r(high)}


def _resample_counts(n: int, resamples: int, seed: int):
    """Chunks of (rows, n) float64 matrices: how often each ticket is drawn in each resample (rows sum to n)."""
    rng = np.random.default_rng(seed)
    step = max(1, _CELLS // max(n, 1))
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        idx = rng.integers(0, n, size=(rows, n))
        flat = (idx + (np.arange(rows) * n)[:, None]).ravel()
        yield np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


class _Columns:
    """Per-ticket indicator columns, named, stacked into one (n, m) matrix; sums over resamples read back by name."""

    def __init__(self, n: int):
        self.n, self.blocks, self.slices, self.width = n, [], {}, 0

    def add(self, name: str, values: np.ndarray) -> None:
        values = np.asarray(values, dtype=np.float64).reshape(self.n, -1)
        self.slices[name] = slice(self.width, self.width + values.shape[1])
        self.width += values.shape[1]
        self.blocks.append(values)

    def matrix(self) -> np.ndarray:
        return np.hstack(self.blocks)


def _router_columns(cols: _Columns, key: str, team: np.ndarray, predicted: np.ndarray, conf: np.ndarray,
                    correct: np.ndarray, shared: list[str]) -> None:
    true_1h = team[:, None] == np.asarray(shared)[None, :]
    pred_1h = predicted[:, None] == np.asarray(shared)[None, :]
    bins = np.minimum((conf * ECE_BINS).astype(np.int64), ECE_BINS - 1)
    bins_1h = bins[:, None] == np.arange(ECE_BINS)[None, :]
    cols.add(f"{key}.correct", correct)
    cols.add(f"{key}.tp", true_1h & pred_1h)
    cols.add(f"{key}.predicted", pred_1h)
    cols.add(f"{key}.actual", true_1h)
    cols.add(f"{key}.bin_correct", bins_1h * correct[:, None])
    cols.add(f"{key}.bin_conf", bins_1h * conf[:, None])


def _scores(sums: dict[str, np.ndarray], key: str, n: float) -> dict[str, np.ndarray]:
    """Accuracy, macro F1, ECE, per-team precision and recall from column sums (any leading shape)."""
    tp, predicted, actual = sums[f"{key}.tp"], sums[f"{key}.predicted"], sums[f"{key}.actual"]
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(predicted > 0, tp / np.maximum(predicted, 1), 0.0)
        recall = np.where(actual > 0, tp / np.maximum(actual, 1), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
        # A resample without a team's tickets leaves its recall undefined (NaN) rather than 0 for that resample.
        recall_defined = np.where(actual > 0, recall, np.nan)
        precision_defined = np.where(predicted > 0, precision, np.nan)
    return {"accuracy": sums[f"{key}.correct"][..., 0] / n,
            "macro_f1": f1.mean(axis=-1),
            "ece": np.abs(sums[f"{key}.bin_correct"] - sums[f"{key}.bin_conf"]).sum(axis=-1) / n,
            "precision": precision_defined, "recall": recall_defined}


def _probabilities(table: pd.DataFrame, teams: list[str]) -> np.ndarray | None:
    names = [f"p_{t}" for t in teams]
    return table[names].to_numpy(np.float64) if all(c in table.columns for c in names) else None


def _groups(a: pd.DataFrame, b: pd.DataFrame, column: str) -> pd.Series | None:
    for t in (a, b):
        if column in t.columns:
            values = t[column].fillna("").astype(str)
            if values.ne("").any():
                return values
    return None


def _flip_kinds(a: pd.DataFrame, b: pd.DataFrame) -> np.ndarray:
    """Per aligned ticket: "fixed", "broken", "both wrong" (different wrong teams), or "" (no flip)."""
    right_a = a["predicted"].astype(str).eq(a["team"].astype(str)).to_numpy()
    right_b = b["predicted"].astype(str).eq(b["team"].astype(str)).to_numpy()
    differ = a["predicted"].astype(str).to_numpy() != b["predicted"].astype(str).to_numpy()
    kind = np.full(len(a), "", dtype=object)
    kind[~right_a & right_b] = "fixed"
    kind[right_a & ~right_b] = "broken"
    kind[~right_a & ~right_b & differ] = "both wrong"
    return kind


def _flip_counts(kind: np.ndarray, groups: pd.Series, order: list[str] | None = None) -> dict:
    labels = order if order is not None else sorted(set(groups))
    g = groups.to_numpy()
    return {label: {"fixed": int(((g == label) & (kind == "fixed")).sum()),
                    "broken": int(((g == label) & (kind == "broken")).sum()),
                    "both_wrong": int(((g == label) & (kind == "both wrong")).sum())} for label in labels}


def _kappa(pred_a: np.ndarray, pred_b: np.ndarray) -> float:
    from sklearn.metrics import cohen_kappa_score

    if np.array_equal(pred_a, pred_b):
        return 1.0                           # perfect agreement; sklearn's 0/0 when both predict one team only
    return float(cohen_kappa_score(pred_a, pred_b))


def _mcnemar_p(broken: int, fixed: int) -> float:
    from statsmodels.stats.contingency_tables import mcnemar

    return float(mcnemar([[0, broken], [fixed, 0]], exact=True).pvalue)


def p_text(p: float) -> str:
    """McNemar's p as the verdict, the command line and the Compare page's card all write it: "p = 0.0123", and
    "p = 5.4e-05" below 1e-4 (pass the unrounded p: `mcnemar["p"]` is rounded to 4 decimals and reads 0.0001)."""
    return f"p = {p:.1e}" if p < 1e-4 else f"p = {p:.4f}"


def _verdict(diff: dict, mc: dict, p: float, n: int) -> str:
    d = diff["value"]
    discordant = mc["a_right_b_wrong"] + mc["b_right_a_wrong"]
    said = p_text(p)
    if p < 0.05:
        way = "better" if mc["b_right_a_wrong"] > mc["a_right_b_wrong"] else "worse"
        return (f"B routes significantly {way} than A: accuracy {d:+.4f} (95 % interval {diff['low']:+.4f} to "
                f"{diff['high']:+.4f}), McNemar's exact test {said} on {discordant} discordant of {n} tickets.")
    return (f"No significant difference between B and A: accuracy {d:+.4f} (95 % interval {diff['low']:+.4f} to "
            f"{diff['high']:+.4f}), McNemar's exact test {said} on {discordant} discordant of {n} tickets.")


def compare_tables(a: pd.DataFrame, b: pd.DataFrame, teams_a: Sequence[str], teams_b: Sequence[str],
                   resamples: int = 2000, seed: int = 0) -> dict:
    """Router A's and router B's routed tables (`ticketnet.predictions.routed_table`) of the same tickets, compared on
    the tickets whose true team both routers know (see docs/compare.md for every key). ValueError, one line, when
    the tickets differ, the routers share no team, or no ticket is left to compare."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, not {resamples}")
    shared, only_a, only_b = shared_teams(teams_a, teams_b)
    a, b = _align(a, b)
    inside = a["team"].astype(str).isin(shared).to_numpy()
    outside = int((~inside).sum())
    a, b = a[inside].reset_index(drop=True), b[inside].reset_index(drop=True)
    n = len(a)
    if n == 0:
        raise ValueError(f"none of the {outside} tickets has a true team both routers know ({', '.join(shared)})")

    team = a["team"].astype(str).to_numpy()
    pred = {"a": a["predicted"].astype(str).to_numpy(), "b": b["predicted"].astype(str).to_numpy()}
    conf = {"a": a["confidence"].to_numpy(np.float64), "b": b["confidence"].to_numpy(np.float64)}
    correct = {k: pred[k] == team for k in pred}
    teams_of = {"a": [str(t) for t in teams_a], "b": [str(t) for t in teams_b]}

    agreed = pred["a"] == pred["b"]
    shift = np.where(agreed, conf["b"] - conf["a"], 0.0)

    cols = _Columns(n)
    for k, t in (("a", a), ("b", b)):
        _router_columns(cols, k, team, pred[k], conf[k], correct[k], shared)
    cols.add("agreed", agreed)
    cols.add("shift", shift)
    features = cols.matrix()

    def split(sums: np.ndarray) -> dict[str, np.ndarray]:
        return {name: sums[..., s] for name, s in cols.slices.items()}

    point = split(features.sum(axis=0))
    boot = split(np.vstack([w @ features for w in _resample_counts(n, resamples, seed)]))

    routers, point_scores, boot_scores = {}, {}, {}
    for k, t in (("a", a), ("b", b)):
        ps, bs = _scores(point, k, n), _scores(boot, k, n)
        point_scores[k], boot_scores[k] = ps, bs
        probs = _probabilities(t, teams_of[k])
        if probs is not None:                   # the router's own probabilities, as the model card computes ECE
            y = np.array([teams_of[k].index(x) for x in team])
            ece = expected_calibration_error(probs, y, ECE_BINS)
        else:
            ece = float(ps["ece"])
        ps["ece"] = ece                         # the difference below is of the figures shown
        routers[k] = {
            "accuracy": _interval(float(ps["accuracy"]), bs["accuracy"]),
            "macro_f1": _interval(float(ps["macro_f1"]), bs["macro_f1"]),
            "ece": _interval(ece, bs["ece"]),
            "per_team": {s: {"precision": _interval(float(np.nan_to_num(ps["precision"][i])), bs["precision"][:, i]),
                             "recall": _interval(float(np.nan_to_num(ps["recall"][i])), bs["recall"][:, i]),
                             "support": int(point["a.actual"][i])} for i, s in enumerate(shared)},
        }

    difference = {m: _interval(float(point_scores["b"][m] - point_scores["a"][m]),
                               boot_scores["b"][m] - boot_scores["a"][m]) for m in ("accuracy", "macro_f1", "ece")}

    broken = int((correct["a"] & ~correct["b"]).sum())
    fixed = int((~correct["a"] & correct["b"]).sum())
    p = _mcnemar_p(broken, fixed)
    # "p" rounded like every figure; "p_unrounded" keeps a p of 1e-74 from reading as 0
    mc = {"a_right_b_wrong": broken, "b_right_a_wrong": fixed, "p": _r(p), "p_unrounded": float(p)}

    n_agreed = int(agreed.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_shift = boot["shift"][:, 0] / boot["agreed"][:, 0]
    shift_on = conf["b"][agreed] - conf["a"][agreed]
    confidence_shift = {"n": n_agreed, "mean": None, "median": None, "low": None, "high": None}
    if n_agreed:
        iv = _interval(float(shift_on.mean()), boot_shift)
        confidence_shift.update(mean=iv["value"], median=_r(float(np.median(shift_on))), low=iv["low"],
                                high=iv["high"])

    kind = _flip_kinds(a, b)
    flips = {"fixed": fixed, "broken": broken, "both_wrong": int((kind == "both wrong").sum()),
             "by_team": _flip_counts(kind, a["team"].astype(str), shared)}
    style = _groups(a, b, "style")
    if style is not None:
        flips["by_style"] = _flip_counts(kind, style)
    pattern = _groups(a, b, "pattern")
    if pattern is not None:
        flips["by_pattern"] = _flip_counts(kind, pattern)

    return {
        "n": n, "resamples": int(resamples), "seed": int(seed),
        "teams": {"shared": shared, "only_a": only_a, "only_b": only_b, "tickets_outside_shared": outside},
        "routers": routers,
        "difference": difference,
        "mcnemar": mc,
        "agreement": {"same_team": _r(float(agreed.mean())), "kappa": _r(_kappa(pred["a"], pred["b"])),
                      "confidence_shift": confidence_shift},
        "flips": flips,
        "verdict": _verdict(difference["accuracy"], mc, p, n),
    }


def flip_table(a: pd.DataFrame, b: pd.DataFrame, teams_a: Sequence[str] | None = None,
               teams_b: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per ticket the routers disagree on: "fixed" (A wrong, B right), "broken" (A right, B wrong) or
    "both wrong" (with different teams), with both predictions and confidences (and pattern / style when present).
    With `teams_a` and `teams_b`, only the tickets whose true team both routers know, as in `compare_tables`."""
    a, b = _align(a, b)
    if teams_a is not None and teams_b is not None:
        shared, _, _ = shared_teams(teams_a, teams_b)
        inside = a["team"].astype(str).isin(shared).to_numpy()
        a, b = a[inside].reset_index(drop=True), b[inside].reset_index(drop=True)
    kind = _flip_kinds(a, b)
    out = pd.DataFrame({"ticket_id": a["ticket_id"], "text": a["text"], "team": a["team"], "kind": kind,
                        "predicted_a": a["predicted"], "confidence_a": a["confidence"],
                        "predicted_b": b["predicted"], "confidence_b": b["confidence"]})
    for column in ("pattern", "style"):
        values = _groups(a, b, column)
        if values is not None:
            out[column] = values.to_numpy()
    return out[kind != ""].reset_index(drop=True)
