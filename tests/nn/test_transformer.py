"""TinyTransformer's shape, padding and truncation behaviour, and the lens against PyTorch on a random model."""

import pytest
import torch

from ticketnet.nn.attention import MultiHead
from ticketnet.nn.fast import SMALL_N, attention_eval
from ticketnet.lens.inspection import run_with_cache, torch_differences
from ticketnet.nn.transformer import TinyConfig, TinyTransformer, pad_batch


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return TinyTransformer(TinyConfig(vocab_size=60)).eval()


def test_default_config_is_the_lesson_model(model):
    c = model.config
    assert (c.d, c.h, c.n_blocks, c.d // c.h) == (64, 4, 2, 16)
    assert sum(p.numel() for p in model.blocks.layers[0].self_attn.parameters()) == 16_640


def test_lesson_snippet_works_as_written(model):
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    n = ids.shape[1]
    with torch.no_grad():
        h = model.embed(ids) + model.position(torch.arange(n))
        h = model.blocks.layers[0](h)
        block = model.blocks.layers[1]
        x = block.norm1(h)
        _, w = block.self_attn(x, x, x, average_attn_weights=False)
        _, ours = MultiHead.from_torch(block.self_attn)(x, x)
    assert w.shape == (1, 4, 5, 5)
    assert (ours - w).abs().max() < 1e-6


def test_padded_batch_equals_each_ticket_alone(model):
    seqs = [[5, 6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16], [17, 18, 19]]
    ids, is_pad = pad_batch(seqs)
    assert is_pad.sum(1).tolist() == [0, 2, 4]
    with torch.no_grad():
        batched = model(ids, is_pad)
        alone = torch.cat([model(torch.tensor([s])) for s in seqs])
    assert (batched - alone).abs().max() < 1e-5


def test_padding_token_content_is_ignored(model):
    ids, is_pad = pad_batch([[5, 6, 7, 8], [9, 10]])
    other = ids.masked_fill(is_pad, 33)
    with torch.no_grad():
        assert torch.equal(model(ids, is_pad), model(other, is_pad))


def test_too_long_and_empty_are_refused(model):
    with pytest.raises(ValueError, match="exceed the position table"):
        model(torch.ones(1, 257, dtype=torch.long))
    with pytest.raises(ValueError, match="at least one token"):
        model(torch.zeros(2, 3, dtype=torch.long))


def test_lens_matches_pytorch_on_a_padded_batch(model):
    ids, is_pad = pad_batch([[5, 6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16], [17, 18, 19]])
    with torch.no_grad():
        logits, cache = run_with_cache(model, ids, is_pad)
        diffs = torch_differences(model, ids, is_pad, cache, logits)
    assert set(diffs) >= {"blocks.0.attn.pattern", "blocks.1.resid_post", "logits"}
    assert max(diffs.values()) < 1e-5
    pattern = cache["blocks.1.attn.pattern"]
    assert pattern.shape == (3, 4, 7, 7)
    assert torch.allclose(pattern.sum(-1), torch.ones(3, 4, 7))
    assert (pattern[2, :, :, 3:] == 0).all()  # padded keys get exactly zero weight


def test_head_mask_switches_heads_off(model):
    ids = torch.tensor([[5, 6, 7, 8, 9]])
    with torch.no_grad():
        full, _ = run_with_cache(model, ids)
        same, _ = run_with_cache(model, ids, head_mask=torch.ones(2, 4))
        off, _ = run_with_cache(model, ids, head_mask=torch.tensor([[1.0, 1, 1, 1], [0, 1, 1, 1]]))
    assert torch.equal(full, same)
    assert not torch.allclose(full, off)


def test_lens_refuses_training_mode():
    m = TinyTransformer(TinyConfig(vocab_size=20))
    with pytest.raises(ValueError, match="eval mode"):
        run_with_cache(m, torch.tensor([[2, 3]]))


def test_eval_path_equals_pytorch_encoder_on_padded_batches(model):
    torch.manual_seed(1)
    for lengths in ([7, 5, 3], [9], [12, 12], [30, 1, 17], [SMALL_N + 1, 20], [100, 3, 64]):   # both kernels
        ids, is_pad = pad_batch([torch.randint(2, 60, (n,)).tolist() for n in lengths])
        with torch.no_grad():
            x = model.embeddings(ids)
            ours = model.encode_eval(x, is_pad)
            theirs = model.blocks(x, src_key_padding_mask=is_pad)
        real = ~is_pad
        assert (ours - theirs).abs().amax(-1)[real].max() < 1e-5, lengths


def test_eval_attention_refuses_a_boolean_mask(model):
    x = torch.zeros(1, 3, model.config.d)
    with pytest.raises(TypeError, match="additive"):
        attention_eval(model.blocks.layers[0], x, torch.zeros(1, 1, 1, 3, dtype=torch.bool))


def test_eval_path_has_gradients_and_training_uses_pytorch_layers(model):
    ids = torch.tensor([[5, 6, 7, 8]])
    x = model.embeddings(ids).detach().requires_grad_(True)
    model.forward_embeddings(x, torch.zeros(1, 4, dtype=torch.bool))[0, 0].backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    m = TinyTransformer(TinyConfig(vocab_size=60))
    torch.manual_seed(0)
    a = m(ids)
    torch.manual_seed(0)
    b = m.head(m.pool(m.blocks(m.embeddings(ids), src_key_padding_mask=torch.zeros(1, 4, dtype=torch.bool)),
                      torch.zeros(1, 4, dtype=torch.bool)))
    assert torch.equal(a, b)  # training mode: dropout and all, through nn.TransformerEncoder itself
