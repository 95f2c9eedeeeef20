"""From one export file to a router folder: split, trained, baselined, written in one swap, on any team names."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from ticketnet import Router, load_split, predictions
from ticketnet.__main__ import main
from ticketnet.data.export import ExportColumns
from ticketnet.data.synth import generate
from ticketnet.train import train_export
from ticketnet.training import TrainConfig

NAMES = {"payments": "Billing & Refunds", "delivery": "tier-2", "returns": "réseau", "product": "网络"}


def write_export(path, n_per_team=60):
    rows = [r for r in generate(5, (2000, 10, 10))["train"] if r["team"] in NAMES]
    picked = pd.concat([pd.DataFrame([r for r in rows if r["team"] == t][:n_per_team]) for t in NAMES])
    export = pd.DataFrame({"id": picked.ticket_id, "subject": picked.text.str.split(".").str[0],
                           "body": picked.text, "queue": picked.team.map(NAMES)})
    export.to_csv(path, index=False)
    return path


COLUMNS = ExportColumns(("subject", "body"), "queue", "id", id_given=True)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    export = write_export(tmp / "export.csv")
    out = tmp / "routers" / "mine"
    card = train_export(export, out, COLUMNS, cfg=TrainConfig(epochs=2, seed=3), log=lambda _m: None)
    return export, out, card


def test_the_router_folder_holds_its_splits_weights_card_and_predictions(trained):
    export, out, card = trained
    assert sorted(p.name for p in out.iterdir()) == ["data", "predictions", "router.json", "router.pt", "vocab.json"]
    assert sorted(p.name for p in (out / "data").iterdir()) == ["test.csv", "train.csv", "valid.csv"]
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")], "a staging folder was left behind"
    router = Router.load(out / "router.pt")
    assert router.teams == tuple(sorted(NAMES.values())) and router.model.config.n_classes == 4
    assert json.loads((out / "router.json").read_text(encoding="utf-8")) == router.meta == card
    splits = {s: load_split(out / "data" / f"{s}.csv", router.teams) for s in ("train", "valid", "test")}
    assert {s: len(rows) for s, rows in splits.items()} == {"train": 192, "valid": 24, "test": 24}
    assert card["export"]["split_tickets"] == {"train": 192, "valid": 24, "test": 24}
    assert splits["train"][0]["text"].count("\n") == 1                     # subject and body, one per line
    valid = predictions.read_predictions(out / "router.pt", "valid", out / "data" / "valid.csv")
    assert valid["correct"].mean() == pytest.approx(card["metrics"]["valid"]["accuracy"], abs=1e-9)
    assert set(valid.columns) >= {f"p_{t}" for t in router.teams}


def test_small_data_takes_the_small_recipe_and_records_a_baseline_beside_the_router(trained):
    _, _, card = trained
    t = card["train"]
    assert (t["recipe"], t["lr"], t["embed_scale"], t["dropout"], t["weight_decay"]) == ("small", 1e-2, 0.1, 0.3, 0.1)
    assert t["epochs"] == 2 and card["config"]["dropout"] == 0.3        # --epochs given, the rest from the recipe
    assert (t["batch_size"], t["min_freq"], t["average_last"], t["averaged_epochs"]) == (32, 1, 10, [1, 2])
    base = card["baseline"]
    assert base["C"] in (1.0, 10.0, 100.0) and set(base["metrics"]) == {"valid", "test"}
    assert base["metrics"]["test"]["accuracy"] > 0.5                    # four teams: chance is 0.25
    assert set(base["metrics"]["test"]["recall"]) == set(NAMES.values())
    lo, hi = card["metrics"]["test"]["accuracy_interval"]
    assert lo <= card["metrics"]["test"]["accuracy"] <= hi and hi - lo > 0.2     # 24 tickets: a wide interval


def test_an_interrupted_retrain_leaves_the_folder_as_it_was(trained, tmp_path):
    export, out, _ = trained
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def interrupt(message: str) -> None:
        if message.startswith("epoch"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_export(export, out, COLUMNS, cfg=TrainConfig(epochs=2, seed=4), log=interrupt)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]


def test_the_model_shape_is_an_option_recorded_and_honoured(trained, tmp_path):
    export, _, _ = trained
    out = tmp_path / "narrow"
    assert main(["train", "--data", str(export), "--out", str(out), "--text-column", "subject",
                 "--text-column", "body", "--team-column", "queue", "--id-column", "id", "--epochs", "1",
                 "--d", "32", "--heads", "2", "--blocks", "1", "--d-ff", "64", "--max-len", "64"]) == 0
    router = Router.load(out / "router.pt")
    c = router.model.config
    assert (c.d, c.h, c.n_blocks, c.d_ff, c.max_len, c.n_classes) == (32, 2, 1, 64, 64, 4)
    assert len(router.model.blocks.layers) == 1


def test_a_split_seed_keeps_the_splits_while_the_run_seed_changes(trained, tmp_path, capsys):
    # Two seeds of one export share their splits when they share a split seed, so Compare can set them side by side.
    export, out, card = trained
    other = tmp_path / "seed7"
    assert main(["train", "--data", str(export), "--out", str(other), "--text-column", "subject,body",
                 "--team-column", "queue", "--id-column", "id", "--epochs", "1", "--seed", "7",
                 "--split-seed", str(card["export"]["split_seed"])]) == 0
    for split in ("train", "valid", "test"):
        assert (other / "data" / f"{split}.csv").read_bytes() == (out / "data" / f"{split}.csv").read_bytes()
    meta = json.loads((other / "router.json").read_text(encoding="utf-8"))
    assert meta["export"]["split_seed"] == 3 and meta["train"]["seed"] == 7
    assert main(["train", "--data", str(tmp_path), "--split-seed", "1"]) == 1           # a folder: no split to seed
    assert "--split-seed apply to --data FILE" in capsys.readouterr().err


@pytest.mark.parametrize("args,message", [
    (["--team-column", "team"], r"no column 'team' \(columns found: id, subject, body, queue\)"),
    (["--team-column", "queue", "--split", "0.9,0.1"], "--split '0.9,0.1': expected three fractions"),
    (["--team-column", "queue", "--split", "0.98,0.01,0.01"], r"has 60 ticket\(s\); a 0.98/0.01/0.01 split needs at least 100"),
    (["--team-column", "queue", "--d", "30"], "--d 30 is not a multiple of --heads 4"),
])
def test_bad_input_is_one_line_and_writes_nothing(trained, tmp_path, capsys, args, message):
    export, _, _ = trained
    out = tmp_path / "never"
    assert main(["train", "--data", str(export), "--out", str(out), "--epochs", "1", "--text-column", "subject,body",
                 *args]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ticketnet train: error:")
    import re
    assert re.search(message, err[0]), err[0]
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_folder_that_is_not_a_router_is_never_replaced(trained, tmp_path, capsys):
    export, _, _ = trained
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["train", "--data", str(export), "--out", str(tmp_path), "--team-column", "queue",
                 "--text-column", "body"]) == 1
    assert "is not a folder made by this command" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"



def test_weight_average_is_the_mean_of_the_states_added():
    import torch

    from ticketnet.training import WeightAverage

    states = [{"w": torch.full((2, 3), float(i)), "b": torch.tensor([i * 0.1])} for i in (1, 2, 6)]
    average = WeightAverage()
    with pytest.raises(ValueError):
        average.mean()
    for state in states:
        average.add(state)
    mean = average.mean()
    assert torch.equal(mean["w"], torch.full((2, 3), 3.0)) and mean["b"].item() == pytest.approx(0.3)
    assert states[0]["w"][0, 0].item() == 1.0                     # the states added are left as they were


def test_a_terminated_train_leaves_no_staging_folder_behind(trained, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    export, _, _ = trained
    out = tmp_path / "routers" / "mine"
    proc = subprocess.Popen([sys.executable, "-m", "ticketnet", "train", "--data", str(export), "--out", str(out),
                             "--text-column", "subject,body", "--team-column", "queue", "--epochs", "40"],
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:                               # wait until training has begun
        if line.startswith("epoch"):
            break
    staged = [p for p in out.parent.iterdir() if p.name.startswith(".")]
    assert staged, "training stages its folder beside --out"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    time.sleep(0.1)
    assert not out.exists() and not [p for p in out.parent.iterdir() if p.name.startswith(".")]
