"""interpret_split over many tickets equals the single-ticket view, and refuses bad targets."""

import pytest

from tests.conftest import make_router
from ticketnet.interpret import SPLIT_ERASER_SIGNALS, mean_aopc, split_long, interpret_split, interpret_ticket


def test_interpret_split_matches_the_single_ticket_view():
    router = make_router()
    rows = [{"ticket_id": "a", "text": "w3 w5 w7 w9 w11 w13 w2", "team": "payments"},
            {"ticket_id": "b", "text": "w4", "team": "delivery"},
            {"ticket_id": "c", "text": "w8 w8 w10 w12 w14", "team": "returns"}]
    seen = []
    df = interpret_split(router, rows, progress=lambda done, total: seen.append((done, total)), group_size=2)
    assert seen == [(2, 3), (3, 3)]
    assert df.ticket_id.tolist() == ["a", "b", "c"] and df.n.tolist() == [7, 1, 5]
    assert {"tau rollout", "tau mean attention b2", "tau b2 h4", "tau random", "comprehensiveness rollout",
            "sufficiency removal", "sufficiency random", "disagreement"} <= set(df.columns)
    assert df.loc[1, ["tau rollout", "disagreement"]].isna().all()
    ti = interpret_ticket(router, rows[0]["text"])
    agreement = ti.agreement.set_index("signal")
    assert df.loc[0, "tau rollout"] == pytest.approx(agreement.loc["rollout", "kendall_tau"], abs=1e-6)
    assert df.loc[0, "disagreement"] == pytest.approx((1 - df.loc[0, "tau rollout"]) / 2)
    comp = ti.aopc.set_index("signal").loc["rollout", "comprehensiveness"]
    assert df.loc[0, "comprehensiveness rollout"] == pytest.approx(comp, abs=1e-6)


def test_groups_bounded_by_cells_give_the_same_numbers_and_progress_per_group():
    router = make_router()
    rows = [{"ticket_id": f"t{i}", "text": " ".join(f"w{(i * 7 + k) % 40 + 2}" for k in range(3 + 4 * i))}
            for i in range(6)]                               # 3 to 23 tokens
    whole = interpret_split(router, rows)
    seen = []
    small = interpret_split(router, rows, progress=lambda done, total: seen.append(done), group_cells=2 * 15 * 15)
    # 3, 7 and 11 tokens together (3 · 11² = 363 ≤ 450 cells), then 15, 19 and 23 one by one.
    assert seen == [3, 4, 5, 6]
    numbers = [c for c in whole.columns if c.startswith(("tau", "comprehensiveness", "sufficiency", "disagreement"))]
    assert (small[numbers] - whole[numbers]).abs().max().max() <= 1e-6


def test_interpret_split_refuses_bad_targets():
    with pytest.raises(ValueError):
        interpret_split(make_router(), [{"ticket_id": "a", "text": "w3 w4"}], target="label")


def test_split_long_and_mean_aopc_read_the_wide_table():
    router = make_router()
    rows = [{"ticket_id": f"t{i}", "text": " ".join(f"w{j}" for j in range(i, i + 3 + i % 4))} for i in range(6)]
    rows.append({"ticket_id": "one", "text": "w1"})                      # one token: no τ, no AOPC
    wide = interpret_split(router, rows)
    long = split_long(wide)
    assert list(long.columns) == ["ticket_id", "signal", "metric", "value"]
    assert set(long["metric"]) == {"tau", "comprehensiveness", "sufficiency"} and "one" not in set(long["ticket_id"])
    got = long[(long.ticket_id == "t2") & (long.signal == "rollout") & (long.metric == "tau")]["value"].item()
    assert got == wide.loc[wide.ticket_id == "t2", "tau rollout"].item()
    means = mean_aopc(wide)
    assert means["signal"].tolist() == list(SPLIT_ERASER_SIGNALS)
    for signal in ("removal", "random"):
        want = wide[f"comprehensiveness {signal}"].mean()
        assert means.set_index("signal").loc[signal, "comprehensiveness"] == pytest.approx(want, abs=1e-12)


def test_phrases_add_columns_after_the_usual_ones_and_change_none_of_them(router, valid_rows):
    import math

    import pandas as pd

    rows = [r for r in valid_rows if r["evidence"]][:24] + [r for r in valid_rows if r["ticket_id"] == "T-65052"]
    plain = interpret_split(router, rows)
    more = interpret_split(router, rows, phrases=True)
    assert list(more.columns[: len(plain.columns)]) == list(plain.columns)
    pd.testing.assert_frame_equal(more[plain.columns], plain)          # the existing numbers stay identical
    added = list(more.columns[len(plain.columns):])
    assert {"comprehensiveness phrase deletion", "sufficiency phrase shapley", "auprc removal",
            "auprc phrase shapley", "auprc random"} <= set(added)
    ap = more[[c for c in added if c.startswith("auprc")]]
    assert ap.stack().between(0, 1).all() and not math.isnan(ap["auprc phrase shapley"].iloc[-1])
    no_evidence = interpret_split(router, [{"ticket_id": "x", "text": "Where is my parcel? It is late."}], phrases=True)
    assert math.isnan(no_evidence["auprc removal"].iloc[0])
