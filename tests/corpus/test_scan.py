"""The per-partition work: the same numbers as interpret_split, the extra columns, and the levels."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ticketnet.corpus.scan import LEVELS, scan_rows, score_column
from ticketnet.interpret.results import values_of
from ticketnet.interpret.split import interpret_split


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    return table.reset_index(drop=True)


def test_the_scan_equals_interpret_split_on_the_valid_split(full_scan, router, valid_rows):
    from tests.corpus.conftest import N_TICKETS

    ours = pd.read_parquet(full_scan / "tickets").sort_values("row", ignore_index=True)
    long = interpret_split(router, valid_rows[:N_TICKETS])
    ref = long.drop_duplicates("ticket_id").reset_index(drop=True)
    assert ours["ticket_id"].tolist() == ref["ticket_id"].tolist()
    assert ours["n"].tolist() == ref["n"].tolist()
    assert ours["predicted"].tolist() == ref["predicted"].tolist()
    assert ours["label"].tolist() == ref["label"].tolist()
    numeric = list(dict.fromkeys(zip(long["signal"], long["metric"])))
    assert len(numeric) == 11 + 1 + 10 + 1          # τ of 11 attention signals and random, 10 AOPC, disagreement
    for signal, metric in numeric:
        want = values_of(long, metric, signal).reset_index(drop=True)
        pd.testing.assert_series_equal(ours[score_column(signal, metric)], want, check_names=False, atol=1e-6, rtol=0)


def test_a_partition_draws_what_the_whole_input_draws(router, valid_rows):
    rows = valid_rows[:40]
    whole = scan_rows(router, rows, 0, "effects").tickets
    second = scan_rows(router, rows[25:], 25, "effects").tickets
    pd.testing.assert_series_equal(whole["tau random"].iloc[25:].reset_index(drop=True), second["tau random"],
                                   check_names=False, atol=1e-9)


def test_extra_columns_and_levels(router, valid_rows):
    rows = [dict(r) for r in valid_rows[:12]]
    rows[3] = {"ticket_id": "one", "text": "refund", "team": None}
    out = {level: scan_rows(router, rows, 0, level, keep_occurrences=True) for level in LEVELS}
    route, effects, full = (out[k].tickets for k in LEVELS)
    assert not any(c.startswith(("tau", "top_")) for c in route.columns)
    assert {"tau rollout", "disagreement", "top_effect_1", "top_rollout_3_value"} <= set(effects.columns)
    assert not any(c.startswith("comprehensiveness") for c in effects.columns)
    assert {"comprehensiveness rollout", "sufficiency removal"} <= set(full.columns)
    assert route["predicted"].tolist() == full["predicted"].tolist()
    assert route["confidence"].to_numpy() == pytest.approx(full["confidence"].to_numpy(), abs=1e-6)
    # A one-token ticket: no label, no deletion, no top effect token, its only token tops the rollout.
    one = full.iloc[3]
    assert pd.isna(one["label"]) and pd.isna(one["correct"]) and pd.isna(one["top_effect_1"])
    assert one["top_rollout_1"] == "refund" and math.isnan(one["tau rollout"])
    # Top tokens are the ticket's own, ranked by value.
    t = full.iloc[0]
    assert t["top_effect_1_value"] >= t["top_effect_2_value"] >= t["top_effect_3_value"]
    assert {t["top_effect_1"], t["top_rollout_1"]} <= set(t["tokens"])
    occ = out["full"].occurrences
    assert len(occ) == sum(n for n, tid in zip(full["n"], full["ticket_id"]) if n >= 2)
    assert occ.groupby("ticket")["is_top"].sum().eq(1).all()


def test_unknown_levels_are_refused(router):
    with pytest.raises(ValueError, match="level"):
        scan_rows(router, [{"ticket_id": "a", "text": "hi"}], 0, "everything")
