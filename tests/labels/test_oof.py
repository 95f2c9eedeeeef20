"""Out-of-fold probabilities: no ticket scored by a model that trained on it, the same on 1 or 2 workers, cached."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.labels.conftest import PLANTED, TEAMS, TINY_META
from ticketnet.labels.issues import rank_issues
from ticketnet.labels.oof import (LabelsError, cache_path, fold_assignment, out_of_fold, read_cache, router_recipe,
                                  write_cache)


def _check_folds(oof, rows):
    ids = [r["ticket_id"] for r in rows]
    scored_all = []
    for k, f in enumerate(oof.folds):
        train, scored = set(f["train_ids"]), set(f["scored_ids"])
        assert not train & scored, f"fold {k} scored tickets it trained on"
        assert train | scored == set(ids)
        assert scored == {i for i, fold in zip(oof.ticket_ids, oof.fold) if fold == k}
        scored_all.extend(scored)
    assert sorted(scored_all) == sorted(ids)          # every ticket scored exactly once


def test_baseline_folds_never_score_their_training_tickets_and_find_the_planted_labels(planted):
    oof = out_of_fold(planted, TEAMS, "baseline", folds=5, meta={"baseline": {"C": 10.0}}, scheduler="synchronous")
    _check_folds(oof, planted)
    assert np.allclose(oof.probs.sum(1), 1)
    ranked = rank_issues(oof)
    flagged = set(ranked.loc[ranked["flagged"], "ticket_id"])
    assert set(PLANTED) <= flagged
    assert len(flagged) <= 2 * len(PLANTED)          # and not by flagging everything
    assert set(ranked["ticket_id"].head(len(PLANTED))) == set(PLANTED)


def test_router_folds_train_by_the_recipe_on_their_own_part_and_find_the_planted_labels(planted):
    oof = out_of_fold(planted, TEAMS, "router", folds=3, meta=TINY_META, scheduler="synchronous")
    _check_folds(oof, planted)
    # each fold's vocabulary comes from its training part only: a word seen only in held-out tickets is <unk>
    assert all(f["epochs"] == 12 and f["recipe"] == "small" for f in oof.folds)
    ranked = rank_issues(oof)
    flagged = set(ranked.loc[ranked["flagged"], "ticket_id"])
    assert set(PLANTED) <= flagged
    assert len(flagged) <= 3 * len(PLANTED)


def test_a_fold_vocabulary_comes_from_its_training_part_only(planted):
    from ticketnet.data.text import Vocab

    rows = [dict(r) for r in planted]
    rows[0]["text"] += " zyxxyonlyhere"               # a word of one ticket only
    meta = {**TINY_META, "train": {**TINY_META["train"], "epochs": 1}}
    oof = out_of_fold(rows, TEAMS, "router", folds=3, meta=meta, scheduler="synchronous")
    for k, f in enumerate(oof.folds):
        train = [r["text"] for r in rows if r["ticket_id"] in set(f["train_ids"])]
        assert f["vocab"] == len(Vocab(train, min_freq=1))
    sizes = {k: f["vocab"] for k, f in enumerate(oof.folds)}
    held = int(oof.fold[0])
    assert sizes[held] < len(Vocab([r["text"] for r in rows], min_freq=1))


def test_one_and_two_workers_give_the_same_probabilities(planted):
    small = planted[:60]
    meta = {**TINY_META, "train": {**TINY_META["train"], "epochs": 3}}
    one = out_of_fold(small, TEAMS, "router", folds=3, meta=meta, workers=1)
    two = out_of_fold(small, TEAMS, "router", folds=3, meta=meta, workers=2)
    assert one.settings["workers_used"] == 1 and two.settings["workers_used"] == 2
    np.testing.assert_array_equal(one.probs, two.probs)
    sync = out_of_fold(small, TEAMS, "router", folds=3, meta=meta, scheduler="synchronous")
    np.testing.assert_array_equal(one.probs, sync.probs)


def test_folds_are_stratified_seeded_and_refuse_too_few_tickets():
    y = np.repeat([0, 1, 2], 10)
    a, b = fold_assignment(y, 5, seed=1), fold_assignment(y, 5, seed=1)
    np.testing.assert_array_equal(a, b)
    for k in range(5):
        assert np.bincount(y[a == k]).tolist() == [2, 2, 2]
    assert not np.array_equal(a, fold_assignment(y, 5, seed=2))
    with pytest.raises(LabelsError, match="fewer tickets than --folds 11"):
        fold_assignment(y, 11)
    with pytest.raises(LabelsError, match="at least 2"):
        fold_assignment(y, 1)


def test_the_recipe_comes_from_the_card():
    cfg = router_recipe(TINY_META, epochs=2)
    assert (cfg["epochs"], cfg["d"], cfg["heads"], cfg["blocks"], cfg["threads"]) == (2, 16, 2, 1, 1)
    assert cfg["recipe"] == "small" and cfg["lr"] == 1e-2
    older = router_recipe({"train": {"lr": 2e-3, "tickets": 60_000}, "config": {"d": 64, "h": 4}})
    assert older["recipe"] == "large"                 # by the router's training size, not a fold's
    assert router_recipe({"train": {}}, trained_on=900)["recipe"] == "small"
    with pytest.raises(ValueError, match="--epochs"):
        router_recipe(TINY_META, epochs=0)


def test_a_fine_tuned_routers_folds_train_from_scratch_by_the_recipe_for_its_size():
    from ticketnet.training import RECIPES, TrainConfig

    tuned = TrainConfig(init_from="weights", seed=4, keep=1.0, keep_from="other", new_vocabulary=True).resolved(60_000)
    meta = {"train": {**tuned.__dict__, "tickets": 60_000, "best_epoch": 2}, "config": {"d": 64, "h": 4}}
    cfg = router_recipe(meta)
    assert cfg["init_from"] is None and cfg["recipe"] == "large" and cfg["seed"] == 4
    assert cfg["keep"] == 0.0 and cfg["keep_from"] is None and cfg["new_vocabulary"] is False
    resolved = TrainConfig(**cfg).resolved(40_000)
    assert {k: getattr(resolved, k) for k in RECIPES["large"]} == RECIPES["large"]
    # A card that records the router it started from: the folds take that router's recipe and seed.
    base = TrainConfig(seed=1, lr=3e-3).resolved(60_000)
    meta["train"]["init_from_train"] = {**base.__dict__, "tickets": 60_000, "seed_search": [], "data_sha256": {}}
    cfg = router_recipe(meta, epochs=2)
    assert (cfg["seed"], cfg["lr"], cfg["recipe"], cfg["epochs"], cfg["threads"]) == (1, 3e-3, "large", 2, 1)
    assert cfg["init_from"] is None and cfg["keep"] == 0.0


def test_the_cache_round_trips_and_goes_stale_with_the_split(planted, tmp_path):
    split = tmp_path / "train.csv"
    split.write_text("ticket_id,text,team\n", encoding="utf-8")
    from ticketnet._runtime.hashing import file_sha256

    oof = out_of_fold(planted, TEAMS, "baseline", folds=3, scheduler="synchronous",
                      settings={"split": "train", "split_sha256": file_sha256(split)})
    path = cache_path(tmp_path, "baseline", "train", 3, None)
    assert path.name == "oof-baseline-train-k3.parquet"
    assert cache_path(tmp_path, "router", "train", 3, 2).name == "oof-router-train-k3-e2.parquet"
    write_cache(oof, path)
    back = read_cache(path, split)
    np.testing.assert_array_equal(back.probs, oof.probs)
    assert back.teams == TEAMS and back.ticket_ids == oof.ticket_ids and back.settings["folds"] == 3
    split.write_text("ticket_id,text,team\nX,changed,hr-people\n", encoding="utf-8")
    assert read_cache(path, split) is None


def test_bad_settings_are_refused(planted):
    with pytest.raises(LabelsError, match="--source"):
        out_of_fold(planted, TEAMS, "bert", scheduler="synchronous")
    with pytest.raises(LabelsError, match="not the router's teams"):
        out_of_fold(planted, TEAMS[:2], "baseline", scheduler="synchronous")
    with pytest.raises(LabelsError, match="--workers"):
        out_of_fold(planted, TEAMS, "baseline", workers=0)


def test_a_distilled_routers_folds_are_distilled_from_their_own_baseline_and_a_router_teacher_is_left_out():
    from ticketnet.training import TrainConfig

    cfg = TrainConfig(distill=0.5, pretrain_epochs=3, teacher_copies=2).resolved(900)
    meta = {"train": {**cfg.__dict__, "tickets": 900, "distillation": {"teacher": "baseline", "copies": 1800}},
            "config": {"d": 16, "h": 2}}
    fields = router_recipe(meta, epochs=2)
    assert (fields["distill"], fields["teacher_copies"], fields["pretrain_epochs"]) == (0.5, 2, 3)
    meta["train"]["distillation"] = {"teacher": "routers/big/router.pt", "kind": "encoder"}
    fields = router_recipe(meta, epochs=2)
    assert (fields["distill"], fields["teacher_copies"]) == (0.0, 0)


def test_a_distilled_fold_trains_on_its_baselines_soft_labels_and_copies(planted):
    from ticketnet.labels.oof import fit_router_fold

    rows = planted[::2]
    fields = {**router_recipe(TINY_META, epochs=1), "distill": 1.0, "teacher_copies": 1}
    model, _, info = fit_router_fold(rows, {}, TEAMS, fields)
    assert info["distill"] == 1.0 and info["teacher_copies"] == 1
    plain_model, _, plain = fit_router_fold(rows, {}, TEAMS, router_recipe(TINY_META, epochs=1))
    assert "distill" not in plain
    # The same seed and recipe, but one learnt the soft labels and the copies too: the weights differ.
    assert not torch.equal(model.head.weight, plain_model.head.weight)


def test_a_fold_of_a_router_started_from_word_vectors_starts_from_them_too(planted):
    from ticketnet.labels.oof import fit_router_fold

    fields = router_recipe(TINY_META, epochs=1)
    model, vocab, info = fit_router_fold(planted[::2], {}, TEAMS, {**fields, "lr": 1e-9}, word_vectors="minilm")
    assert info["word_vectors"] == "minilm"
    from ticketnet.encoder.word_vectors import EncoderWordVectors

    expected = EncoderWordVectors()(vocab.itos[2:], model.config.d, fields["embed_scale"] or 0.1)
    assert torch.allclose(model.embed.weight[2:], expected, atol=1e-5)     # lr 1e-9: still where it started
