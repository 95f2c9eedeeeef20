"""The policy columns a scan writes (`add_policy_columns`) agree with the card's low-confidence flag at the threshold."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ticketnet.card import POLICY_KEY, RouterCard, below_rule
from ticketnet.corpus.result import add_policy_columns
from ticketnet.data.text import Vocab
from ticketnet.policy import Policy, fit_conformal, fit_team_thresholds
from ticketnet.policy.policy import DECIMALS

TEAMS = ["billing", "delivery", "tech"]


def _meta(threshold: float) -> dict:
    thresholds = fit_team_thresholds([threshold], ["billing"], [True], TEAMS, precision=0.9)
    assert thresholds.thresholds["billing"] == threshold
    y = np.array([0, 1, 2] * 10)
    conformal = fit_conformal(np.eye(3)[y] * 0.8 + 0.2 / 3, y, 0.2, "lac")
    return {"teams": TEAMS, "config": {"max_len": 16}, POLICY_KEY: Policy(thresholds, conformal).to_json()}


def test_a_ticket_the_policy_auto_routes_is_not_also_counted_below_its_threshold():
    # The walk's case: confidence 0.978597 under a threshold of 0.9786 was auto-routed (it is written 0.9786) and
    # flagged low-confidence (0.978597 < 0.9786), so the scan's summary and its routing policy disagreed by one.
    meta = _meta(0.9786)
    confidences = [0.978597, 0.97855, 0.978549, 0.9786, 0.97859999, 0.9785, 0.99]
    probs = [np.array([c, (1 - c) / 2, (1 - c) / 2]) for c in confidences]
    tickets = pd.DataFrame({"ticket_id": [f"T-{i}" for i in range(len(probs))]})
    add_policy_columns(tickets, meta, TEAMS, probs)
    card = RouterCard(Vocab(itos=["<pad>", "<unk>", "refund"]), tuple(TEAMS), meta)
    enc = card.encode("refund")
    flagged = [card.assess(enc, p).low_confidence for p in probs]
    assert tickets["auto"].tolist() == [True, True, False, True, True, False, True]
    assert flagged == [not auto for auto in tickets["auto"]]
    assert int(tickets["auto"].sum()) + sum(flagged) == len(probs)     # every ticket counted once: auto or a person
    assert card.assess(enc, probs[0]).rule == "policy" and card.assess(enc, probs[2]).message.startswith("To a person")


def test_the_cards_rule_rounds_as_the_policy_does_on_every_tie():
    # Values a half step from the 4th decimal are where Python's round and np.round part ways; the card must take
    # the policy's side (the threshold below is one of the rounded values, as a fitted threshold is).
    rng = np.random.default_rng(0)
    conf = np.concatenate([np.round(rng.uniform(0.5, 1.0, 2000), DECIMALS) + 0.00005,
                           rng.uniform(0.97, 0.98, 2000)])
    threshold = 0.9786
    policy = Policy.from_json(_meta(threshold)[POLICY_KEY])
    table = np.stack([conf, (1 - conf) / 2, (1 - conf) / 2], axis=1)
    auto, _sets = policy.apply(table, TEAMS)
    assert [not below_rule(float(c), threshold, "policy") for c in conf] == auto.tolist()
    assert below_rule(0.978597, 0.9786, "calibrated")              # a calibrated threshold is compared as it is
