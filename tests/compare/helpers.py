"""Hand-built routed tables (routed_table's columns) for the compare tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def table(ids, team, predicted, confidence, teams, pattern=None, style=None) -> pd.DataFrame:
    """A routed table: the predicted team gets `confidence`, the other teams share the rest evenly."""
    df = pd.DataFrame({"ticket_id": list(ids), "text": [f"ticket {i}" for i in ids], "team": list(team),
                       "predicted": list(predicted), "confidence": np.asarray(confidence, dtype=np.float64),
                       "tokens": 5, "pattern": list(pattern) if pattern is not None else [""] * len(ids)})
    df["correct"] = df["team"].eq(df["predicted"])
    df["truncated"] = False
    rest = (1 - df["confidence"]) / (len(teams) - 1)
    for t in teams:
        df[f"p_{t}"] = np.where(df["predicted"].eq(t), df["confidence"], rest)
    if style is not None:
        df["style"] = list(style)
    return df


def random_pair(n: int, teams, seed: int, accuracy_a: float = 0.8, accuracy_b: float = 0.85):
    """Two routers' tables of the same n tickets: each right with its accuracy, else a random other team."""
    rng = np.random.default_rng(seed)
    teams = list(teams)
    truth = rng.choice(teams, size=n)
    ids = [f"T-{i:05d}" for i in range(n)]
    out = []
    for acc in (accuracy_a, accuracy_b):
        right = rng.random(n) < acc
        wrong = [rng.choice([t for t in teams if t != x]) for x in truth]
        pred = np.where(right, truth, wrong)
        conf = np.round(rng.uniform(1 / len(teams) + 0.01, 1.0, n), 4)
        out.append(table(ids, truth, pred, conf, teams))
    return out[0], out[1]
