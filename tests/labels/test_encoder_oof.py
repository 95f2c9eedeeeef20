"""An encoder router's out-of-fold probabilities: its base fine-tuned per fold, cached, and refused with the estimate
beyond the size limit."""

from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pytest

from tests.encoder.conftest import make_small_base, write_splits
from ticketnet.__main__ import main
from ticketnet.labels import oof as labels_oof
from ticketnet.labels.oof import LabelsError, encoder_recipe, encoder_refusal, read_cache
from ticketnet.labels.run import compute_oof

FOLDS = 3


@pytest.fixture(scope="module")
def encoder_router(tmp_path_factory):
    """The small random BERT fine-tuned (one epoch, the top block) on 72 tickets of four teams, its splits in its
    data/ folder as an export's are."""
    from ticketnet.encoder.finetune import EncoderRecipe, fine_tune

    base = make_small_base(tmp_path_factory.mktemp("base"))
    data = write_splits(tmp_path_factory.mktemp("splits"), sizes=(("train", 72), ("valid", 24), ("test", 24)))
    folder = tmp_path_factory.mktemp("routers") / "small-bert"
    fine_tune(data, folder, EncoderRecipe(encoder=str(base), epochs=2, lr=1e-3, train_blocks=1, batch_size=8,
                                          max_pieces=32), log=lambda _m: None)
    shutil.copytree(data, folder / "data")
    return folder


def _train_ids(folder) -> list[str]:
    with open(folder / "data" / "train.csv", encoding="utf-8") as f:
        return [r["ticket_id"] for r in csv.DictReader(f)]


def test_each_fold_fine_tunes_on_the_other_folds_and_scores_its_own(encoder_router):
    said = []
    oof = compute_oof(encoder_router, "train", FOLDS, 1, "router", scheduler="synchronous", log=said.append)
    ids = _train_ids(encoder_router)
    assert sorted(oof.ticket_ids) == sorted(ids) and len(oof.ticket_ids) == len(set(oof.ticket_ids))
    assert oof.probs.shape == (len(ids), 4) and np.allclose(oof.probs.sum(1), 1)
    assert sorted(set(oof.fold.tolist())) == list(range(FOLDS))
    for k, f in enumerate(oof.folds):
        train, scored = set(f["train_ids"]), set(f["scored_ids"])
        assert not train & scored, f"fold {k} scored tickets it trained on"
        assert train | scored == set(ids)
        assert scored == {t for t, fold in zip(oof.ticket_ids, oof.fold) if fold == k}
        assert f["epochs"] == 1 and f["train_blocks"] == 1 and f["rule_sets"] == ["valid"]
    s = oof.settings
    assert (s["source"], s["kind"], s["epochs"], s["train_blocks"], s["folds"], s["tickets"]) == \
        ("router", "encoder", 1, 1, FOLDS, len(ids))
    assert s["seconds"] > 0 and len(s["fold_seconds"]) == FOLDS
    assert "fine-tuned per fold" in said[0]
    cache = encoder_router / "labels" / "oof-router-train-k3-e1.parquet"
    back = read_cache(cache, encoder_router / "data" / "train.csv")
    assert back is not None and back.ticket_ids == oof.ticket_ids and back.settings["kind"] == "encoder"
    np.testing.assert_array_equal(back.probs, oof.probs)
    np.testing.assert_array_equal(back.fold, oof.fold)
    again = []
    compute_oof(encoder_router, "train", FOLDS, 1, "router", scheduler="synchronous", log=again.append)
    assert again == [f"reusing the out-of-fold probabilities in {cache}"]


def test_the_recipe_is_the_cards_on_one_thread_without_a_sample(encoder_router):
    meta = json.loads((encoder_router / "router.json").read_text(encoding="utf-8"))
    recipe = encoder_recipe({**meta, "train": {**meta["train"], "train_sample": 40, "threads": 2}})
    assert (recipe["epochs"], recipe["train_blocks"], recipe["lr"], recipe["max_pieces"]) == (2, 1, 1e-3, 32)
    assert recipe["encoder"] == meta["base"]["encoder"] and recipe["threads"] == 1 and recipe["train_sample"] is None
    assert encoder_recipe(meta, epochs=5)["epochs"] == 5
    with pytest.raises(LabelsError, match="--source baseline"):
        encoder_recipe({"kind": "encoder", "source": "classifier", "teams": ["a", "b"]})


def test_over_the_limit_the_command_refuses_with_the_estimate_and_the_baseline_command(encoder_router, tmp_path,
                                                                                      capsys, monkeypatch):
    monkeypatch.setattr(labels_oof, "ENCODER_OOF_MAX", 50)
    out = tmp_path / "issues.csv"
    argv = ["label-issues", "--router", str(encoder_router), "--source", "router", "--folds", str(FOLDS),
            "--epochs", "1", "--scheduler", "synchronous", "--out", str(out), "--recompute"]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    meta = json.loads((encoder_router / "router.json").read_text(encoding="utf-8"))
    rate = meta["train"]["seconds"] / (meta["train"]["tickets"] * meta["train"]["epochs"])
    estimate = labels_oof.duration((FOLDS - 1) * 72 * 1 * rate)
    assert err.startswith("ticketnet label-issues: error: Out-of-fold probabilities from the router mean "
                          "fine-tuning its encoder once per fold") and "\n" not in err
    assert "up to 50 tickets, and this split has 72" in err and f"would take about {estimate} of fine-tuning" in err
    assert f"{rate:.3f} s per ticket-epoch, its own fine-tune: 72 tickets × 2 epochs" in err
    assert err.endswith(f"python -m ticketnet label-issues --router {encoder_router} --split train --folds {FOLDS} "
                        "--source baseline --out label-issues-baseline.csv")
    assert not out.exists()
    # The override runs it anyway, and the ranking carries no token evidence (that is the Tiny router's).
    assert main([*argv[:-1], "--ignore-size-limit", "--evidence-rows", "5"]) == 0
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(rows) == 72 and "evidence_given" not in rows[0]
    summary = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert summary["settings"]["kind"] == "encoder" and summary["settings"]["evidence_rows"] == 0


def test_the_estimate_scales_the_cards_fine_tune_and_names_its_sample():
    meta = {"train": {"seconds": 210.4, "tickets": 3000, "epochs": 4, "train_sample": 3000, "sampled_from": 60000}}
    assert labels_oof.encoder_estimate(meta, 60_000, 5, 4) == pytest.approx(4 * 60_000 * 4 * 210.4 / 12_000)
    said = encoder_refusal(meta, 60_000, 5, 4, "use the baseline")
    assert "about 4.7 h of fine-tuning" in said and "5 folds × 4 epochs on about 48,000 tickets each" in said
    assert "fine-tuned on a 3,000-ticket sample of 60,000" in said and said.endswith("instead: use the baseline")
    assert encoder_refusal(meta, 5_000, 5, 4, "x") is None
    # A card without the fine-tune's time: the measured MiniLM rate.
    assert labels_oof.encoder_rate({"train": {}})[0] == labels_oof.ENCODER_SECONDS_PER_TICKET_EPOCH


def test_larkfields_shipped_encoder_router_is_refused_with_its_estimate():
    from ticketnet.labels.run import size_refusal
    from ticketnet.paths import ROOT

    folder = ROOT / "weights" / "larkfield-minilm"
    if not (folder / "router.json").is_file():
        pytest.skip("the shipped encoder router is not here")
    said = size_refusal(folder, "train", 5, tickets=60_000)
    assert "this split has 60,000" in said and "3,000-ticket sample" in said and " h of fine-tuning" in said
    assert "--source baseline" in said
