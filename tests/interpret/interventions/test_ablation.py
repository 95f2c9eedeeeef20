"""Per-ticket head ablation: zero equals the lens's head_mask, mean puts the split mean in place, a dead head does nothing."""

import pytest
import torch

from tests.conftest import make_model
from ticketnet.interpret.interventions.ablation import head_ablation, head_means
from ticketnet.interpret.interventions.units import logit_difference
from ticketnet.lens.inspection import run_with_cache


def test_zero_ablation_equals_head_mask_and_mean_ablation_uses_the_means():
    model = make_model(1, head_scale=4)
    ids = torch.tensor([3, 4, 5, 6, 7])
    df = head_ablation(model, ids, target=2)
    assert len(df) == 8 and list(df.columns[:3]) == ["block", "head", "mode"]
    with torch.inference_mode():
        base, _ = run_with_cache(model, ids[None])
        for _, row in df.iterrows():
            mask = torch.ones(2, 4)
            mask[row["block"] - 1, row["head"] - 1] = 0
            off, _ = run_with_cache(model, ids[None], head_mask=mask)
            want = float(logit_difference(base[0], 2) - logit_difference(off[0], 2))
            assert row.support_logit_diff == pytest.approx(want, abs=1e-5)
    means = head_means(model, [[3, 4, 5], [6, 7, 8, 9]])
    assert means.shape == (2, 4, 4)
    zero_means = head_ablation(model, ids, 2, "mean", torch.zeros_like(means))
    assert (zero_means.support_logit_diff - df.support_logit_diff).abs().max() <= 1e-6   # mean 0 is zero ablation
    with pytest.raises(ValueError, match="head_means"):
        head_ablation(model, ids, 2, "mean")
    with pytest.raises(ValueError, match="mode"):
        head_ablation(model, ids, 2, "half")


def test_a_head_that_writes_nothing_changes_nothing():
    model = make_model(0)
    with torch.no_grad():
        model.blocks.layers[1].self_attn.out_proj.weight[:, 4:8] = 0.0
    df = head_ablation(model, torch.tensor([3, 4, 5]), 0)
    dead = df[(df["block"] == 2) & (df["head"] == 2)].iloc[0]
    assert abs(dead.support_logit_diff) <= 1e-6 and abs(dead.support_prob) <= 1e-7


def test_head_means_by_hand_on_one_ticket():
    model = make_model(2)
    from ticketnet.lens.inspection import head_outputs
    with torch.inference_mode():
        _, cache = run_with_cache(model, torch.tensor([[4, 5, 6]]))
        want = head_outputs(model, cache, 1)[0].mean(1)                # (h, d_k)
    assert (head_means(model, [[4, 5, 6]])[1] - want).abs().max() <= 1e-6
