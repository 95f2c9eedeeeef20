"""The nearest training tickets are exact: the same indices, order and distances as comparing every pair."""

from __future__ import annotations

import numpy as np
import pytest

from ticketnet.ticketmap import nearest
from ticketnet.ticketmap.neighbours import QUERY_CHUNK


def brute_force(train: np.ndarray, queries: np.ndarray, k: int, exclude=None):
    idx, dist = [], []
    for q, query in enumerate(queries):
        d = np.sqrt(((train.astype(np.float64) - query.astype(np.float64)) ** 2).sum(axis=1))
        order = [i for i in np.lexsort((np.arange(len(train)), d)) if exclude is None or i != exclude[q]][:k]
        idx.append(order)
        dist.append(d[order])
    return np.array(idx), np.array(dist)


def test_nearest_equals_brute_force_with_duplicates_and_ties():
    rng = np.random.default_rng(7)
    train = rng.normal(size=(3_000, 16)).astype(np.float32)
    train[100:130] = train[5]                          # 31 identical vectors: ties broken by the lower index
    train[2_000] = train[7] + 1e-7                     # a near-duplicate
    queries = np.concatenate([rng.normal(size=(QUERY_CHUNK + 40, 16)), train[[5, 7, 2_999]]]).astype(np.float32)
    idx, dist = nearest(train, queries, k=10)
    want_idx, want_dist = brute_force(train, queries, 10)
    assert np.array_equal(idx, want_idx)
    assert np.array_equal(dist, want_dist)
    assert idx[-3].tolist() == [5, *range(100, 109)]  # a query on the tied block: the lowest indices, in order


def test_a_training_ticket_is_not_its_own_neighbour():
    rng = np.random.default_rng(1)
    train = rng.normal(size=(500, 8))
    idx, dist = nearest(train, train[[3, 42]], k=5, exclude=[3, 42])
    want_idx, want_dist = brute_force(train, train[[3, 42]], 5, exclude=[3, 42])
    assert np.array_equal(idx, want_idx) and np.array_equal(dist, want_dist)
    assert 3 not in idx[0] and 42 not in idx[1] and (dist > 0).all()


def test_the_shipped_training_split_matches_brute_force(router, artifacts):
    from ticketnet.data.tickets import load_split
    from ticketnet.ticketmap import pooled_of_texts

    rows = load_split(artifacts.data / "train.csv")[:8_000]
    vectors, _ = pooled_of_texts(router, [r["text"] for r in rows], workers=2)
    queries = vectors[[0, 17, 4_000]] + 0.01
    idx, dist = nearest(vectors, queries)
    want_idx, want_dist = brute_force(vectors, queries, 10)
    assert np.array_equal(idx, want_idx) and np.array_equal(dist, want_dist)


def test_mismatched_widths_are_refused():
    with pytest.raises(ValueError, match="width 3"):
        nearest(np.zeros((5, 4)), np.zeros((1, 3)))
