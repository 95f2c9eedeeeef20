"""cleanlab over out-of-fold probabilities: the ranking, per-team quality, overlapping teams, evidence, safe CSV."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from tests.labels.conftest import PLANTED, TEAMS
from ticketnet.labels.issues import (csv_text, measure, overlapping_pairs, rank_issues, relabel_queue, team_quality,
                                     token_evidence)
from ticketnet.labels.oof import LabelsError, OutOfFold, out_of_fold


@pytest.fixture(scope="module")
def oof(planted):
    return out_of_fold(planted, TEAMS, "baseline", folds=5, meta={"baseline": {"C": 10.0}}, scheduler="synchronous")


def test_ranking_suggests_the_true_team_and_measures_against_the_truth(oof, planted):
    texts = {r["ticket_id"]: r["text"] for r in planted}
    ranked = rank_issues(oof, texts, truth={t: t in PLANTED for t in texts})
    top = ranked.head(len(PLANTED)).set_index("ticket_id")
    for tid in PLANTED:                                # planted: the next team's label; the true team is suggested
        i = int(tid.split("-")[1])
        assert top.loc[tid, "suggested_team"] == TEAMS[i % 3]
        assert top.loc[tid, "given_team"] == TEAMS[(i + 1) % 3]
    assert ranked["rank"].tolist() == list(range(1, len(ranked) + 1))
    assert ranked["score"].between(0, 1).all()
    m = measure(ranked, tops=(5, 500))
    assert m["recall"] == 1.0 and m["wrong_labels"] == 5 and m["top_5_precision"] == 1.0
    assert m["top_500_precision"] is None              # fewer tickets than that


def test_normalized_margin_ranks_too_and_bad_methods_are_refused(oof):
    ranked = rank_issues(oof, method="normalized_margin")
    assert set(ranked["ticket_id"].head(5)) == set(PLANTED)
    with pytest.raises(LabelsError, match="--method"):
        rank_issues(oof, method="entropy")


def test_team_quality_and_overlaps_name_the_teams(oof):
    q = team_quality(oof)
    assert sorted(q["team"]) == sorted(TEAMS) and q["tickets"].sum() == 150
    assert q["label_quality"].between(0, 1).all()
    pairs = overlapping_pairs(oof)
    assert set(pairs["team_a"]) | set(pairs["team_b"]) <= set(TEAMS)
    assert (pairs["joint"] >= 0).all()


def test_a_team_absent_from_the_split_is_nobody_s_label():
    probs = np.array([[0.9, 0.05, 0.05], [0.1, 0.85, 0.05], [0.8, 0.1, 0.1], [0.2, 0.7, 0.1]] * 5)
    given = np.array([0, 1, 0, 0] * 5)
    oof = OutOfFold([f"X-{i}" for i in range(20)], given, probs, np.zeros(20, int), ("a", "b", "never"), {}, [])
    ranked = rank_issues(oof)
    assert "never" not in set(ranked["suggested_team"])
    assert ranked.iloc[0]["ticket_id"] in {f"X-{i}" for i in range(3, 20, 4)}


def test_evidence_signs_follow_the_convention(router):
    text = "I want a refund for the parcel that never arrived"
    probs = router.predict_texts([text])[0]
    given, suggested = router.teams[int(probs.argmin())], router.teams[int(probs.argmax())]
    (row,) = token_evidence(router, [text], [given], [suggested])
    first = row["evidence_suggested"].split("; ")[0]
    token, value = first.rsplit(" ", 1)
    # support = log-odds with the token − without it: deleting the top token lowers the suggested team's log-odds
    import torch

    from ticketnet.interpret import removal_support, counterfactual_probs

    enc = router.encode(text)
    cf = counterfactual_probs(router.model, torch.tensor(enc.ids))
    support = removal_support(cf.base, cf.removed, router.teams.index(suggested), "logit_diff")
    assert float(value) == pytest.approx(float(support.max()), abs=0.006) and float(value) > 0
    assert token == enc.tokens[int(support.argmax())]
    assert row["router_p_suggested"] == pytest.approx(float(probs.max()), abs=1e-4)


def test_the_csv_is_spreadsheet_safe_and_the_queue_has_an_empty_decision():
    frame = pd.DataFrame({"ticket_id": ["=1+1", "T-2"], "text": ["@SUM(A1)", "-2 is fine? +x"],
                          "given_team": ["a", "b"], "suggested_team": ["b", "a"], "score": [0.1, np.nan]})
    rows = list(csv.reader(io.StringIO(csv_text(frame).decode("utf-8"))))
    assert rows[1][:2] == ["'=1+1", "'@SUM(A1)"] and rows[2][1] == "'-2 is fine? +x"
    assert rows[2][4] == "" and rows[1][4] == "0.1"
    queue = relabel_queue(frame)
    assert list(queue.columns) == ["ticket_id", "text", "given_team", "suggested_team", "score", "decision"]
    assert (queue["decision"] == "").all()
