"""Encoder folders: the pins, safetensors only, supported architectures, and one readable error for each bad folder."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from ticketnet.encoder import files, weights
from ticketnet.encoder.files import EncoderError


def test_minilm_is_found_in_the_wheel_and_matches_its_pins():
    folder = files.minilm_folder()
    assert (folder / "model.safetensors").stat().st_size > 80_000_000
    for name, pin in files.MINILM_PINS.items():
        assert files.sha256(folder / name) == pin
    assert files.resolve("minilm") == (folder, files.MINILM_PINS)


def test_a_changed_file_is_refused_by_its_pin(tmp_path):
    src = files.minilm_folder()
    for name in ("config.json", "vocab.txt", "tokenizer.json"):
        shutil.copy(src / name, tmp_path / name)
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(EncoderError, match=r"model.safetensors: sha256 .* does not match the pin"):
        files.check_pins(tmp_path, files.MINILM_PINS)
    (tmp_path / "vocab.txt").unlink()
    with pytest.raises(EncoderError, match="vocab.txt is missing; the pinned encoder"):
        files.check_pins(tmp_path, {"vocab.txt": files.MINILM_PINS["vocab.txt"]})


def _folder(tmp_path, config: dict | None, **extra: bytes):
    tmp_path.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    for name, data in extra.items():
        (tmp_path / name.replace("__", ".")).write_bytes(data)
    return tmp_path


BERT = {"model_type": "bert", "architectures": ["BertForSequenceClassification"], "hidden_size": 32,
        "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 48, "vocab_size": 120,
        "id2label": {"0": "billing", "1": "it"}}


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "nowhere", "no such folder"),
    (lambda p: _folder(p, None), "no config.json here"),
    (lambda p: _folder(p, None, config__json=b"{not json"), "not readable JSON"),
    (lambda p: _folder(p, {**BERT, "model_type": "gpt2", "architectures": ["GPT2ForSequenceClassification"]}),
     "GPT2ForSequenceClassification is not supported; supported are BERT, DistilBERT, RoBERTa/XLM-R and ELECTRA"),
    (lambda p: _folder(p, {**BERT, "auto_map": {"AutoModel": "x.Model"}}), "remote code is never run"),
    (lambda p: _folder(p, BERT, pytorch_model__bin=b"pickle"), r"only pickled weights \(pytorch_model.bin\)"),
    (lambda p: _folder(p, BERT, model__pt=b"pickle"), r"only pickled weights \(model.pt\)"),
    (lambda p: _folder(p, BERT), "no model.safetensors here"),
    (lambda p: _folder(p, {**BERT, "position_embedding_type": "relative_key"}, model__safetensors=b"x"),
     "relative_key position embeddings are not supported"),
])
def test_bad_folders_get_one_sentence(tmp_path, make, message):
    with pytest.raises(EncoderError, match=message):
        files.read_folder(make(tmp_path / "f"))


def test_corrupt_safetensors_and_missing_tokenizer(tmp_path):
    folder = _folder(tmp_path, BERT, model__safetensors=b"\x00" * 64)
    with pytest.raises(EncoderError, match="not a readable safetensors file"):
        files.load_state(folder)
    with pytest.raises(EncoderError, match="no tokenizer here"):
        files.load_tokenizer(folder, 120)


def test_a_tokenizer_larger_than_the_embedding_table_is_refused(tmp_path):
    shutil.copy(files.minilm_folder() / "tokenizer.json", tmp_path / "tokenizer.json")
    with pytest.raises(EncoderError, match="the tokenizer has 30,522 pieces but the model's embedding table only 120"):
        files.load_tokenizer(tmp_path, 120)


def test_a_tokenizer_built_from_vocab_txt_alone(tmp_path):
    src = files.minilm_folder()
    for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json", "config.json"):
        shutil.copy(src / name, tmp_path / name)
    tok = files.load_tokenizer(tmp_path, 30522)
    ref = files.load_tokenizer(src, 30522)
    text = "Refund my invoice, the VPN broke"
    assert tok.encode(text).tokens == ref.encode(text).tokens


def test_weights_that_do_not_fit_the_config(saved_classifiers, tmp_path):
    folder = files.read_folder(saved_classifiers["bert"])
    state = files.load_state(folder.path)
    state["bert.encoder.layer.0.attention.self.query.weight"] = torch.zeros(8, 8)
    with pytest.raises(EncoderError, match=r"blocks.0.attn.W_Q.weight is \(8, 8\) in the weights but \(32, 32\)"):
        weights.build(folder, state)
    state = files.load_state(folder.path)
    del state["classifier.weight"]
    with pytest.raises(EncoderError, match="the weights lack 1 tensor"):
        weights.build(folder, state)
    state = files.load_state(folder.path)
    state["bert.encoder.rel_pos.weight"] = torch.zeros(2)
    with pytest.raises(EncoderError, match="no place for, e.g. bert.encoder.rel_pos.weight"):
        weights.build(folder, state)


def test_generic_labels_are_named_as_such(tmp_path):
    folder = _folder(tmp_path, {**BERT, "id2label": {"0": "LABEL_0", "1": "LABEL_1"}}, model__safetensors=b"x")
    assert files.read_folder(folder).generic_labels
    assert not files.read_folder(_folder(tmp_path / "b", BERT, model__safetensors=b"x")).generic_labels


def test_a_base_model_has_no_teams_without_a_fine_tune():
    folder = files.read_folder(files.minilm_folder())
    with pytest.raises(EncoderError, match="a base encoder has no teams; fine-tune it with train --encoder"):
        weights.config_of(folder)
