"""Both router kinds meet one interface: the same names, shapes and meanings, checked on the shipped routers."""

from __future__ import annotations

import pytest
import torch

from ticketnet.catalog import weights_in
from ticketnet.interface import TicketRouter
from ticketnet.loading import load_router
from ticketnet.paths import ROOT

TEXT = "I was charged twice for order LF-482913, please refund the duplicate payment. Thanks!"


@pytest.fixture(scope="module", params=["tiny", "encoder"])
def any_router(request, router):
    if request.param == "tiny":
        return router
    return load_router(weights_in(ROOT / "weights" / "larkfield-minilm"))


def test_both_kinds_are_ticket_routers_with_their_units(router):
    encoder = load_router(weights_in(ROOT / "weights" / "larkfield-minilm"))
    for r, kind, unit, norm_first in ((router, "tiny", "token", True), (encoder, "encoder", "piece", False)):
        assert isinstance(r, TicketRouter)
        assert (r.kind, r.unit, r.norm_first) == (kind, unit, norm_first)
    assert (router.n_blocks, router.n_heads) == (2, 4)
    assert (encoder.n_blocks, encoder.n_heads) == (6, 12)


def test_inspect_gives_every_heads_pattern_and_the_routers_own_probabilities(any_router):
    r = any_router
    ins = r.inspect(TEXT)
    n = len(ins.encoded.ids)
    assert ins.patterns.shape == (r.n_blocks, r.n_heads, n, n)
    torch.testing.assert_close(ins.patterns.sum(-1), torch.ones(r.n_blocks, r.n_heads, n))
    torch.testing.assert_close(ins.probs, r.predict_encoded([ins.encoded])[0], atol=1e-5, rtol=0)
    assert r.teams[ins.predicted] == "payments"
    assert len(ins.tokens) == n


def test_word_groups_cover_every_position_once_in_reading_order(any_router):
    r = any_router
    enc = r.encode(TEXT)
    groups = r.word_groups(enc)
    assert [i for g in groups for i in g] == list(range(len(enc.ids)))
    ins = r.inspect(TEXT)
    assert ins.groups == groups and len(ins.words) == len(groups)
    words = ins.word_patterns(0)                                   # (h, words, words), rows still sum to 1
    assert words.shape == (r.n_heads, len(groups), len(groups))
    torch.testing.assert_close(words.sum(-1), torch.ones(r.n_heads, len(groups)))
    if r.kind == "encoder":                                       # a word of several pieces: "LF-482913"
        assert max(len(g) for g in groups) > 1 and len(groups) < len(enc.ids)
    else:
        assert ins.words == ins.tokens


def test_the_from_scratch_copy_rereads_each_blocks_input_into_the_cached_pattern(any_router):
    r = any_router
    ids, is_pad = r.batch([r.encode(TEXT)])
    with torch.inference_mode():
        logits, cache = r.run_with_cache(ids, is_pad)
        for block in range(r.n_blocks):
            x = r.attention_input(cache, block)
            out, pattern = r.attention(block)(x, x, None)
            torch.testing.assert_close(pattern, cache[f"blocks.{block}.attn.pattern"], atol=1e-6, rtol=0)
    torch.testing.assert_close(torch.softmax(logits, -1), r.predict_encoded([r.encode(TEXT)]), atol=1e-5, rtol=0)
    assert cache["pooled"].shape == (1, cache["blocks.0.resid_post"].shape[-1])


def test_the_head_mask_hook_removes_exactly_the_heads_it_zeroes(any_router):
    r = any_router
    ids, is_pad = r.batch([r.encode(TEXT)])
    with torch.inference_mode():
        base, _ = r.run_with_cache(ids, is_pad)
        keep, _ = r.run_with_cache(ids, is_pad, head_mask=torch.ones(r.n_blocks, r.n_heads))
        mask = torch.ones(r.n_blocks, r.n_heads)
        mask[r.n_blocks - 1] = 0                                   # the last block's heads, all of them
        cut, cache = r.run_with_cache(ids, is_pad, head_mask=mask)
    torch.testing.assert_close(keep, base, atol=1e-6, rtol=0)
    assert (cut - base).abs().max() > 1e-3
    last = r.n_blocks - 1
    attn_out = cache.get(f"blocks.{last}.attn.out")
    if attn_out is not None:                                       # the heads' sum is then the output bias alone
        bias = r.attention(last).W_O.bias
        torch.testing.assert_close(attn_out[0], bias.expand_as(attn_out[0]), atol=1e-6, rtol=0)


def test_head_importance_is_one_method_for_both_kinds(any_router):
    from ticketnet.interpret.methods.heads import head_importance_by_length

    r = any_router
    texts = [TEXT, "Where is my parcel? The courier said it was delivered but nothing arrived.",
             "I forgot my password and the reset e-mail never comes."]
    labels = [r.teams.index(t) for t in ("payments", "delivery", "account")]
    encoded = [r.encode(t) for t in texts]
    table = head_importance_by_length(r, [e.ids for e in encoded], labels, chunk_size=2, pad_id=r.pad_id)
    assert len(table) == r.n_blocks * r.n_heads
    assert set(zip(table["block"], table["head"])) == {(b, h) for b in range(1, r.n_blocks + 1)
                                                 for h in range(1, r.n_heads + 1)}
    # One head's row, worked out by hand with the head mask hook on each ticket alone.
    block, head = r.n_blocks, 1
    drop = []
    with torch.inference_mode():
        for enc, y in zip(encoded, labels):
            ids, is_pad = r.batch([enc])
            mask = torch.ones(r.n_blocks, r.n_heads)
            mask[block - 1, head - 1] = 0
            p_on = torch.softmax(r.run_with_cache(ids, is_pad)[0], -1)[0, y]
            p_off = torch.softmax(r.run_with_cache(ids, is_pad, head_mask=mask)[0], -1)[0, y]
            drop.append(float(p_on - p_off))
    row = table[(table["block"] == block) & (table["head"] == head)].iloc[0]
    assert row.support_prob == pytest.approx(sum(drop) / len(drop), abs=1e-5)
