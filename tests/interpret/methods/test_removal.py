"""One-token removal: the batched variants, probability drops and total variation, worked out by hand."""

import pytest
import torch

from tests.conftest import P_WITH, P_WITHOUT, TICKET, KeywordModel, make_model
from ticketnet.interpret import counterfactual_batch, counterfactual_probs, probability_drop, total_variation


def test_counterfactual_batch_by_hand():
    ids, is_pad = counterfactual_batch(torch.tensor([5, 6, 7]))
    assert ids.tolist() == [[5, 6, 7], [6, 7, 0], [5, 7, 0], [5, 6, 0], [1, 6, 7], [5, 1, 7], [5, 6, 1]]
    assert is_pad.tolist() == [[False] * 3] + [[False, False, True]] * 3 + [[False] * 3] * 3


@pytest.mark.parametrize("bad", [torch.tensor([5]), torch.tensor([[5, 6]]), torch.tensor([5, 0, 6]),
                                 torch.tensor([5.0, 6.0])])
def test_counterfactual_batch_refuses_bad_tickets(bad):
    with pytest.raises(ValueError):
        counterfactual_batch(bad)


def test_one_token_model_removal_ranks_the_keyword_first():
    model = KeywordModel().eval()
    cf = counterfactual_probs(model, TICKET)
    assert model.calls == 1                                            # one batched pass
    drop = probability_drop(cf.base, cf.removed, target=0)
    assert int(drop.argmax()) == 2
    assert drop[2].item() == pytest.approx(P_WITH - P_WITHOUT, abs=1e-6)
    assert torch.all(drop[torch.arange(10) != 2] == 0)
    assert probability_drop(cf.base, cf.replaced, 0).tolist() == drop.tolist()
    tv = total_variation(cf.base, cf.removed)
    assert tv[2].item() == pytest.approx(P_WITH - P_WITHOUT, abs=1e-6)   # only team 0 gained, so TV = its change
    assert torch.all(tv[torch.arange(10) != 2] == 0)


def test_batched_counterfactuals_equal_each_variant_alone():
    model = make_model()
    ids = torch.randint(2, 50, (12,), generator=torch.Generator().manual_seed(1))
    cf = counterfactual_probs(model, ids)
    alone = lambda seq: torch.softmax(model(seq[None]), -1)[0]
    with torch.inference_mode():
        assert (cf.base - alone(ids)).abs().max() <= 1e-6
        for i in range(12):
            assert (cf.removed[i] - alone(torch.cat([ids[:i], ids[i + 1:]]))).abs().max() <= 1e-6
            assert (cf.replaced[i] - alone(torch.where(torch.arange(12) == i, 1, ids))).abs().max() <= 1e-6


def test_probability_drop_checks_shapes():
    with pytest.raises(ValueError):
        probability_drop(torch.ones(5), torch.ones(3, 4), 0)
    with pytest.raises(ValueError):
        probability_drop(torch.ones(5), torch.ones(3, 5), 5)


def test_eval_mode_is_required():
    with pytest.raises(ValueError, match="eval"):
        counterfactual_probs(make_model().train(), torch.tensor([3, 4]))
