"""The bench's routing-policy case runs on the shipped router's stored predictions and reports every part."""

from __future__ import annotations

from ticketnet.bench.cases import POLICY_TARGET_S, policy_redraw


def test_policy_redraw_times_each_part_against_the_target(artifacts):
    r = policy_redraw(artifacts.weights, artifacts.data, repeats=1, resamples=50)
    assert (r["valid"], r["test"], r["resamples"]) == (1500, 1500, 50)
    assert set(r["seconds"]) == {"thresholds", "conformal_lac", "conformal_aps", "curves", "all"}
    assert all(v > 0 for v in r["seconds"].values())
    assert r["seconds"]["all"] >= max(v for k, v in r["seconds"].items() if k != "all") * 0.5
    assert r["target_s"] == POLICY_TARGET_S == 0.3
    assert r["ratio_to_target"] == r["seconds"]["all"] / 0.3
