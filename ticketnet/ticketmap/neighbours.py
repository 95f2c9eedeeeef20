"""Exact nearest training tickets in the pooled space: euclidean distance, float64, chunked matrix products."""

from __future__ import annotations

import numpy as np

NEIGHBOURS = 10
QUERY_CHUNK = 128            # queries per matrix product: 128 x 60,000 float64 distances are 61 MB
SPARE = 8                    # candidates beyond k re-ranked by their exact distance, so rounding cannot reorder


def nearest(train: np.ndarray, queries: np.ndarray, k: int = NEIGHBOURS,
            exclude: list[int | None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(indices (Q, k) into `train`, euclidean distances (Q, k)) of each query's k nearest training vectors, nearest
    first, ties broken by the lower index; exact, the same as comparing every pair.

    Euclidean, not cosine: the head is linear in the pooled vector (logits = W p + b), so two tickets at distance r
    differ in every logit by at most ||W||·r: near means routed alike. Cosine would ignore the vector's length,
    which is part of how sure the head is. `exclude[q]`: a training index query q may not return (the ticket itself when
    it is a training ticket). Candidates come from |a|² + |b|² − 2a·b in float64 over chunks of queries; the k +
    SPARE best are re-ranked (with every vector within rounding of the last of them) by their directly computed distance."""
    train = np.asarray(train, dtype=np.float64)
    queries = np.atleast_2d(np.asarray(queries, dtype=np.float64))
    if train.ndim != 2 or queries.shape[1] != train.shape[1]:
        raise ValueError(f"vectors of width {queries.shape[1]} cannot be compared with training vectors of shape "
                         f"{train.shape}")
    exclude = [None] * len(queries) if exclude is None else list(exclude)
    if len(exclude) != len(queries):
        raise ValueError(f"exclude has {len(exclude)} entries for {len(queries)} queries")
    k = min(k, len(train) - (1 if any(e is not None for e in exclude) else 0))
    if k < 1:
        return np.zeros((len(queries), 0), dtype=np.int64), np.zeros((len(queries), 0))
    take = min(len(train), k + SPARE)
    squares = np.einsum("ij,ij->i", train, train)
    out_idx = np.empty((len(queries), k), dtype=np.int64)
    out_dist = np.empty((len(queries), k))
    for start in range(0, len(queries), QUERY_CHUNK):
        q = queries[start:start + QUERY_CHUNK]
        q_squares = np.einsum("ij,ij->i", q, q)
        d2 = squares[None, :] - 2.0 * (q @ train.T) + q_squares[:, None]
        tolerance = 1e-9 * (squares.max() + q_squares)              # far above float64 rounding of these sums
        for row in range(len(q)):
            skip = exclude[start + row]
            if skip is not None:
                d2[row, skip] = np.inf
            # Every vector within rounding of the take-th candidate joins it, so tied duplicates are all ranked.
            bound = np.partition(d2[row], take - 1)[take - 1] + tolerance[row]
            cand = np.flatnonzero(d2[row] <= bound)
            if skip is not None:
                cand = cand[cand != skip]
            exact = np.sqrt(((train[cand] - q[row]) ** 2).sum(axis=1))
            order = np.lexsort((cand, exact))[:k]
            out_idx[start + row], out_dist[start + row] = cand[order], exact[order]
    return out_idx, out_dist
