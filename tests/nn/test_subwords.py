"""Hashed character n-grams (fastText's) and the embedding that adds them to each word's vector."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from ticketnet.nn.subwords import SubwordEmbedding, char_ngrams, fnv1a, ngram_table


def test_fnv1a_is_the_32_bit_hash_fasttext_uses():
    assert fnv1a("") == 0x811C9DC5                      # the offset basis
    assert fnv1a("a") == 0xE40C292C and fnv1a("foobar") == 0xBF9CF968   # the published FNV-1a test vectors
    assert fnv1a("où") == fnv1a("où") != fnv1a("ou")   # by UTF-8 bytes


def test_char_ngrams_mark_the_words_boundaries_and_run_from_3_to_5():
    assert char_ngrams("where", 3, 3) == ["<wh", "whe", "her", "ere", "re>"]      # fastText's example
    grams = char_ngrams("where")
    assert grams[:5] == ["<wh", "whe", "her", "ere", "re>"] and "<whe" in grams and "where" in grams
    assert len(grams) == 5 + 4 + 3
    assert char_ngrams("a") == ["<a>"]


def test_the_table_gives_each_word_its_buckets_and_a_misspelling_most_of_them():
    table = ngram_table(["<pad>", "<unk>", "refund", "refnd", "parcel"], buckets=1000, skip=["<pad>", "<unk>"])
    assert table.shape == (5, 32) and not table[:2].any()
    assert int(table.max()) <= 1000 and int(table[2][table[2] > 0].min()) >= 1
    refund, refnd = (set(table[i][table[i] > 0].tolist()) for i in (2, 3))
    assert len(refund) == 6 + 5 + 4 and len(refund & refnd) >= 3     # <re, ref, <ref: the shared spelling
    assert not (refund & set(table[4][table[4] > 0].tolist())) - {0}  # nothing shared with an unrelated word
    with pytest.raises(ValueError, match="buckets"):
        ngram_table(["a"], buckets=0)


def test_a_known_word_adds_its_ngrams_mean_and_an_unknown_one_reads_them_alone():
    torch.manual_seed(0)
    words = ["<pad>", "<unk>", "refund", "parcel"]
    table = ngram_table(words, buckets=50, skip=words[:2])
    emb = SubwordEmbedding(nn.Embedding(4, 8, padding_idx=0), table, torch.tensor([True, True, True, False]), 50)
    out = emb(torch.tensor([[2, 3, 1, 0]]))[0]
    grams = lambda i: emb.grams.weight[table[i][table[i] > 0]].mean(0)          # noqa: E731
    torch.testing.assert_close(out[0], emb.word.weight[2] + grams(2))
    torch.testing.assert_close(out[1], grams(3))                                # not known: no word vector
    torch.testing.assert_close(out[2], emb.word.weight[1])                      # <unk>: no spelling
    torch.testing.assert_close(out[3], torch.zeros(8))                          # <pad>
    before = emb(torch.tensor([[2, 3]]))
    new = emb.extend(["refunds", "parcels"])
    assert new == [4, 5] and emb.weight.shape[0] == 6
    torch.testing.assert_close(emb(torch.tensor([[2, 3]])), before)             # the learnt rows are untouched
    after = emb(torch.tensor([[4]]))[0, 0]
    torch.testing.assert_close(after, emb.grams.weight[emb.table[4][emb.table[4] > 0]].mean(0))
    assert torch.cosine_similarity(after, grams(2), 0) > 0.5                   # "refunds" is spelt like "refund"
