"""Property-based tests (hypothesis) of removal, rollout and `predict_stream`, on small random models.

Removal: every row of the counterfactual batch is the variant it claims to be, and its probabilities are the ones
the model gives that variant alone; probability drops lie in [-1, 1], total variation in [0, 1] and bounds every
single team's drop. Rollout: rows are non-negative and sum to 1 for any attention patterns, and the pooled share sums
to 1. `predict_stream`: any text fed as a CSV either routes rows (well-formed output) or raises DataError, never
anything else. Models are tiny (d = 8) so each example runs in milliseconds.
"""

from __future__ import annotations

import csv
import io

import pytest
import torch
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tests.conftest import make_model
from ticketnet.data.text import PAD_ID, UNK_ID, Vocab
from ticketnet.data.synth import TEAMS
from ticketnet.data.tickets import DataError
from ticketnet.interpret import (
    attention_rollout, counterfactual_batch, counterfactual_probs, probability_drop, rollout_to_pooled,
    total_variation,
)
from ticketnet.lens.inspection import run_with_cache, stack_blocks
from ticketnet.nn.transformer import TinyTransformer
from ticketnet.predict import predict_stream
from ticketnet.router import Router

VOCAB = 12
MAX_LEN = 12
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def tiny_model(seed: int, n_classes: int = len(TEAMS)) -> TinyTransformer:
    return make_model(seed, VOCAB, d=8, h=2, d_ff=16, max_len=MAX_LEN, n_classes=n_classes, head_scale=8)


ticket_ids = st.lists(st.integers(1, VOCAB - 1), min_size=2, max_size=MAX_LEN)   # no <pad> inside a ticket
seeds = st.integers(0, 2**16)


# -- removal ------------------------------------------------------------------------------------------------------------
@SETTINGS
@given(ids=ticket_ids, unk=st.integers(1, VOCAB - 1))
def test_counterfactual_batch_rows_are_what_they_claim(ids, unk):
    batch, is_pad = counterfactual_batch(torch.tensor(ids), unk_id=unk)
    n = len(ids)
    assert batch.shape == is_pad.shape == (2 * n + 1, n)
    assert batch[0].tolist() == ids and not is_pad[0].any()
    for i in range(n):
        deleted, pad = batch[1 + i].tolist(), is_pad[1 + i].tolist()
        assert deleted == ids[:i] + ids[i + 1:] + [PAD_ID]
        assert pad == [False] * (n - 1) + [True]
        replaced = batch[n + 1 + i].tolist()
        assert replaced == ids[:i] + [unk] + ids[i + 1:]
        assert not is_pad[n + 1 + i].any()


@settings(max_examples=25, deadline=None)
@given(ids=ticket_ids, seed=seeds, target=st.integers(0, len(TEAMS) - 1), at=st.integers(0, MAX_LEN - 1))
def test_removal_effects_are_bounded_and_match_each_variant_alone(ids, seed, target, at):
    model = tiny_model(seed)
    cf = counterfactual_probs(model, torch.tensor(ids))
    n, i = len(ids), at % len(ids)
    with torch.inference_mode():
        alone = lambda seq: torch.softmax(model(torch.tensor([seq]), torch.zeros(1, len(seq), dtype=torch.bool)), -1)[0]
        assert torch.allclose(cf.base, alone(ids), atol=1e-5)
        assert torch.allclose(cf.removed[i], alone(ids[:i] + ids[i + 1:]), atol=1e-5)       # padded, yet the same
        assert torch.allclose(cf.replaced[i], alone(ids[:i] + [UNK_ID] + ids[i + 1:]), atol=1e-5)
    for variants in (cf.removed, cf.replaced):
        drop = probability_drop(cf.base, variants, target)
        tv = total_variation(cf.base, variants)
        assert drop.shape == tv.shape == (n,)
        assert torch.isfinite(drop).all() and torch.isfinite(tv).all()
        assert drop.abs().max() <= 1 + 1e-6
        assert tv.min() >= 0 and tv.max() <= 1 + 1e-6
        assert (drop.abs() <= tv + 1e-6).all(), "one team's change never exceeds the total variation"


@SETTINGS
@given(n=st.integers(2, MAX_LEN), target=st.integers(-3, 10))
def test_probability_drop_refuses_a_target_outside_the_teams(n, target):
    base = torch.full((len(TEAMS),), 1 / len(TEAMS))
    if 0 <= target < len(TEAMS):
        assert probability_drop(base, base.expand(n, -1), target).abs().max() == 0
    else:
        with pytest.raises(ValueError, match="target"):
            probability_drop(base, base.expand(n, -1), target)


