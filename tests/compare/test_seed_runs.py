"""`train --seeds ... --keep-all-seeds`: every seed's run stays a router folder the dashboard lists, to compare."""

from __future__ import annotations

import pytest

from tests.conftest import ODD_TEAMS, write_other_export
from ticketnet import Router, predictions
from ticketnet.data.synth import write_splits
from ticketnet.train import SEEDS_FOLDER, train_export, train_seeds
from ticketnet.training import TrainConfig

CFG = TrainConfig(epochs=1, batch_size=32, recipe="large")


def _same_weights(a: Router, b: Router) -> bool:
    return all((v - w).abs().max() < 1e-6 for v, w in zip(a.model.state_dict().values(),
                                                            b.model.state_dict().values()))


def test_every_seed_run_is_kept_as_a_router_folder(tmp_path, monkeypatch):
    data, out = tmp_path / "data", tmp_path / "routers" / "mine"
    write_splits(data, sizes=(300, 80, 80))
    kept = train_seeds([4, 9], data, out, CFG, log=lambda *_: None, keep_all=True)
    runs = out / SEEDS_FOLDER
    assert sorted(p.name for p in runs.iterdir()) == ["seed-4", "seed-9"]
    for seed in (4, 9):
        folder = runs / f"seed-{seed}"
        router = Router.load(folder / "router.pt")
        assert router.meta["train"]["seed"] == seed
        # its own predictions, valid for its own weights
        assert predictions.has_predictions(folder / "router.pt", "test", data / "test.csv")
    best = runs / f"seed-{kept['train']['seed']}"
    assert _same_weights(Router.load(out / "router.pt"), Router.load(best / "router.pt"))
    assert not [p for p in out.iterdir() if p.name.startswith(".")]

    from dashboard.data import model

    monkeypatch.setenv("TICKETNET_ROUTERS", str(out.parent))
    listed = model.routers()
    assert listed["mine"] == out
    assert listed["mine/seed-4"] == runs / "seed-4" and listed["mine/seed-9"] == runs / "seed-9"


def test_without_keep_all_no_run_is_left(tmp_path):
    data, out = tmp_path / "data", tmp_path / "mine"
    write_splits(data, sizes=(300, 80, 80))
    train_seeds([4], data, out, CFG, log=lambda *_: None)
    assert not (out / SEEDS_FOLDER).exists()


def test_an_export_s_seed_runs_carry_its_splits(tmp_path):
    from ticketnet.data.export import ExportColumns
    from ticketnet.paths import router_data

    export = write_other_export(tmp_path / "export.csv", ODD_TEAMS[:4], 30)
    out = tmp_path / "helpdesk"
    train_export(export, out, ExportColumns(("subject", "body"), "queue", "id", id_given=True),
                 cfg=TrainConfig(epochs=1, seed=5, d=32, heads=4, blocks=1, d_ff=64), seeds=[5, 6],
                 log=lambda *_: None, keep_all=True)
    for seed in (5, 6):
        folder = out / SEEDS_FOLDER / f"seed-{seed}"
        assert router_data(folder) == folder / "data"                   # not the shipped Larkfield splits
        assert (folder / "data" / "test.csv").read_bytes() == (out / "data" / "test.csv").read_bytes()
        assert predictions.has_predictions(folder / "router.pt", "test", folder / "data" / "test.csv")


def test_the_cli_asks_for_seeds():
    from ticketnet.__main__ import main

    assert main(["train", "--keep-all-seeds", "--out", "/nonexistent/x"]) == 1


@pytest.mark.parametrize("argv", [["train", "--seeds", "0-1", "--keep-all-seeds"]])
def test_the_cli_parses_the_flag(argv):
    from ticketnet.__main__ import build_parser

    args = build_parser().parse_args(argv)
    assert args.keep_all_seeds and args.seeds == [0, 1]
