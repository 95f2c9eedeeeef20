"""Length-sorted chunks: every index once, shortest first, bounded by count and by rows·n²."""

import pytest

from ticketnet.nn.batching import length_chunks


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


@pytest.mark.parametrize("size, cells", [(0, None), (4, 0)])
def test_bounds_below_one_are_refused(size, cells):
    with pytest.raises(ValueError, match="at least 1"):
        length_chunks([1, 2], size, cells)
