"""Running from the middle of the model: with no edit, `run_from_block` is the lens's own run; edits land where asked."""

import pytest
import torch

from tests.conftest import make_model
from ticketnet.lens.inspection import act_name, finish_blocks, head_outputs, run_from_block, run_with_cache
from ticketnet.nn.transformer import pad_batch


@pytest.fixture(scope="module")
def model():
    return make_model(3, head_scale=4)


def test_no_edit_reproduces_the_run_from_every_block(model):
    ids, is_pad = pad_batch([[3, 4, 5, 6, 7], [8, 9, 10]])
    with torch.inference_mode():
        logits, cache = run_with_cache(model, ids, is_pad)
        for b in range(2):
            again = run_from_block(model, cache[act_name("resid_pre", b)], b, is_pad)
            assert (again - logits).abs().max() <= 1e-5
        assert (finish_blocks(model, cache[act_name("resid_post", 1)], 2, is_pad) - logits).abs().max() <= 1e-5


def test_head_outputs_are_pattern_times_values_and_zeroing_one_matches_head_mask(model):
    ids = torch.tensor([[3, 4, 5, 6, 7, 9]])
    with torch.inference_mode():
        _, cache = run_with_cache(model, ids)
        z = head_outputs(model, cache, 1)                             # (1, h, n, d_k)
        assert z.shape == (1, 4, 6, 4)
        where = torch.zeros(1, 4, 6, dtype=torch.bool)
        where[:, 2] = True
        zeroed = run_from_block(model, cache[act_name("resid_pre", 1)], 1, z=torch.zeros_like(z), z_where=where)
        mask = torch.ones(2, 4)
        mask[1, 2] = 0
        masked, _ = run_with_cache(model, ids, head_mask=mask)
    assert (zeroed - masked).abs().max() <= 1e-5


def test_a_cut_edge_equals_the_renormalised_pattern_and_refusals_explain(model):
    ids = torch.tensor([[3, 4, 5, 6]])
    with torch.inference_mode():
        _, cache = run_with_cache(model, ids)
        x = cache[act_name("resid_pre", 0)]
        cut = torch.zeros(1, 4, 4, 4)
        cut[0, 1, 2, 3] = float("-inf")
        by_mask = run_from_block(model, x, 0, mask=cut)
        p = cache[act_name("pattern", 0)].clone()
        row = p[0, 1, 2].clone()
        row[3] = 0
        p[0, 1, 2] = row / row.sum()
        by_pattern = run_from_block(model, x, 0, pattern=p)
    assert (by_mask - by_pattern).abs().max() <= 1e-5
    with pytest.raises(ValueError, match="block must be"):
        run_from_block(model, x, 5)
    with pytest.raises(ValueError, match="go together"):
        run_from_block(model, x, 0, z=torch.zeros(1, 4, 4, 4))
    with pytest.raises(ValueError, match="not both"):
        run_from_block(model, x, 0, mask=cut, pattern=p)
