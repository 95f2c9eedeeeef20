"""interpret_split over many tickets equals the single-ticket view, and refuses bad targets."""

import pytest

from tests.conftest import make_router
from ticketnet.interpret import (
    SPLIT_ERASER_SIGNALS, SplitOptions, interpret_split, interpret_ticket, mean_aopc, signals as sg, values_of,
)

ROLLOUT, RANDOM, REMOVAL = sg.ROLLOUT.name, sg.RANDOM.name, sg.REMOVAL.name
NUMBERS = (sg.TAU, sg.COMPREHENSIVENESS, sg.SUFFICIENCY, sg.DISAGREEMENT)


def _tickets(long):
    return long.drop_duplicates(sg.TICKET_ID).reset_index(drop=True)


def _keys(long):
    return set(zip(long[sg.SIGNAL], long[sg.METRIC]))


def _value(long, ticket, signal, metric):
    return long[(long.ticket_id == ticket) & (long.signal == signal) & (long.metric == metric)][sg.VALUE].item()


def test_interpret_split_matches_the_single_ticket_view():
    router = make_router()
    rows = [{"ticket_id": "a", "text": "w3 w5 w7 w9 w11 w13 w2", "team": "payments"},
            {"ticket_id": "b", "text": "w4", "team": "delivery"},
            {"ticket_id": "c", "text": "w8 w8 w10 w12 w14", "team": "returns"}]
    seen = []
    df = interpret_split(router, rows, progress=lambda done, total: seen.append((done, total)),
                         options=SplitOptions(group_size=2))
    assert seen == [(2, 3), (3, 3)]
    tickets = _tickets(df)
    assert tickets.ticket_id.tolist() == ["a", "b", "c"] and tickets.n.tolist() == [7, 1, 5]
    assert {(ROLLOUT, sg.TAU), (sg.mean_attention(2).name, sg.TAU), (sg.head_attention(2, 4).name, sg.TAU),
            (RANDOM, sg.TAU), (ROLLOUT, sg.COMPREHENSIVENESS), (REMOVAL, sg.SUFFICIENCY), (RANDOM, sg.SUFFICIENCY),
            (ROLLOUT, sg.DISAGREEMENT)} <= _keys(df)
    b = df[df.ticket_id == "b"]
    assert b[b.signal == ROLLOUT].set_index(sg.METRIC).loc[[sg.TAU, sg.DISAGREEMENT], sg.VALUE].isna().all()
    ti = interpret_ticket(router, rows[0]["text"])
    agreement = ti.agreement.set_index("signal")
    tau = _value(df, "a", ROLLOUT, sg.TAU)
    assert tau == pytest.approx(agreement.loc[ROLLOUT, "kendall_tau"], abs=1e-6)
    assert _value(df, "a", ROLLOUT, sg.DISAGREEMENT) == pytest.approx((1 - tau) / 2)
    comp = ti.aopc.set_index("signal").loc[ROLLOUT, "comprehensiveness"]
    assert _value(df, "a", ROLLOUT, sg.COMPREHENSIVENESS) == pytest.approx(comp, abs=1e-6)


def test_groups_bounded_by_cells_give_the_same_numbers_and_progress_per_group():
    router = make_router()
    rows = [{"ticket_id": f"t{i}", "text": " ".join(f"w{(i * 7 + k) % 40 + 2}" for k in range(3 + 4 * i))}
            for i in range(6)]                               # 3 to 23 tokens
    whole = interpret_split(router, rows)
    seen = []
    small = interpret_split(router, rows, progress=lambda done, total: seen.append(done),
                            options=SplitOptions(group_cells=2 * 15 * 15))
    # 3, 7 and 11 tokens together (3 · 11² = 363 ≤ 450 cells), then 15, 19 and 23 one by one.
    assert seen == [3, 4, 5, 6]
    numbers = whole.metric.isin(NUMBERS)
    assert whole[numbers][[sg.TICKET_ID, sg.SIGNAL, sg.METRIC]].equals(small[numbers][[sg.TICKET_ID, sg.SIGNAL,
                                                                                         sg.METRIC]])
    assert (small[numbers][sg.VALUE] - whole[numbers][sg.VALUE]).abs().max() <= 1e-6


def test_interpret_split_refuses_bad_targets():
    with pytest.raises(ValueError):
        interpret_split(make_router(), [{"ticket_id": "a", "text": "w3 w4"}], options=SplitOptions(target="label"))


def test_the_long_table_and_mean_aopc():
    router = make_router()
    rows = [{"ticket_id": f"t{i}", "text": " ".join(f"w{j}" for j in range(i, i + 3 + i % 4))} for i in range(6)]
    rows.append({"ticket_id": "one", "text": "w1"})                      # one token: no τ, no AOPC
    long = interpret_split(router, rows)
    assert list(long.columns) == ["ticket_id", "n", "predicted", "label", "signal", "metric", "value"]
    found = long.dropna(subset=[sg.VALUE])
    assert set(found["metric"]) == {"tau", "comprehensiveness", "sufficiency", "disagreement"}
    assert "one" not in set(found["ticket_id"])
    got = found[(found.ticket_id == "t2") & (found.signal == ROLLOUT) & (found.metric == "tau")]["value"].item()
    assert got == values_of(long, sg.TAU, ROLLOUT).loc["t2"]
    assert list(values_of(long, sg.TAU).index) == [r["ticket_id"] for r in rows]
    means = mean_aopc(long)
    assert means["signal"].tolist() == list(SPLIT_ERASER_SIGNALS)
    for signal in (REMOVAL, RANDOM):
        want = values_of(long, sg.COMPREHENSIVENESS, signal).mean()
        assert means.set_index("signal").loc[signal, "comprehensiveness"] == pytest.approx(want, abs=1e-12)


def test_phrases_add_rows_after_the_usual_ones_and_change_none_of_them(router, valid_rows):
    import math

    import pandas as pd

    rows = [r for r in valid_rows if r["evidence"]][:24] + [r for r in valid_rows if r["ticket_id"] == "T-65052"]
    plain = interpret_split(router, rows)
    more = interpret_split(router, rows, options=SplitOptions(phrases=True))
    per_ticket = len(plain) // len(rows)
    first = more.groupby(sg.TICKET_ID, sort=False).head(per_ticket).reset_index(drop=True)
    pd.testing.assert_frame_equal(first, plain)                       # the existing numbers stay identical
    added = more.merge(plain, how="left", indicator=True).query("_merge == 'left_only'")
    assert {(sg.PHRASE_DELETION.name, sg.COMPREHENSIVENESS), (sg.PHRASE_SHAPLEY.name, sg.SUFFICIENCY),
            (REMOVAL, sg.AUPRC), (sg.PHRASE_SHAPLEY.name, sg.AUPRC), (RANDOM, sg.AUPRC)} <= _keys(added)
    ap = more[more.metric == sg.AUPRC]
    assert ap[sg.VALUE].dropna().between(0, 1).all()
    assert not math.isnan(_value(more, rows[-1]["ticket_id"], sg.PHRASE_SHAPLEY.name, sg.AUPRC))
    no_evidence = interpret_split(router, [{"ticket_id": "x", "text": "Where is my parcel? It is late."}],
                                  options=SplitOptions(phrases=True))
    assert math.isnan(_value(no_evidence, "x", REMOVAL, sg.AUPRC))
