"""Rank agreement: Kendall τ, Spearman ρ, top-k overlap, the chance band and the disagreement lists."""

import math
import warnings

import pytest
import torch

from ticketnet.interpret import chance_band, disagreements, kendall_tau, kendall_taus, random_tau_baseline, spearman, top_k_overlap


def test_kendall_and_spearman_extremes():
    a = torch.tensor([0.1, 0.5, 0.3, 0.9])
    assert kendall_tau(a, a) == pytest.approx(1.0)
    assert kendall_tau(a, -a) == pytest.approx(-1.0)
    assert spearman(a, 2 * a + 1) == pytest.approx(1.0)
    assert spearman(a, -a) == pytest.approx(-1.0)


def test_constant_inputs_give_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(kendall_tau(torch.ones(4), torch.arange(4.0)))
        assert math.isnan(spearman(torch.arange(4.0), torch.zeros(4)))
        assert math.isnan(kendall_tau(torch.ones(1), torch.ones(1)))
    with pytest.raises(ValueError):
        kendall_tau(torch.ones(3), torch.ones(4))


def test_top_k_overlap_breaks_ties_by_position():
    a, b = torch.tensor([1.0, 1.0, 1.0, 0.0]), torch.tensor([0.0, 0.0, 1.0, 1.0])
    assert top_k_overlap(a, b, 2) == 0.0                               # {0, 1} against {2, 3}
    assert top_k_overlap(a, b, 3) == pytest.approx(2 / 3)              # {0, 1, 2} against {2, 3, 0}
    assert top_k_overlap(a, a, 9) == 1.0                               # k capped at n


def test_random_tau_baseline_is_centred_and_reproducible():
    effect = torch.arange(20.0)
    taus = random_tau_baseline(effect, n_draws=300, seed=3)
    assert taus.shape == (300,)
    assert abs(taus.mean().item()) < 0.05
    assert torch.equal(taus, random_tau_baseline(effect, n_draws=300, seed=3))


def test_disagreements_by_rank_percentile():
    signal = torch.tensor([0.4, 0.3, 0.2, 0.1])
    effect = torch.tensor([0.0, 0.1, 0.2, 0.3])
    d = disagreements(signal, effect, ["a", "b", "c", "d"], k=3)
    assert [p for p, *_ in d["high_attention_low_effect"]] == [0, 1]      # gaps 1 and 1/3; others are ≤ 0
    assert [p for p, *_ in d["low_attention_high_effect"]] == [3, 2]
    assert d["high_attention_low_effect"][0] == (0, "a", pytest.approx(0.4), 0.0)


def test_batched_kendall_taus_equal_the_single_ones():
    gen = torch.Generator().manual_seed(4)
    signals, effect = torch.rand(5, 9, generator=gen), torch.rand(9, generator=gen)
    signals[2] = 0.5                                                   # a constant row has no ranking
    signals[3, :4] = signals[3, 4]                                     # ties
    taus = kendall_taus(signals, effect)
    assert math.isnan(taus[2])
    for i in (0, 1, 3, 4):
        assert taus[i].item() == pytest.approx(kendall_tau(signals[i], effect), abs=1e-12)


@pytest.mark.parametrize("a, b, tau", [([0, 1], [0, 1], 1.0), ([0, 1], [1, 0], -1.0), ([0, 1], [5, 5], None)])
def test_kendall_tau_on_two_tokens(a, b, tau):
    # scipy's asymptotic p-value divides by n - 2: two tokens must not raise ZeroDivisionError.
    got = kendall_tau(a, b)
    assert (math.isnan(got) if tau is None else got == tau)
    rows = kendall_taus(torch.tensor([a], dtype=torch.float64), torch.tensor(b, dtype=torch.float64))
    assert (math.isnan(rows[0]) if tau is None else rows.tolist() == [tau])


def test_chance_band_and_its_verdicts():
    draws = torch.linspace(-1, 1, 201, dtype=torch.float64)
    band = chance_band(draws, coverage=0.9)
    assert (band.low, band.high, band.draws) == (pytest.approx(-0.9), pytest.approx(0.9), 201)
    assert [band.verdict(t) for t in (0.95, -0.95, 0.1, float("nan"))] == ["yes", "reversed", "no", "—"]
    assert chance_band(torch.full((5,), float("nan"), dtype=torch.float64)) is None   # no ranking at all
    with pytest.raises(ValueError, match="coverage"):
        chance_band(draws, coverage=1.0)


