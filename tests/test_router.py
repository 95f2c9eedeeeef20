"""Loading the shipped router and refusing every kind of bad weights with one readable message."""

import functools
import json
import pickle
import shutil
from pathlib import Path

import pytest
import torch

from ticketnet import TEAMS, WEIGHTS, Router, WeightsError, data_dir, load_split
from ticketnet.data.text import Vocab, tokenize

ROOT = Path(__file__).resolve().parents[1]
T65052 = ("It's not a delivery problem and I keep the leaf blower. My card was charged twice for one order. "
          "Can you remove the duplicate charge?")


@pytest.fixture(scope="module")
def router():
    return Router.load()


@pytest.fixture()
def copy(tmp_path):
    for name in ("router.pt", "vocab.json", "router.json"):
        shutil.copy(WEIGHTS.parent / name, tmp_path / name)
    return tmp_path


def test_shipped_paths():
    assert WEIGHTS == ROOT / "weights" / "router.pt" and data_dir() == ROOT / "data"


def test_vocab_rebuilt_from_train_equals_the_shipped_one(router):
    rows = load_split(data_dir() / "train.csv")
    assert Vocab([r["text"] for r in rows], min_freq=router.meta["train"]["min_freq"]) == router.vocab


def test_shipped_card_records_the_training_data(router):
    from ticketnet.router import file_sha256

    assert router.meta["teams"] == list(TEAMS)
    for split in ("train", "valid", "test"):
        assert router.meta["data_sha256"][split] == file_sha256(data_dir() / f"{split}.csv")


def test_t65052_is_routed_to_payments(router):
    probs = router.predict_texts([T65052])[0]
    assert TEAMS[int(probs.argmax())] == "payments"
    assert abs(float(probs.sum()) - 1) < 1e-6


def test_shipped_model_meets_its_targets(router):
    test = router.meta["metrics"]["test"]
    assert test["accuracy"] >= 0.93
    assert test["hard_accuracy"] >= 0.85
    assert test["accuracy"] < 0.995, "a perfect router means the data is too easy"


def test_recorded_test_metrics_are_reproduced(router):
    from ticketnet.train import evaluate

    again = evaluate(router.model, load_split(data_dir() / "test.csv"), router.vocab)
    assert again["accuracy"] == pytest.approx(router.meta["metrics"]["test"]["accuracy"], abs=1e-9)


def test_long_ticket_is_truncated_and_says_so(router):
    enc = router.encode("mower " * 300)
    assert enc.truncated and len(enc.ids) == router.max_len == 256 and enc.n_total == 300
    assert router.predict_texts(["mower " * 300]).shape == (1, 5)


def test_empty_ticket_is_refused_with_a_reason(router):
    with pytest.raises(ValueError, match="no words"):
        router.encode("   \n\t ")


def test_missing_files(tmp_path):
    with pytest.raises(WeightsError, match="not found"):
        Router.load(tmp_path / "router.pt")


def test_truncated_weights(copy):
    data = (copy / "router.pt").read_bytes()
    (copy / "router.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(WeightsError, match="cannot be loaded as plain weights"):
        Router.load(copy / "router.pt")


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_pickle_that_is_not_a_state_dict_is_refused(copy):
    class Evil:
        def __reduce__(self):
            return (print, ("this must never run",))

    (copy / "router.pt").write_bytes(pickle.dumps(Evil()))
    with pytest.raises(WeightsError, match="cannot be loaded as plain weights"):
        Router.load(copy / "router.pt")
    torch.save({"model": torch.nn.Linear(2, 2)}, copy / "router.pt")
    with pytest.raises(WeightsError):
        Router.load(copy / "router.pt")


def test_weights_from_another_vocabulary(copy):
    itos = json.loads((copy / "vocab.json").read_text())
    (copy / "vocab.json").write_text(json.dumps(itos[:-5]))
    with pytest.raises(WeightsError, match="different trainings"):
        Router.load(copy / "router.pt")


def test_weights_from_another_config(copy):
    meta = json.loads((copy / "router.json").read_text())
    meta["config"]["d_ff"] = 256
    (copy / "router.json").write_text(json.dumps(meta))
    with pytest.raises(WeightsError, match="does not fit the configuration"):
        Router.load(copy / "router.pt")


def test_corrupt_card(copy):
    (copy / "router.json").write_text("{")
    with pytest.raises(WeightsError, match="not a router description"):
        Router.load(copy / "router.pt")


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st


@functools.cache
def shipped_router() -> Router:
    return Router.load()


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_routed_or_refused_with_a_reason(text):
    router = shipped_router()
    if not tokenize(text):
        with pytest.raises(ValueError, match="no words"):
            router.encode(text)
        return
    enc = router.encode(text)
    probs = router.predict_texts([text])
    assert probs.shape == (1, 5) and torch.isfinite(probs).all()
    assert abs(float(probs.sum()) - 1) < 1e-5 and len(enc.ids) <= 256
