"""A team's own fine-tuned classifier, saved with save_pretrained, is a router: listed, its card read, opened."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from ticketnet import catalog
from ticketnet.card import WeightsError
from ticketnet.encoder import parity
from ticketnet.loading import load_any_card, load_router


@pytest.fixture
def classifier_folder(saved_classifiers, small_base, tmp_path):
    folder = tmp_path / "routers" / "team-bert"
    shutil.copytree(saved_classifiers["bert"], folder)
    shutil.copy(small_base / "tokenizer.json", folder / "tokenizer.json")    # its pieces fit the 120-row table
    return folder


def test_a_saved_classifier_is_listed_and_opened(classifier_folder, monkeypatch):
    monkeypatch.setenv("TICKETNET_ROUTERS", str(classifier_folder.parent))
    assert catalog.list_routers()["team-bert"] == classifier_folder
    weights = catalog.weights_in(classifier_folder)
    assert weights.name == "model.safetensors" and catalog.is_encoder(weights)
    card = load_any_card(weights)
    assert card.teams == ("billing", "it support", "shipping")
    router = load_router(weights)
    assert router.kind == "encoder" and router.config.head == "pooler"
    probs = router.predict_texts(["refund my card payment please", "parcel courier late"])
    assert probs.shape == (2, 3) and torch.allclose(probs.sum(1), torch.ones(2))
    enc = router.encode("refund my card payment please")
    ids, is_pad = router.batch([enc])
    diffs = parity.differences(router.model, parity.reference_for(router), ids, is_pad)
    assert max(diffs.values()) < 1e-5


def test_labels_that_name_no_team_are_refused_with_the_way_out(classifier_folder):
    config = json.loads((classifier_folder / "config.json").read_text())
    config["id2label"] = {"0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}
    (classifier_folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(WeightsError, match="names its teams only LABEL_0 … LABEL_2; write the team names"):
        load_any_card(catalog.weights_in(classifier_folder))
    from ticketnet.encoder.router import EncoderRouter

    with pytest.raises(WeightsError, match=r"names its teams only LABEL_0 … LABEL_2; write the team names into "
                                           r"config.json's id2label \(in code: EncoderRouter.load\(folder, teams="):
        EncoderRouter.load(classifier_folder)
    router = EncoderRouter.load(classifier_folder, teams=["a", "b", "c"])
    assert router.teams == ("a", "b", "c")
