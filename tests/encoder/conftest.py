"""Small random models of each supported architecture, saved as a team would save them, and MiniLM's pinned files."""

from __future__ import annotations

import pytest
import torch

from ticketnet.encoder.files import set_offline

set_offline()

SMALL = dict(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
             max_position_embeddings=64)
LABELS = {0: "billing", 1: "it support", 2: "shipping"}


def small_classifier(arch: str):
    """A random *ForSequenceClassification of `arch` with three named teams (dropout off, so parity is exact)."""
    import transformers as tf

    common = dict(num_labels=3, id2label=LABELS, label2id={v: k for k, v in LABELS.items()})
    torch.manual_seed(0)
    if arch == "distilbert":
        cfg = tf.DistilBertConfig(vocab_size=120, dim=32, n_layers=2, n_heads=4, hidden_dim=48,
                                  max_position_embeddings=64, **common)
        return tf.DistilBertForSequenceClassification(cfg)
    if arch == "electra":
        return tf.ElectraForSequenceClassification(tf.ElectraConfig(**SMALL, embedding_size=16, **common))
    if arch == "roberta":
        return tf.RobertaForSequenceClassification(tf.RobertaConfig(**SMALL, pad_token_id=1, **common))
    if arch == "xlm-roberta":
        return tf.XLMRobertaForSequenceClassification(tf.XLMRobertaConfig(**SMALL, pad_token_id=1, **common))
    return tf.BertForSequenceClassification(tf.BertConfig(**SMALL, **common))


ARCHS = ("bert", "distilbert", "roberta", "xlm-roberta", "electra")


@pytest.fixture(scope="session")
def saved_classifiers(tmp_path_factory) -> dict:
    """Each architecture's random classifier saved with save_pretrained (model.safetensors + config.json)."""
    out = {}
    for arch in ARCHS:
        folder = tmp_path_factory.mktemp(arch)
        model = small_classifier(arch)
        # Random weights near zero leave every row of attention almost uniform; spread them so parity means something.
        with torch.no_grad():
            for name, p in model.named_parameters():
                if p.dim() == 2 and "embeddings" not in name:
                    p.mul_(8.0)
        model.save_pretrained(folder, safe_serialization=True)
        out[arch] = folder
    return out


WORDS = ("refund invoice charge charged twice card payment bank parcel courier delivery late arrived tracking return "
         "returned label broken screen faulty battery password login account locked email address change my the "
         "was is not and a to please help i you hello thanks order").split()


@pytest.fixture(scope="session")
def small_base(tmp_path_factory):
    """A random 2-block BERT base model with its own WordPiece tokenizer: what `--encoder FOLDER` reads, small enough
    to fine-tune in seconds."""
    return make_small_base(tmp_path_factory.mktemp("small-base"))


def make_small_base(folder):
    """`small_base` written into `folder`."""
    import transformers as tf
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = dict.fromkeys(specials + list(WORDS) + ["##s", "##ed", "##ing", "."] + list("abcdefghijklmnopqrstuvwxyz0123456789"))
    vocab = {t: i for i, t in enumerate(pieces)}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2),
                                                                                                  ("[SEP]", 3)])
    tok.save(str(folder / "tokenizer.json"))
    torch.manual_seed(0)
    cfg = tf.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=48, max_position_embeddings=64)
    tf.BertModel(cfg).save_pretrained(folder, safe_serialization=True)
    return folder


TEAM_WORDS = {"payments": "refund invoice charge charged card payment bank",
              "delivery": "parcel courier delivery late arrived tracking",
              "returns": "return returned label refund parcel",
              "account": "password login account locked email address change"}


def write_splits(folder, sizes=(("train", 80), ("valid", 40), ("test", 40)), seed=0):
    """Small splits of four teams, each ticket a few of its team's words among common ones."""
    import csv
    import random

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    common = "my the was is not please help hello thanks order".split()
    n = 0
    for name, size in sizes:
        with open(folder / f"{name}.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=["ticket_id", "text", "team"])
            w.writeheader()
            for i in range(size):
                team = list(TEAM_WORDS)[i % 4]
                words = rng.sample(TEAM_WORDS[team].split(), 2) + rng.sample(common, 3)
                rng.shuffle(words)
                n += 1
                w.writerow({"ticket_id": f"S-{n:04d}", "text": " ".join(words), "team": team})
    return folder
