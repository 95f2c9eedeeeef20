"""A team's own classifier folder (a DistilBERT saved with save_pretrained, its own head) opened by every page."""

from __future__ import annotations

import shutil

import pytest
import torch

from tests.conftest import HEADS, INTERPRETATION, app_test
from tests.encoder.conftest import TEAM_WORDS, make_small_base, write_splits

NAME = "team-distilbert"


@pytest.fixture(scope="module")
def classifier_routers(tmp_path_factory):
    """routers/team-distilbert: config.json, model.safetensors and tokenizer.json as a team saves them, with the
    team's splits in data/ (no router.json: the dashboard reads the folder as it is)."""
    import transformers as tf

    base = make_small_base(tmp_path_factory.mktemp("base"))
    routers = tmp_path_factory.mktemp("routers")
    folder = routers / NAME
    teams = list(TEAM_WORDS)
    vocab = len(__import__("json").loads((base / "tokenizer.json").read_text())["model"]["vocab"])
    torch.manual_seed(1)
    cfg = tf.DistilBertConfig(vocab_size=vocab, dim=32, n_layers=2, n_heads=4, hidden_dim=48,
                              max_position_embeddings=64, num_labels=len(teams),
                              id2label=dict(enumerate(teams)), label2id={t: i for i, t in enumerate(teams)})
    model = tf.DistilBertForSequenceClassification(cfg)
    with torch.no_grad():                 # spread the random weights: near-uniform attention would prove little
        for name, p in model.named_parameters():
            if p.dim() == 2 and "embeddings" not in name:
                p.mul_(6.0)
    model.save_pretrained(folder, safe_serialization=True)
    shutil.copy(base / "tokenizer.json", folder / "tokenizer.json")
    write_splits(folder / "data")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TICKETNET_ROUTERS", str(routers))
        yield routers


def _open(page: str, routers, **query):
    import csv

    with open(routers / NAME / "data" / "test.csv", encoding="utf-8") as f:
        ticket = next(csv.DictReader(f))["ticket_id"]
    at = app_test(timeout=120, router=NAME, ticket=ticket, **query)
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_the_picker_lists_the_classifier_as_an_encoder_with_the_teams_of_its_config(classifier_routers):
    from ticketnet.catalog import list_routers

    assert NAME in list_routers()
    at = _open("../pages/tickets.py", classifier_routers)
    picker = at.sidebar.selectbox(key="router_picker")
    assert picker.value == NAME
    assert picker.format_func(NAME) == f"{NAME} · 4 teams · encoder"             # the teams of its id2label


def test_heads_draws_each_layer_of_the_classifier(classifier_routers):
    at = _open(HEADS, classifier_routers)
    assert [s.value for s in at.subheader][0] == "Layer 1: its 4 heads"
    at.segmented_control(key="block").set_value(2).run()
    assert not at.exception and [s.value for s in at.subheader][0] == "Layer 2: its 4 heads"


def test_verification_matches_transformers_on_distilberts_own_head(classifier_routers):
    at = _open("../pages/verification.py", classifier_routers)
    verdicts = [s.value for s in at.success]
    assert len(verdicts) == 2 and all("checks pass" in v for v in verdicts)
    n_pass, n_all = (int(x) for x in verdicts[1].split()[0:3:2])
    assert n_pass == n_all == 2 * (2 + 2 * 2)             # embed, logits, 2 layers × (attention, hidden state)


def test_interpretation_and_formula_read_the_classifier_by_word_and_by_piece(classifier_routers):
    at = _open(INTERPRETATION, classifier_routers)
    assert "What mattered, word by word" in [s.value for s in at.subheader]
    table = at.dataframe[0].value
    assert {"word", "removed", "rollout", "integrated gradients"} <= set(table.columns)
    assert table["removed"].abs().max() > 0
    at = _open("../pages/formula.py", classifier_routers)
    at.segmented_control(key="formula_section").set_value("Your ticket's head").run()
    assert not at.exception, [e.message for e in at.exception]
    values = {m.label: m.value for m in at.metric}
    assert values["d_k"] == "8" and float(values["|here − the router|, whole head"]) < 1e-5
