"""A policy kept in router.json: stored atomically, read back, applied, and the router's stored tables stay fresh."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from tests.conftest import without_policy
from ticketnet import predictions
from ticketnet.card import card_json_bytes, load_card
from ticketnet.corpus.manifest import weights_hash
from ticketnet.policy import (
    NEVER, Policy, auto_routed, fit_conformal, fit_team_thresholds, load_policy, store_policy, team_set_labels,
)


@pytest.fixture
def router_copy(artifacts, tmp_path):
    """The shipped router folder with its stored predictions, copied (never written in place), its policy out."""
    folder = tmp_path / "router"
    shutil.copytree(artifacts.weights.parent, folder, ignore=shutil.ignore_patterns(".*"))
    return without_policy(folder)


def _policy(teams, seed=0) -> Policy:
    rng = np.random.default_rng(seed)
    n, k = 400, len(teams)
    probs = rng.dirichlet(np.full(k, 0.3), size=n)
    y = probs.argmax(axis=1)
    pred = np.asarray(teams)[probs.argmax(axis=1)]
    thresholds = fit_team_thresholds(probs.max(axis=1), pred, rng.random(n) < 0.95, teams, precision=0.9)
    return Policy(thresholds, fit_conformal(probs, y, 0.1, "aps" if k > 2 else "lac"),
                  {"split": "valid", "n": n, "data_sha256": "0" * 64, "date": "2025-01-01T00:00:00+00:00"})


def test_a_router_without_a_policy_has_none(router_copy):
    assert load_policy(router_copy) is None
    assert load_policy(load_card(router_copy / "router.pt")) is None
    assert load_policy({"teams": ["a"]}) is None


def test_store_and_load_round_trip_leaving_the_rest_of_the_card_as_it_was(router_copy):
    before = (router_copy / "router.json").read_bytes()
    card = load_card(router_copy / "router.pt")
    policy = _policy(list(card.teams))
    store_policy(router_copy, policy)
    assert load_policy(router_copy) == policy
    assert load_policy(router_copy / "router.pt") == policy
    assert load_policy(load_card(router_copy / "router.pt")) == policy
    meta = json.loads((router_copy / "router.json").read_text(encoding="utf-8"))
    assert list(meta)[-1] == "policy"
    assert card_json_bytes({k: v for k, v in meta.items() if k != "policy"}) == before
    assert not list(router_copy.glob(".router.json*")), "no temporary file left behind"
    again = _policy(list(card.teams), seed=1)                # a second store replaces the first
    store_policy(router_copy, again)
    assert load_policy(router_copy) == again


def test_storing_a_policy_keeps_the_stored_predictions_fresh_but_not_a_scan_s_router(router_copy, artifacts):
    # The policy says how predictions are acted on, not what they are: the predictions/ tables and the dashboard's
    # split tables (keyed by the same hashes) stay valid. A scan writes the policy's columns, so its key changes.
    csv = artifacts.data / "valid.csv"
    weights = router_copy / "router.pt"
    assert predictions.has_predictions(weights, "valid", csv)
    keys, scan_key = predictions.key_hashes(weights, csv), weights_hash(weights)
    store_policy(router_copy, _policy(list(load_card(weights).teams)))
    assert predictions.key_hashes(weights, csv) == keys
    assert predictions.has_predictions(weights, "valid", csv)
    assert predictions.read_predictions(weights, "valid", csv) is not None
    assert weights_hash(weights) != scan_key

    meta = json.loads((router_copy / "router.json").read_text(encoding="utf-8"))
    meta["ood"]["min_confidence"] = 0.5                      # anything else in the card: other predictions' key
    (router_copy / "router.json").write_bytes(card_json_bytes(meta))
    assert predictions.key_hashes(weights, csv) != keys
    assert not predictions.has_predictions(weights, "valid", csv)


def test_the_shipped_card_is_written_as_card_json_bytes_writes_it():
    # router_hash relies on it: the card without its policy must be the bytes training wrote.
    from ticketnet.paths import WEIGHTS

    raw = (WEIGHTS.parent / "router.json").read_bytes()
    assert card_json_bytes(json.loads(raw)) == raw


def test_a_policy_for_other_teams_or_a_broken_stored_one_is_refused(router_copy):
    with pytest.raises(ValueError, match="names team"):
        store_policy(router_copy, _policy(["x", "y"]))
    meta = json.loads((router_copy / "router.json").read_text(encoding="utf-8"))
    meta["policy"] = {"thresholds": {}}
    (router_copy / "router.json").write_bytes(card_json_bytes(meta))
    with pytest.raises(ValueError, match="stored policy cannot be read"):
        load_policy(router_copy)


def test_apply_decides_on_the_probabilities_as_written_to_four_decimals():
    teams = ["a", "b", "c"]
    thresholds = fit_team_thresholds([0.9], ["a"], [True], teams, precision=0.9)
    assert thresholds.thresholds == {"a": 0.9, "b": NEVER, "c": NEVER}
    policy = Policy(thresholds, fit_conformal(np.eye(3)[[0, 1, 2] * 10] * 0.8 + 0.2 / 3, np.array([0, 1, 2] * 10),
                                               0.2, "lac"))
    probs = np.array([[0.89996, 0.05002, 0.05002],           # written 0.9000: auto-routed, as the CSV reads
                      [0.8999, 0.05005, 0.05005],
                      [0.05, 0.9, 0.05]])
    auto, sets = policy.apply(probs, teams)
    assert auto.tolist() == [True, False, False]
    assert auto.tolist() == auto_routed(thresholds, [0.9, 0.8999, 0.9], ["a", "a", "b"]).tolist()
    assert sets.tolist() == [[True, False, False], [True, False, False], [False, True, False]]
    got_auto, labels = policy.columns(probs, teams)
    assert got_auto.tolist() == auto.tolist() and labels == team_set_labels(sets, teams, probs)
    with pytest.raises(ValueError, match="one column per team"):
        policy.apply(probs[:, :2], teams)