@pytest.mark.parametrize("n", [2, 3, 17, 64, 161])
@pytest.mark.parametrize("ties", [False, True])
def test_tau_b_rows_equal_scipys_kendalltau(n, ties):
    """Every row against scipy.stats.kendalltau itself, to 1e-12: without ties, with ties in both, constant rows."""
    import numpy as np
    from scipy import stats

    from ticketnet.interpret.metrics.agreement import tau_b_rows

    rng = np.random.default_rng(n)
    rows = rng.integers(0, 4, (30, n)).astype(float) if ties else rng.normal(size=(30, n))
    y = rng.integers(0, 3, n).astype(float) if ties else rng.normal(size=n)
    rows[5] = 1.0                                                       # constant: nan
    if ties and len(set(y)) < 2:
        y[0] += 1
    got = tau_b_rows(rows, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.array([stats.kendalltau(r, y).statistic for r in rows])
    assert np.array_equal(np.isnan(got), np.isnan(want)) and math.isnan(got[5])
    assert np.nanmax(np.abs(got - want)) <= 1e-12
    assert np.isnan(tau_b_rows(rows, np.ones(n))).all()                # a constant effect ranks nothing


@pytest.mark.parametrize("n", [2, 3, 17, 64])
@pytest.mark.parametrize("ties", [False, True])
def test_spearmans_equal_scipys_spearmanr(n, ties):
    """Every row against scipy.stats.spearmanr itself, to 1e-12: without ties, with ties, constant rows nan."""
    import numpy as np
    import torch
    from scipy import stats

    from ticketnet.interpret.metrics.agreement import spearman, spearmans

    rng = np.random.default_rng(n)
    rows = rng.integers(0, 4, (20, n)).astype(float) if ties else rng.normal(size=(20, n))
    y = rng.integers(0, 3, n).astype(float) if ties else rng.normal(size=n)
    rows[3] = 2.0
    if len(set(y)) < 2:
        y[0] += 1
    got = spearmans(torch.from_numpy(rows), torch.from_numpy(y)).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.array([stats.spearmanr(r, y).statistic for r in rows])
    assert np.array_equal(np.isnan(got), np.isnan(want)) and math.isnan(got[3])
    assert np.nanmax(np.abs(got - want)) <= 1e-12
    assert [spearman(torch.from_numpy(r), torch.from_numpy(y)) for r in rows[:2]] == pytest.approx(got[:2], abs=1e-12)
    assert torch.isnan(spearmans(torch.from_numpy(rows), torch.ones(n, dtype=torch.float64))).all()


def test_tau_b_rows_in_chunks_equal_one_pass(monkeypatch):
    import numpy as np

    from ticketnet.interpret.metrics import agreement

    rng = np.random.default_rng(7)
    rows, y = rng.normal(size=(13, 40)), rng.normal(size=40)
    whole = agreement.tau_b_rows(rows, y)
    monkeypatch.setattr(agreement, "PAIR_SIGNS_PER_CHUNK", 3 * 780)       # three rows of 780 pairs at a time
    assert np.array_equal(agreement.tau_b_rows(rows, y), whole)


def test_random_tau_baseline_equals_one_kendalltau_per_draw(monkeypatch):
    """The draws are the same torch.randperm orders as one scipy call per draw gave, to 1e-12, ranked without
    scipy (200 kendalltau calls were a third of interpreting a ticket)."""
    from scipy import stats

    effect = torch.randn(37, generator=torch.Generator().manual_seed(11), dtype=torch.float64)
    effect[3] = effect[4]                                               # a tie in the effect
    gen = torch.Generator().manual_seed(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.tensor([stats.kendalltau(torch.randperm(37, generator=gen).double().numpy(),
                                              effect.numpy()).statistic for _ in range(200)], dtype=torch.float64)

    def refuse(*args, **kwargs):
        raise AssertionError("random_tau_baseline called scipy.stats.kendalltau")

    monkeypatch.setattr(stats, "kendalltau", refuse)
    got = random_tau_baseline(effect, n_draws=200, seed=5)
    assert got.dtype == torch.float64 and got.shape == (200,)
    assert (got - want).abs().max().item() <= 1e-12
