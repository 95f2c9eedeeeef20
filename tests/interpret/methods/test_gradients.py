"""Integrated gradients add up (and refine until they do); gradient × input inside inference mode."""

import pytest
import torch

from tests.conftest import make_model
from ticketnet.interpret import gradient_x_input, integrated_gradients


def test_integrated_gradients_completeness():
    model = make_model()
    ids = torch.randint(2, 50, (9,), generator=torch.Generator().manual_seed(2))
    attr, delta, steps, change = integrated_gradients(model, ids, target=3, steps=64)
    with torch.inference_mode():
        f = lambda x: torch.softmax(model(x[None], torch.zeros(1, 9, dtype=torch.bool)), -1)[0, 3].item()
        gap = f(ids) - f(torch.zeros_like(ids))
    assert attr.shape == (9,) and steps >= 64
    assert change == pytest.approx(gap, abs=1e-6)
    assert abs(attr.sum().item() - gap) <= abs(delta) + 1e-6
    assert abs(delta) <= 0.01 * abs(gap)


def test_integrated_gradients_refine_until_they_add_up(router):
    # 'my card was charged twice': at a fixed 4 steps the shipped router's attributions miss 72 % of a 0.93 change
    # (16 steps add up to 0.13 %); the refinement doubles the steps until the gap is under 1 % of the change.
    ids = torch.tensor(router.encode("my card was charged twice").ids)
    target = int(router.probabilities(ids[None], torch.zeros(1, ids.numel(), dtype=torch.bool))[0].argmax())
    coarse = integrated_gradients(router.model, ids, target, steps=4, max_steps=4)
    fine = integrated_gradients(router.model, ids, target, steps=4)
    assert coarse.steps == 4 and fine.steps > 4 and coarse.relative_gap > 0.4
    assert fine.relative_gap <= 0.01 < coarse.relative_gap
    assert fine.change == pytest.approx(coarse.change, abs=1e-5)      # the same f(x) − f(baseline)
    with pytest.raises(ValueError, match="steps"):
        integrated_gradients(router.model, ids, target, steps=64, max_steps=32)


def test_gradient_x_input_works_inside_inference_mode():
    model = make_model()
    with torch.inference_mode():
        ids = torch.tensor([4, 9, 16, 25])                             # an inference tensor
        gxi = gradient_x_input(model, ids, target=1)
    assert gxi.shape == (4,) and torch.isfinite(gxi).all() and gxi.abs().sum() > 0


def test_attributions_at_the_token_vectors_equal_captums_layer_methods_on_the_embedding(router, valid_rows):
    # The same path as Captum's layer methods on `embed` (which hook the layer), computed without a hook: equal to
    # the last float on the shipped router, and the model it ran on holds no hook afterwards or during.
    import copy

    from captum.attr import LayerGradientXActivation, LayerIntegratedGradients

    reference = copy.deepcopy(router.model)

    def probs(ids):
        return torch.softmax(reference(ids, torch.zeros_like(ids, dtype=torch.bool)), -1)

    for row in valid_rows[:12]:
        ids = torch.tensor(router.encode(row["text"]).ids)
        ours = integrated_gradients(router.model, ids, 2, steps=32, max_steps=32)
        ref, delta = LayerIntegratedGradients(probs, reference.embed).attribute(
            ids[None], baselines=torch.zeros_like(ids[None]), target=2, n_steps=32, return_convergence_delta=True)
        torch.testing.assert_close(ours.attributions, ref[0].sum(-1).detach(), rtol=0, atol=1e-7)
        assert ours.delta == pytest.approx(float(delta[0]), abs=1e-7)
        gxi = LayerGradientXActivation(probs, reference.embed).attribute(ids[None], target=2)[0].sum(-1).detach()
        torch.testing.assert_close(gradient_x_input(router.model, ids, 2), gxi, rtol=0, atol=1e-7)
    assert not router.model.embed._forward_hooks and not router.model.embed._forward_pre_hooks


def test_integrated_gradients_start_at_32_steps_and_double_where_they_do_not_add_up(router, valid_rows):
    used = []
    for row in valid_rows[:40]:
        ids = torch.tensor(router.encode(row["text"]).ids)
        target = int(router.probabilities(ids[None], torch.zeros(1, ids.numel(), dtype=torch.bool))[0].argmax())
        ig = integrated_gradients(router.model, ids, target)
        assert ig.relative_gap <= 0.01 or abs(ig.delta) <= 1e-6
        used.append(ig.steps)
    assert set(used) <= {32, 64, 128} and used.count(32) >= 36


def test_a_ticket_longer_than_the_position_table_is_refused_in_words(router):
    # The model's own check (`add_positions`), not an IndexError from the position table.
    ids = torch.full((router.model.config.max_len + 1,), 5, dtype=torch.long)
    for attribute in (lambda: integrated_gradients(router.model, ids, 0), lambda: gradient_x_input(router.model, ids, 0)):
        with pytest.raises(ValueError, match="exceed the position table"):
            attribute()
