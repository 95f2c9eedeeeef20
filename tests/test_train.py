"""Training end to end on a small generated data set: best epoch kept, files written atomically and loadable."""

import json

import pytest

from ticketnet import Router
from ticketnet.data.synth import write_splits
from ticketnet.train import TrainConfig, train


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    out = tmp_path_factory.mktemp("weights")
    write_splits(data, sizes=(400, 100, 100))
    card = train(data, out, TrainConfig(epochs=2, batch_size=32), log=lambda *_: None)
    return data, out, card


def test_training_writes_a_loadable_router(trained):
    data, out, card = trained
    assert sorted(p.name for p in out.iterdir()) == ["router.json", "router.pt", "vocab.json"]
    router = Router.load(out / "router.pt")
    assert json.loads((out / "router.json").read_text()) == router.meta
    assert len(router.vocab) == card["config"]["vocab_size"]
    assert card["train"]["best_epoch"] in (1, 2)
    best = max(h["valid_accuracy"] for h in card["train"]["history"])
    assert card["metrics"]["valid"]["accuracy"] == pytest.approx(best, abs=1e-4)


def test_same_seed_same_weights(trained, tmp_path):
    data, out, _ = trained
    train(data, tmp_path, TrainConfig(epochs=2, batch_size=32), log=lambda *_: None)
    a, b = Router.load(out / "router.pt"), Router.load(tmp_path / "router.pt")
    for (k, v), w in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert (v - w).abs().max() < 1e-5, k


def test_no_temporary_files_left(trained):
    _, out, _ = trained
    assert not [p for p in out.iterdir() if p.name.startswith(".")]
