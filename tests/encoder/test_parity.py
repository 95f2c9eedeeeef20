"""The from-scratch encoder equals transformers' eager forward on every supported architecture and on MiniLM."""

from __future__ import annotations

import pytest
import torch

from ticketnet.encoder import files, parity, weights
from tests.encoder.conftest import ARCHS

LENGTHS = (9, 6, 3)


def padded_batch(vocab: int, pad_id: int, first: int, last: int):
    g = torch.Generator().manual_seed(3)
    n = max(LENGTHS)
    ids = torch.randint(5, vocab, (len(LENGTHS), n), generator=g)
    is_pad = torch.arange(n)[None, :] >= torch.tensor(LENGTHS)[:, None]
    ids[:, 0] = first
    for row, length in enumerate(LENGTHS):
        ids[row, length - 1] = last
    return ids.masked_fill(is_pad, pad_id), is_pad


@pytest.mark.parametrize("arch", ARCHS)
def test_each_architecture_matches_transformers(saved_classifiers, arch):
    folder = files.read_folder(saved_classifiers[arch])
    assert folder.classifier and folder.labels == ["billing", "it support", "shipping"]
    model = weights.build(folder, files.load_state(folder.path))
    ref = parity.reference_model(folder)
    ids, is_pad = padded_batch(120, model.config.pad_id, 2, 3)
    diffs = parity.differences(model, ref, ids, is_pad)
    assert set(diffs) == {"embed", "logits", *(f"blocks.{i}.{k}" for i in range(2) for k in ("attn.pattern",
                                                                                              "resid_post"))}
    assert max(diffs.values()) < 1e-5, diffs
    # The check can fail: a weight changed in the copy shows at once.
    with torch.no_grad():
        model.blocks[1].attn.W_K.weight[0, 0] += 0.5
    assert parity.differences(model, ref, ids, is_pad)["blocks.1.attn.pattern"] > 1e-4


def test_heads_follow_each_family(saved_classifiers):
    heads = {arch: weights.config_of(files.read_folder(saved_classifiers[arch])).head for arch in ARCHS}
    assert heads == {"bert": "pooler", "distilbert": "pre_classifier", "roberta": "dense_tanh",
                     "xlm-roberta": "dense_tanh", "electra": "dense_gelu"}
    cfg = weights.config_of(files.read_folder(saved_classifiers["distilbert"]))
    assert cfg.type_vocab_size == 0
    assert weights.config_of(files.read_folder(saved_classifiers["electra"])).embedding_size == 16
    assert weights.config_of(files.read_folder(saved_classifiers["roberta"])).position_offset == 2


def test_minilm_matches_transformers_with_mean_pooling():
    folder = files.read_folder(files.minilm_folder())
    assert (folder.family, folder.architecture, folder.classifier) == ("bert", "BertModel", False)
    model = weights.build(folder, files.load_state(folder.path), n_classes=5)
    assert model.config.head == "mean" and (model.config.n_blocks, model.config.h, model.config.d) == (6, 12, 384)
    tok = files.load_tokenizer(folder.path, model.config.vocab_size)
    texts = ["My invoice was charged twice, please refund", "Cannot log in to the VPN since the update"]
    encs = [tok.encode(t) for t in texts]
    n = max(len(e.ids) for e in encs)
    ids = torch.tensor([e.ids + [0] * (n - len(e.ids)) for e in encs])
    is_pad = torch.tensor([[False] * len(e.ids) + [True] * (n - len(e.ids)) for e in encs])
    diffs = parity.differences(model, parity.reference_model(folder), ids, is_pad)
    assert len(diffs) == 2 + 2 * 6
    assert max(diffs.values()) < 1e-5, diffs


def test_each_rows_tolerance_grows_with_the_values_compared_as_torch_testing_does():
    folder = files.read_folder(files.minilm_folder())
    model = weights.build(folder, files.load_state(folder.path), n_classes=5)
    tok = files.load_tokenizer(folder.path, model.config.vocab_size)
    ids = torch.tensor([tok.encode("The parcel never arrived and the courier says it was delivered").ids])
    is_pad = torch.zeros_like(ids, dtype=torch.bool)
    ref = parity.reference_model(folder)
    rows = {name: pair for name, pair in parity.compared(model, ref, ids, is_pad).items()}
    with torch.no_grad():
        hidden = ref(input_ids=ids, output_hidden_states=True).hidden_states
    top = float(hidden[6].abs().max())
    assert top > 5                                                    # post-norm hidden states are not small
    assert rows["blocks.5.resid_post"][1] == pytest.approx(parity.ATOL + parity.RTOL * top, rel=1e-6)
    assert rows["blocks.0.attn.pattern"][1] < 1.2e-5                  # probabilities: about the floor
    assert all(diff <= tol for diff, tol in rows.values()), rows
