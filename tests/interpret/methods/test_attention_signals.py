"""Received attention and rollout on patterns whose answers are known."""

import pytest
import torch

from ticketnet.interpret import attention_rollout, received_attention, rollout_to_pooled


def test_received_attention_of_a_uniform_pattern():
    assert torch.allclose(received_attention(torch.full((4, 6, 6), 1 / 6)), torch.full((4, 6), 1 / 6))
    with pytest.raises(ValueError):
        received_attention(torch.ones(4, 6, 5))


def test_received_attention_column_means():
    pattern = torch.tensor([[[1.0, 0.0], [1.0, 0.0]]])               # both queries read token 0
    assert received_attention(pattern).tolist() == [[1.0, 0.0]]


def test_rollout_of_identity_patterns_is_identity():
    eye = torch.eye(5).expand(2, 4, 5, 5)
    assert torch.allclose(attention_rollout(eye), torch.eye(5))
    assert torch.allclose(rollout_to_pooled(attention_rollout(eye)), torch.full((5,), 0.2))


def test_rollout_rows_sum_to_one_and_pooled_share_sums_to_one():
    patterns = torch.softmax(torch.randn(2, 4, 7, 7, generator=torch.Generator().manual_seed(0)), -1)
    r = attention_rollout(patterns)
    assert torch.allclose(r.sum(-1), torch.ones(7), atol=1e-6)
    assert rollout_to_pooled(r).sum().item() == pytest.approx(1.0, abs=1e-6)


def test_rollout_multiplies_later_blocks_on_the_left():
    w1 = torch.tensor([[0.0, 1.0], [0.0, 1.0]])                        # block 1: everyone reads token 1
    w2 = torch.tensor([[1.0, 0.0], [1.0, 0.0]])                        # block 2: everyone reads token 0
    # A1 = [[.5, .5], [0, 1]], A2 = [[1, 0], [.5, .5]], R = A2 A1
    r = attention_rollout(torch.stack([w1[None], w2[None]]))
    assert torch.allclose(r, torch.tensor([[0.5, 0.5], [0.25, 0.75]]))
