"""Length-sorted chunks: every index once, shortest first, bounded by count, by rows·n² and by padded tokens."""

import pytest
import torch

from ticketnet.nn.batching import batched_probs, length_chunks
from ticketnet.nn.transformer import TinyConfig, TinyTransformer


def test_chunks_are_length_sorted_and_cover_every_index_once():
    lengths = [5, 3, 9, 3, 1, 7]
    chunks = length_chunks(lengths, 4)
    assert chunks == [[4, 1, 3, 0], [5, 2]]                  # ties keep input order
    assert length_chunks(lengths, 4, max_cells=10**9) == chunks


def test_cells_bound_the_chunks_of_long_tickets():
    lengths = [10] * 300 + [100] * 30 + [400]
    chunks = length_chunks(lengths, 256, max_cells=256 * 20 * 20)
    assert sorted(i for c in chunks for i in c) == list(range(len(lengths)))
    for c in chunks:
        n = max(lengths[i] for i in c)
        assert len(c) <= 256 and (len(c) * n * n <= 256 * 20 * 20 or len(c) == 1)
    assert [len(c) for c in chunks[:2]] == [256, 44]          # short tickets: full chunks
    assert {len(c) for c in chunks if lengths[c[0]] == 100} == {10}   # 10 · 100² = 100,000 cells ≤ 102,400
    assert chunks[-1] == [330]                                 # longer than √max_cells: alone


def test_tokens_bound_the_padded_size_of_every_chunk():
    lengths = [4] * 100 + [30] * 20 + [600]
    chunks = length_chunks(lengths, 256, max_tokens=120)
    assert sorted(i for c in chunks for i in c) == list(range(len(lengths)))
    assert [len(c) for c in chunks] == [30, 30, 30, 10, 4, 4, 4, 4, 4, 1]   # 30 · 4 and 4 · 30 tokens
    for c in chunks[:-1]:
        assert len(c) * max(lengths[i] for i in c) <= 120
    assert chunks[-1] == [120]                                  # over the bound on its own: alone


def test_routing_in_token_bounded_chunks_equals_one_ticket_at_a_time():
    torch.manual_seed(0)
    model = TinyTransformer(TinyConfig(vocab_size=50, max_len=40)).eval()
    gen = torch.Generator().manual_seed(1)
    seqs = [torch.randint(2, 50, (int(n),), generator=gen).tolist()
            for n in torch.randint(1, 40, (60,), generator=gen)]
    together = batched_probs(model, seqs, batch_size=256, max_tokens=64)
    with torch.inference_mode():
        alone = torch.cat([torch.softmax(model(torch.tensor([s])), -1) for s in seqs])
    torch.testing.assert_close(together, alone, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("size, cells, tokens", [(0, None, None), (4, 0, None), (4, None, 0)])
def test_bounds_below_one_are_refused(size, cells, tokens):
    with pytest.raises(ValueError, match="at least 1"):
        length_chunks([1, 2], size, cells, tokens)
