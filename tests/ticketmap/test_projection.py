"""The map's coordinates are deterministic: the same seed gives the same PCA bits and the same UMAP layout."""

from __future__ import annotations

import numpy as np
import pytest

from ticketnet.ticketmap import MAP_SEED, project, seeded_sample

# Same seed, same input, same process or another: UMAP's seeded layout has matched bit for bit here; the tolerance
# allows only for float32 summation order differing between numba builds.
UMAP_ATOL = 1e-4


def _clusters(n: int = 240, d: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, size=n)
    centres = rng.normal(scale=6.0, size=(4, d))
    return (centres[labels] + rng.normal(size=(n, d))).astype(np.float32), labels


def test_the_seeded_sample_is_fixed_sorted_and_only_cuts_what_is_over_the_limit():
    assert np.array_equal(seeded_sample(50, 100), np.arange(50))
    a, b = seeded_sample(60_000, 20_000), seeded_sample(60_000, 20_000)
    assert np.array_equal(a, b) and len(np.unique(a)) == 20_000 and (np.diff(a) > 0).all()
    assert not np.array_equal(a, seeded_sample(60_000, 20_000, seed=MAP_SEED + 1))
    # The stable PCG64 stream: these indices are the same on every machine and NumPy release.
    expected = np.sort(np.random.default_rng(0).choice(1_000, 5, replace=False))
    assert seeded_sample(1_000, 5, seed=0).tolist() == expected.tolist()
    with pytest.raises(ValueError, match="at least 1"):
        seeded_sample(10, 0)


def test_pca_is_bitwise_the_same_for_the_same_input():
    x, _ = _clusters()
    a, b = project(x, "PCA"), project(x.copy(), "PCA")
    assert a.dtype == np.float32 and a.shape == (240, 2)
    assert np.array_equal(a, b)
    # The first component carries the most variance of any direction: the projection is PCA's.
    assert a[:, 0].var() >= a[:, 1].var()


def test_umap_is_the_same_for_the_same_seed_and_separates_clusters():
    x, labels = _clusters()
    a, b = project(x, "UMAP", seed=3), project(x, "UMAP", seed=3)
    np.testing.assert_allclose(a, b, rtol=0, atol=UMAP_ATOL)
    other = project(x, "UMAP", seed=4)
    assert not np.allclose(a, other, atol=UMAP_ATOL)
    # Each cluster's points lie nearer their own centre in the map than the other clusters' centres.
    centres = np.stack([a[labels == c].mean(axis=0) for c in range(4)])
    nearest_centre = np.linalg.norm(a[:, None] - centres[None], axis=2).argmin(axis=1)
    assert (nearest_centre == labels).mean() > 0.95


def test_tiny_inputs_and_unknown_projections():
    assert project(np.zeros((1, 8), np.float32), "UMAP").shape == (1, 2)
    assert project(np.eye(6, 8, dtype=np.float32), "UMAP").shape == (6, 2)
    with pytest.raises(ValueError, match="unknown projection"):
        project(np.zeros((5, 2)), "tSNE")