# -- rollout ------------------------------------------------------------------------------------------------------------
def _check_rollout(patterns: torch.Tensor) -> None:
    r = attention_rollout(patterns)
    n = patterns.shape[-1]
    assert r.shape == (n, n)
    assert r.min() >= 0
    assert torch.allclose(r.sum(-1), torch.ones(n, dtype=r.dtype), atol=1e-5)
    pooled = rollout_to_pooled(r)
    assert pooled.shape == (n,) and pooled.min() >= 0
    assert abs(float(pooled.sum()) - 1) < 1e-5


@SETTINGS
@given(L=st.integers(1, 4), h=st.integers(1, 4), n=st.integers(1, 10), seed=seeds,
       sharp=st.floats(0.0, 30.0), dtype=st.sampled_from([torch.float32, torch.float64]))
def test_rollout_of_any_attention_rows_sums_to_one(L, h, n, seed, sharp, dtype):
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(L, h, n, n, generator=gen, dtype=dtype) * sharp     # sharp: up to one-hot rows
    _check_rollout(torch.softmax(scores, dim=-1))


@SETTINGS
@given(ids=st.lists(st.integers(1, VOCAB - 1), min_size=1, max_size=MAX_LEN), seed=seeds)
def test_rollout_of_the_models_own_attention_sums_to_one(ids, seed):
    model = tiny_model(seed)
    with torch.inference_mode():
        _, cache = run_with_cache(model, torch.tensor([ids]), torch.zeros(1, len(ids), dtype=torch.bool))
    patterns = stack_blocks(cache, "pattern", 2)[0]
    assert torch.allclose(patterns.sum(-1), torch.ones(patterns.shape[:-1]), atol=1e-5)
    _check_rollout(patterns)


# -- predict_stream -----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_router() -> Router:
    words = ["refund", "card", "parcel", "late", "password", "broken", "return", "charged", "login", "box"]
    vocab = Vocab(itos=["<pad>", "<unk>", *words])
    assert len(vocab) == VOCAB
    return Router(tiny_model(0), vocab, TEAMS)


csv_field = st.one_of(st.text(max_size=30), st.sampled_from(["", " ", '"', '""', "\x00", "a,b", "\r\n", "\ufeff",
                                                             "refund my card", "🎉", "<script>alert(1)</script>"]))
csv_text = st.one_of(
    st.text(max_size=300),                                          # anything at all
    st.builds(lambda header, rows: header + "".join(rows),          # a plausible header, then anything per line
              st.sampled_from(["ticket_id,text\n", "ticket_id,text,team\n", "text,ticket_id\r\n", "id,text\n",
                               "\ufeffticket_id,text\n", '"ticket_id","text"\n', "ticket_id\n"]),
              st.lists(st.builds(lambda a, b, sep, end: a + sep + b + end, csv_field, csv_field,
                                 st.sampled_from([",", ";", ",,", ""]), st.sampled_from(["\n", "\r\n", ""])),
                       max_size=6)),
    st.builds(lambda rows: "ticket_id,text\n" + "".join(f"T-{i},{t}\n" for i, t in enumerate(rows)),
              st.lists(st.text(alphabet=st.characters(blacklist_characters='\x00"\r\n,'), max_size=400),
                       min_size=1, max_size=5)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=csv_text, batch_size=st.integers(1, 4))
@example(text="ticket_id,text\nT-1,refund my card\nT-2,\"late, \"\"very\"\" late\"\n", batch_size=1)
@example(text="ticket_id,text\nT-1,\x00\n", batch_size=1)
def test_predict_stream_routes_rows_or_raises_a_data_error(tiny_router, text, batch_size):
    out = io.StringIO()
    try:
        stats = predict_stream(tiny_router, io.StringIO(text, newline=""), out, "<input>", batch_size=batch_size)
    except DataError as exc:
        event("DataError")
        message = str(exc)
        assert message.startswith("<input>") and "\n" not in message.strip(), message
        return
    event("routed")
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["ticket_id", "team", "confidence", *(f"p_{t}" for t in TEAMS), "truncated", "set_aside_chars"]
    assert len(rows) - 1 == stats["tickets"] >= 1
    assert 0 <= stats["truncated"] <= stats["tickets"]
    for row in rows[1:]:
        probs = [float(v) for v in row[3:3 + len(TEAMS)]]
        assert row[1] in TEAMS and probs[TEAMS.index(row[1])] == max(probs)
        assert all(0 <= p <= 1 for p in probs) and abs(sum(probs) - 1) < 1e-3
        assert float(row[2]) == max(probs) and row[-1] in ("0", "1")
