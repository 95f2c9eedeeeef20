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
