"""Two-dimensional projections of the pooled vectors (PCA, seeded UMAP) and the seeded sample of a large input."""

from __future__ import annotations

import numpy as np

MAP_SEED = 20270127              # the map's fixed seed: the sample of a large split and UMAP's random_state
MAP_LIMIT = 20_000               # tickets per map: a larger split or scan is cut to a seeded sample of this many
PROJECTIONS = ("PCA", "UMAP")
# UMAP's own defaults, stated here because the map's shape depends on them: 15 neighbours balance local and global
# structure; min_dist 0.1 lets a team's tickets pack tightly without collapsing onto one point.
UMAP_NEIGHBOURS = 15
UMAP_MIN_DIST = 0.1
UMAP_METRIC = "euclidean"        # the head is linear in the pooled vector: euclidean distance bounds a logit change


def seeded_sample(n: int, limit: int = MAP_LIMIT, seed: int = MAP_SEED) -> np.ndarray:
    """Indices of the tickets a map of `n` tickets is drawn on: all of them (0..n-1) up to `limit`, else `limit` of
    them drawn without replacement by a NumPy generator seeded with `seed`, in ascending order. Same arguments,
    same indices, on any machine (PCG64 is NumPy's stable default bit generator)."""
    if limit < 1:
        raise ValueError(f"the map's limit must be at least 1 ticket, got {limit}")
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))


def pca_2d(vectors: np.ndarray) -> np.ndarray:
    """The first two principal components (N, 2), float32, fitted on `vectors` themselves. The full LAPACK SVD (no
    randomised solver), each component's sign fixed by scikit-learn's svd_flip: the same input gives the same bits."""
    from sklearn.decomposition import PCA

    x = np.asarray(vectors, dtype=np.float64)
    if len(x) < 2:
        return np.zeros((len(x), 2), dtype=np.float32)
    return PCA(n_components=2, svd_solver="full").fit_transform(x).astype(np.float32)


def umap_2d(vectors: np.ndarray, seed: int = MAP_SEED, n_neighbors: int = UMAP_NEIGHBOURS,
            min_dist: float = UMAP_MIN_DIST) -> np.ndarray:
    """UMAP (umap-learn) of `vectors` to 2-D (N, 2), float32, fitted on `vectors` themselves with `random_state=seed`.

    A seeded UMAP runs its layout on one thread (umap-learn makes the optimisation sequential so that the seed fixes
    the result; n_jobs=1 says so instead of a warning), so it is slower than an unseeded one on several cores. With
    fewer tickets than neighbours, the neighbours are cut to N - 1; under 4 tickets, where UMAP's spectral start
    fails, the points are laid out by PCA."""
    x = np.asarray(vectors, dtype=np.float32)
    if len(x) < 4:
        return pca_2d(x)
    import umap

    reducer = umap.UMAP(n_components=2, n_neighbors=min(n_neighbors, len(x) - 1), min_dist=min_dist,
                        metric=UMAP_METRIC, random_state=seed, n_jobs=1)
    return np.asarray(reducer.fit_transform(x), dtype=np.float32)


def project(vectors: np.ndarray, method: str, seed: int = MAP_SEED) -> np.ndarray:
    """`vectors` (N, d) projected to (N, 2) by "PCA" or "UMAP"."""
    if method == "PCA":
        return pca_2d(vectors)
    if method == "UMAP":
        return umap_2d(vectors, seed)
    raise ValueError(f"unknown projection {method!r}; expected one of {', '.join(PROJECTIONS)}")
