"""The bag-of-words baseline beside every router: TF-IDF word and character n-grams with logistic regression."""

# A router's figures mean little alone: on a few hundred tickets a linear model over n-grams is hard to beat, and a
# reader must see what it gets on the same split. Its regularisation strength is chosen on valid, as the router's
# epoch is; test is read once, after both are fixed.

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np

from ticketnet.data.thread import split_thread
from ticketnet.metrics import summarize

C_GRID = (1.0, 10.0, 100.0)
MAX_FEATURES = 200_000        # per vectorizer: keeps memory flat on exports of hundreds of thousands of tickets
MAX_TRAIN = 60_000            # a larger train split is sampled (stratified) to this many for the baseline: its fit
                              # time grows with the tickets (7.4 min wall, 1.6 GB on Larkfield's 60,000 here)


def make_features():
    """TF-IDF over word 1–2-grams and character 2–5-grams (sublinear term frequency)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import FeatureUnion

    return FeatureUnion([
        ("words", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_features=MAX_FEATURES,
                                  token_pattern=r"(?u)\b\w+\b")),
        ("chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2,
                                  max_features=MAX_FEATURES)),
    ])


def texts_read(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """What the baseline reads of each ticket: its new message, as the router does (`ticketnet.data.thread`)."""
    return [split_thread(r["text"]).new for r in rows]


def _labels(rows: Sequence[Mapping[str, str]], teams: Sequence[str]) -> np.ndarray:
    index = {t: i for i, t in enumerate(teams)}
    return np.array([index[r["team"]] for r in rows], dtype=np.int64)


def _probs(features, model, rows: Sequence[Mapping[str, str]], n_teams: int) -> np.ndarray:
    """Probabilities (N, teams) in the router's team order; a team absent from train gets 0."""
    return _probs_of(model, features.transform(texts_read(rows)), n_teams)


def _probs_of(model, x, n_teams: int) -> np.ndarray:
    out = np.zeros((x.shape[0], n_teams))
    out[:, model.classes_] = model.predict_proba(x)
    return out


def fit_baseline(train: Sequence[Mapping[str, str]], valid: Sequence[Mapping[str, str]], teams: Sequence[str],
                 evaluate: Mapping[str, Sequence[Mapping[str, str]]], seed: int = 0) -> dict:
    """Fit on `train` for each C of C_GRID, keep the best on `valid`, and report every split of `evaluate`
    (accuracy, macro F1, per-team recall) with the C kept and the time taken. The features are fitted once, and
    each C starts from the previous C's solution (C ascending), which takes a fraction of the iterations."""
    import copy

    from sklearn.linear_model import LogisticRegression

    start = time.perf_counter()
    n_train = len(train)
    if n_train > MAX_TRAIN:
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(list(range(n_train)), train_size=MAX_TRAIN, random_state=seed,
                                   stratify=[r["team"] for r in train])
        train = [train[i] for i in sorted(keep)]
    y, y_valid = _labels(train, teams), _labels(valid, teams)
    features = make_features()
    x = features.fit_transform(texts_read(train))
    x_valid = features.transform(texts_read(valid))      # once: character n-grams cost a second per 1,500 tickets
    model = LogisticRegression(max_iter=2000, random_state=seed, warm_start=True)
    tried, best = {}, None
    for c in sorted(C_GRID):
        model.set_params(C=c).fit(x, y)
        acc = float((_probs_of(model, x_valid, len(teams)).argmax(1) == y_valid).mean())
        tried[str(c)] = round(acc, 4)
        if best is None or acc > best[0]:
            best = (acc, c, copy.deepcopy(model))
    _, c, model = best
    metrics = {}
    for name, rows in evaluate.items():
        probs = _probs_of(model, x_valid, len(teams)) if rows is valid else _probs(features, model, rows, len(teams))
        m = summarize(probs, _labels(rows, teams), tuple(teams))
        metrics[name] = {"n": m["n"], "accuracy": round(m["accuracy"], 4), "macro_f1": round(m["macro_f1"], 4),
                         "recall": {t: s["recall"] for t, s in m["per_team"].items()}}
    return {"method": "TF-IDF word 1-2-grams + char_wb 2-5-grams, logistic regression (scikit-learn)",
            "C": c, "valid_accuracy_by_C": tried, "features": int(x.shape[1]),
            "train_tickets": len(train), "train_tickets_available": n_train,
            "seconds": round(time.perf_counter() - start, 1), "metrics": metrics}
