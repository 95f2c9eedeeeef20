"""Fine-tuning an encoder into a router folder: the card, what is stored, the reload, parity, and the CLI."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from ticketnet.__main__ import main
from ticketnet.encoder import parity
from ticketnet.encoder.finetune import EncoderRecipe, fine_tune
from ticketnet.catalog import is_encoder, is_router_folder, weights_in
from ticketnet.encoder.router import EncoderRouter
from ticketnet.predictions import read_predictions
from tests.encoder.conftest import write_splits


@pytest.fixture(scope="module")
def tuned(small_base, tmp_path_factory):
    data = write_splits(tmp_path_factory.mktemp("splits"))
    out = tmp_path_factory.mktemp("routers") / "small"
    card = fine_tune(data, out, EncoderRecipe(encoder=str(small_base), epochs=4, lr=1e-3, train_blocks=1,
                                              batch_size=8), log=lambda m: None)
    return data, out, card


def test_the_card_records_the_run_beside_its_baseline(tuned):
    data, out, card = tuned
    assert card["kind"] == "encoder" and card["teams"] == ["account", "delivery", "payments", "returns"]
    assert card["train"]["trained"] == "the top 1 of 2 blocks and the classifier"
    assert [h["epoch"] for h in card["train"]["history"]] == [1, 2, 3, 4]
    assert set(card["metrics"]) == {"valid", "test"} == set(card["baseline"]["metrics"])
    assert card["metrics"]["valid"]["accuracy"] > 0.5           # four teams: chance is 0.25
    assert card["calibration"]["temperature"] > 0 and card["ood"]["max_distance"] > 0
    assert card["base"]["pins"]["model.safetensors"] and card["base"]["licence"] is None


def test_only_what_changed_is_stored(tuned, small_base):
    _, out, card = tuned
    stored = load_file(out / "encoder.safetensors")
    weights = {k for k in stored if not k.startswith("ood.")}
    assert weights and all(k.startswith(("blocks.1.", "head.")) for k in weights)
    assert {"ood.means", "ood.precision"} <= set(stored)
    assert stored["blocks.1.attn.W_Q.weight"].dtype == torch.float16
    assert card["train"]["stored_parameters"] == sum(stored[k].numel() for k in weights)


def test_the_router_reloads_and_routes_as_its_stored_predictions(tuned):
    data, out, card = tuned
    assert is_router_folder(out) and is_encoder(weights_in(out))
    router = EncoderRouter.load(out)
    table = read_predictions(out / "encoder.safetensors", "test", data / "test.csv")
    assert table is not None and len(table) == 40
    probs = router.predict_texts(table["text"].tolist())
    stored = torch.tensor(table[[f"p_{t}" for t in router.teams]].to_numpy(), dtype=torch.float32)
    assert (probs - stored).abs().max() < 1e-4                  # the table rounds to 4 decimals
    assert round(float(table["correct"].mean()), 4) == round(card["metrics"]["test"]["accuracy"], 4)


def test_the_fine_tune_matches_transformers_with_its_changes_put_back(tuned):
    _, out, _ = tuned
    router = EncoderRouter.load(out)
    encs = [router.encode(t) for t in ("refund my card payment please", "parcel late", "password locked")]
    ids, is_pad = router.batch(encs)
    diffs = parity.differences(router.model, parity.fine_tune_reference(router), ids, is_pad)
    assert max(diffs.values()) < 1e-5, diffs


def test_an_unfamiliar_ticket_is_flagged_by_its_distance(tuned):
    import csv

    data, out, card = tuned
    router = EncoderRouter.load(out)
    test = [r["text"] for r in csv.DictReader((data / "test.csv").open(encoding="utf-8"))]
    near = router.distance(router.pooled([router.encode(t) for t in test]))
    assert (near <= card["ood"]["max_distance"]).double().mean() >= 0.9     # like training: mostly within valid's 99 %
    far = router.assess("zq 9 xv 7 kk 3 jj 0 0 0 0 yy ww 5 5 5 bb")
    assert far.unfamiliar and "distance from the training tickets" in far.message


def test_the_cli_fine_tunes_an_export_and_lists_it(small_base, tmp_path, monkeypatch, capsys):
    import csv

    splits = write_splits(tmp_path / "s", sizes=(("all", 120),))
    export = splits / "all.csv"
    rows = list(csv.DictReader(export.open(encoding="utf-8")))
    assert len(rows) == 120
    routers = tmp_path / "routers"
    monkeypatch.setenv("TICKETNET_ROUTERS", str(routers))
    code = main(["train", "--data", str(export), "--encoder", str(small_base), "--out", str(routers / "mine"),
                 "--epochs", "2", "--lr", "1e-3", "--train-blocks", "all", "--max-len", "32"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "every block, the embeddings and the classifier" in printed and "baseline" in printed
    assert (routers / "mine" / "data" / "train.csv").is_file()
    assert main(["routers", "--json"]) == 0
    listed = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert listed["mine"]["kind"] == "encoder" and listed["larkfield"]["kind"] == "tiny"
    assert listed["mine"]["teams"] == ["account", "delivery", "payments", "returns"]
    assert 0 <= listed["mine"]["valid_accuracy"] <= 1


@pytest.mark.parametrize("extra, message", [
    (["--recipe", "small"], "--recipe is an option of the Tiny router's training, not of an --encoder fine-tune"),
    (["--init-from", "weights", "--blocks", "3"], "--init-from, --blocks are options of the Tiny router's"),
    ([], "--encoder needs --out DIR"),
])
def test_the_cli_refuses_what_does_not_apply(extra, message, capsys):
    out = [] if not extra else ["--out", "/tmp/never-written"]
    assert main(["train", "--encoder", "minilm", *out, *extra]) == 1
    assert message in capsys.readouterr().err


def test_train_blocks_without_an_encoder_is_refused(capsys):
    assert main(["train", "--train-blocks", "2", "--out", "/tmp/never-written"]) == 1
    assert "--train-blocks and --train-sample apply to an --encoder fine-tune" in capsys.readouterr().err


def test_a_changed_pin_is_refused_on_load(tuned, tmp_path):
    import shutil

    _, out, _ = tuned
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    card = json.loads((copy / "router.json").read_text())
    card["base"] = {**card["base"], "encoder": "minilm", "pins": {"model.safetensors": "0" * 64}}
    (copy / "router.json").write_text(json.dumps(card))
    from ticketnet.encoder.files import EncoderError

    with pytest.raises(EncoderError, match="other pins than the installed minilm"):
        EncoderRouter.load(copy)


def test_predict_routes_with_an_encoder_router(tuned, capsys, tmp_path):
    _, out, _ = tuned
    assert main(["predict", "--router", str(out), "--text", "my card payment was charged twice refund"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] in ("account", "delivery", "payments", "returns") and "confidence" in lines[0]
    src = tmp_path / "in.csv"
    src.write_text("ticket_id,text\nA-1,parcel courier late\nA-2,password locked\n", encoding="utf-8")
    assert main(["predict", str(src), "--router", str(out), "--out", str(tmp_path / "out.csv")]) == 0
    rows = (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("ticket_id,team,confidence,p_account") and len(rows) == 3


@pytest.fixture
def tuned_copy(tuned, tmp_path):
    import shutil

    data, out, card = tuned
    copy = tmp_path / "small"
    shutil.copytree(out, copy)
    shutil.copytree(data, copy / "data")                  # its splits beside it, as a router trained on an export
    return copy / "data", copy, card


def test_evaluate_scores_an_encoder_router_beside_its_baseline(tuned_copy, capsys):
    data, out, card = tuned_copy
    assert main(["evaluate", "--router", str(out), "test"]) == 0
    text = capsys.readouterr().out
    assert f"accuracy {card['metrics']['test']['accuracy']:.4f}" in text
    assert f"routes {card['baseline']['metrics']['test']['accuracy']:.4f} of these tickets" in text


def test_baseline_refits_the_same_baseline_and_keeps_the_predictions_fresh(tuned_copy, capsys):
    from ticketnet.predictions import has_predictions

    data, out, card = tuned_copy
    assert main(["baseline", "--router", str(out)]) == 0
    refit = json.loads((out / "router.json").read_text())["baseline"]
    assert refit["metrics"] == card["baseline"]["metrics"] and refit["C"] == card["baseline"]["C"]
    assert has_predictions(out / "encoder.safetensors", "test", data / "test.csv")


def test_policy_and_predictions_run_on_an_encoder_router(tuned_copy, capsys):
    from ticketnet.encoder.card import load_encoder_card
    from ticketnet.policy import load_policy

    data, out, _ = tuned_copy
    assert main(["policy", "--router", str(out), "--precision", "0.9", "--alpha", "0.1"]) == 0
    assert "stored in" in capsys.readouterr().out
    card = load_encoder_card(out)
    policy = load_policy(card)
    team = card.teams[0]
    assert card.confidence_rule(team)[0] == pytest.approx(policy.thresholds.thresholds[team])
    assert main(["predictions", "--router", str(out)]) == 0
    assert "test: 40 tickets" in capsys.readouterr().out
