"""A pretrained encoder's vectors of words read alone, as a Tiny router's starting embeddings."""

import json

import pytest
import torch

from ticketnet.encoder.word_vectors import EncoderWordVectors

WORDS = ["refund", "reimbursement", "parcel", "delivery", "password", "login", "broadband", "router"]


@pytest.fixture(scope="module")
def minilm_words():
    return EncoderWordVectors()


def test_words_of_one_meaning_start_side_by_side_at_the_recipes_scale(minilm_words):
    vectors = minilm_words(WORDS, 6, 0.1)
    assert vectors.shape == (8, 6) and float(vectors.std()) == pytest.approx(0.1, rel=1e-4)
    unit = torch.nn.functional.normalize(vectors, dim=1)
    nearest = (unit @ unit.T).fill_diagonal_(-2).argmax(1).tolist()
    assert [WORDS[i] for i in nearest] == ["reimbursement", "refund", "delivery", "parcel", "login", "password",
                                           "router", "broadband"]
    assert minilm_words.record["name"] == "sentence-transformers/all-MiniLM-L6-v2" and minilm_words.seconds > 0
    assert set(minilm_words.record["pins"]) >= {"model.safetensors"}


def test_fewer_words_than_coordinates_fill_the_components_there_are(minilm_words):
    vectors = minilm_words(WORDS[:3], 8, 1.0)
    assert vectors.shape == (3, 8) and torch.equal(vectors[:, 3:], torch.zeros(3, 5))
    with pytest.raises(ValueError, match="at least two words"):
        minilm_words(["alone"], 8, 1.0)


def test_a_router_trained_with_word_vectors_starts_from_them_and_its_card_says_so(tmp_path):
    from ticketnet.data.synth import write_splits
    from ticketnet.train import train
    from ticketnet.training import TrainConfig

    calls = []

    class Recorded:
        record, seconds = {"encoder": "stub", "name": "stub vectors"}, 0.5

        def __call__(self, words, d, scale):
            calls.append((list(words), d, scale))
            return torch.full((len(words), d), 0.25)

    write_splits(tmp_path / "data", sizes=(200, 50, 50))
    card = train(tmp_path / "data", tmp_path / "w", TrainConfig(epochs=1, recipe="small", lr=1e-9),
                 log=lambda *_: None, word_vectors=Recorded())
    from ticketnet import Router

    router = Router.load(tmp_path / "w" / "router.pt")
    (words, d, scale), = calls
    assert words == router.vocab.itos[2:] and (d, scale) == (64, 0.1)
    # At lr 1e-9 the embeddings are where they started: every word at 0.25 (the temperature is in the head only).
    assert torch.allclose(router.model.embed.weight[2:], torch.full((len(words), 64), 0.25), atol=1e-6)
    recorded = json.loads((tmp_path / "w" / "router.json").read_text())["train"]["word_vectors"]
    assert recorded == {"encoder": "stub", "name": "stub vectors", "words": len(words), "seconds": 0.5}
    assert card["train"]["word_vectors"] == recorded
    with pytest.raises(ValueError, match="--init-from keeps the starting router's"):
        train(tmp_path / "data", tmp_path / "w2", TrainConfig(init_from=str(tmp_path / "w")), log=lambda *_: None,
              word_vectors=Recorded())


@pytest.mark.parametrize("extra, message", [
    (["--word-vectors", "minilm", "--encoder", "minilm"], "--word-vectors is an option of the Tiny router's"),
    (["--word-vectors", "no/such/folder"], "no/such/folder"),
])
def test_the_cli_refuses_word_vectors_it_cannot_read_in_one_line(tmp_path, capsys, extra, message):
    from ticketnet.cli import main

    assert main(["train", "--data", str(tmp_path), "--out", str(tmp_path / "w"), *extra]) != 0
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and not (tmp_path / "w").exists()
