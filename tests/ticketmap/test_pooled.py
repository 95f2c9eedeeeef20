"""The pooled vectors are the head's input: head(pooled) gives the router's logits, bit for bit, for whole splits."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.conftest import make_model
from ticketnet.nn.batching import batched_probs, length_chunks
from ticketnet.nn.transformer import pad_batch
from ticketnet.ticketmap import pooled_and_logits, pooled_of_texts


def _seqs(n: int, vocab: int, seed: int = 0) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [rng.integers(2, vocab, size=int(rng.integers(1, 40))).tolist() for _ in range(n)]


def test_the_head_of_the_pooled_vectors_is_the_models_logits_exactly():
    model = make_model(3, vocab=60, head_scale=4.0)
    seqs = _seqs(300, 60)
    pooled, logits = pooled_and_logits(model, seqs, batch_size=64)
    assert pooled.shape == (300, model.config.d) and logits.shape == (300, model.config.n_classes)
    with torch.inference_mode():
        assert torch.equal(model.head(torch.from_numpy(pooled)), torch.from_numpy(logits))
        # The model's own forward over the same padded batches, row by row in input order.
        expected = torch.empty(300, model.config.n_classes)
        for idx in length_chunks([len(s) for s in seqs], 64, max_tokens=2048):
            expected[idx] = model(*pad_batch([seqs[i] for i in idx]))
    assert torch.equal(torch.from_numpy(logits), expected)


def test_padding_does_not_change_a_tickets_pooled_vector():
    model = make_model(1, vocab=60)
    seqs = _seqs(40, 60, seed=2)
    alone = np.stack([pooled_and_logits(model, [s])[0][0] for s in seqs])       # each ticket unpadded
    batched, _ = pooled_and_logits(model, seqs, batch_size=40)
    np.testing.assert_allclose(batched, alone, rtol=0, atol=1e-5)


def test_the_shipped_routers_pooled_vectors_give_its_predictions_bit_for_bit(router, valid_rows):
    texts = [r["text"] for r in valid_rows]
    pooled, logits = pooled_of_texts(router, texts, workers=2)
    probs = batched_probs(router.model, [router.encode(t).ids for t in texts])
    assert torch.equal(torch.softmax(torch.from_numpy(logits), dim=-1), probs)
    with torch.inference_mode():
        assert torch.equal(router.model.head(torch.from_numpy(pooled)), torch.from_numpy(logits))


def test_a_model_in_training_mode_or_an_empty_ticket_is_refused():
    model = make_model(0)
    with pytest.raises(ValueError, match="every ticket needs at least one token"):
        pooled_and_logits(model, [[3, 4], []])
    with pytest.raises(ValueError, match="training mode"):
        pooled_and_logits(model.train(), [[3, 4]])
