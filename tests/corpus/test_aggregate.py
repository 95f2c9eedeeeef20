"""Corpus aggregates from partial sums equal a pandas group-by over the rows they summarise."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ticketnet.corpus.aggregate import EFFECT_STEP, merge_partials, merge_tokens
from ticketnet.corpus.scan import scan_rows


def test_token_aggregates_equal_a_group_by_over_every_occurrence(router, valid_rows):
    rows = valid_rows[:70]
    parts = [scan_rows(router, rows[:40], 0, "effects", keep_occurrences=True),
             scan_rows(router, rows[40:], 40, "effects", keep_occurrences=True)]
    merged = merge_tokens([p.token_sums for p in parts], [p.effect_hist for p in parts], router.vocab.itos,
                          router.teams, 2).set_index(["team", "token"])
    occ = pd.concat([p.occurrences.assign(ticket=p.occurrences["ticket"] + 1000 * k) for k, p in enumerate(parts)])
    per = occ.groupby(["ticket", "team", "token"]).agg(effect=("effect", "mean"), rollout=("rollout", "sum"),
                                                       b2=("attention b2", "sum"), top=("is_top", "max")).reset_index()
    want = per.groupby(["team", "token"]).agg(tickets=("ticket", "size"), mean_effect=("effect", "mean"),
                                              median_effect=("effect", "median"), mean_rollout=("rollout", "mean"),
                                              mean_attention_b2=("b2", "mean"), top_effect=("top", "sum")).reset_index()
    want["team"] = [router.teams[i] for i in want["team"]]
    want["token"] = [router.vocab.itos[i] for i in want["token"]]
    want = want.set_index(["team", "token"]).loc[merged.index]
    assert len(merged) == len(want) > 500
    assert merged["tickets"].tolist() == want["tickets"].tolist()
    assert merged["top_effect"].tolist() == want["top_effect"].tolist()
    for c in ("mean_effect", "mean_rollout", "mean_attention_b2"):
        np.testing.assert_allclose(merged[c], want[c], atol=1e-12)
    # The median comes from a histogram of EFFECT_STEP-wide bins: exact to half a bin.
    assert np.abs(merged["median_effect"] - want["median_effect"]).max() <= EFFECT_STEP / 2 + 1e-12
    # Every ticket of two tokens or more has exactly one top-effect token.
    assert merged["top_effect"].sum() == sum(int((p.tickets["n"] >= 2).sum()) for p in parts)


def test_the_summary_equals_a_group_by_over_the_ticket_rows(full_scan):
    t = pd.read_parquet(full_scan / "tickets")
    s = json.loads((full_scan / "summary.json").read_text())
    assert s["level"] == "full" and s["tickets"] == len(t)
    assert s["routing"] == {team: int((t["predicted"] == team).sum()) for team in s["teams"]}
    assert s["accuracy"] == pytest.approx(t["correct"].mean(), abs=1e-12)
    cross = pd.crosstab(t["label"], t["predicted"]).reindex(index=s["teams"], columns=s["teams"], fill_value=0)
    assert s["confusion"] == cross.to_numpy().tolist()
    assert sum(s["confidence_hist"]["counts"]) == len(t)
    assert s["tau"]["rollout"]["mean"] == pytest.approx(t["tau rollout"].mean(), abs=1e-12)
    assert sum(s["tau"]["rollout"]["counts"]) == t["tau rollout"].notna().sum()
    assert s["aopc"]["comprehensiveness"]["rollout"] == pytest.approx(t["comprehensiveness rollout"].mean(), abs=1e-12)


def test_merging_nothing_is_refused():
    with pytest.raises(ValueError):
        merge_partials([], ["a"], "route")
