"""Hugging Face checkpoints into the from-scratch encoder: its config read, every tensor renamed and checked."""

from __future__ import annotations

import re

import torch
from torch import Tensor

from ticketnet.encoder.files import EncoderError, EncoderFolder
from ticketnet.encoder.model import HEADS, EncoderConfig, EncoderModel

PREFIX = {"bert": "bert.", "distilbert": "distilbert.", "roberta": "roberta.", "electra": "electra."}
# Buffers some checkpoints store beside the weights; they hold no learned value.
IGNORED = re.compile(r"(^|\.)(position_ids|token_type_ids)$|pooler\.|lm_head\.|cls\.|vocab_")

_BERT_LAYER = {"attention.self.query": "attn.W_Q", "attention.self.key": "attn.W_K",
               "attention.self.value": "attn.W_V", "attention.output.dense": "attn.W_O",
               "attention.output.LayerNorm": "norm_attn", "intermediate.dense": "ff_in",
               "output.dense": "ff_out", "output.LayerNorm": "norm_ff"}
_DISTIL_LAYER = {"attention.q_lin": "attn.W_Q", "attention.k_lin": "attn.W_K", "attention.v_lin": "attn.W_V",
                 "attention.out_lin": "attn.W_O", "sa_layer_norm": "norm_attn", "ffn.lin1": "ff_in",
                 "ffn.lin2": "ff_out", "output_layer_norm": "norm_ff"}
_EMBED = {"embeddings.word_embeddings": "embed.word", "embeddings.position_embeddings": "embed.position",
          "embeddings.token_type_embeddings": "embed.token_type", "embeddings.LayerNorm": "embed.norm",
          "embeddings_project": "embed.project"}
_HEAD = {"pooler": {"pooler.dense": "head.dense", "classifier": "head.out"},
         "dense_tanh": {"classifier.dense": "head.dense", "classifier.out_proj": "head.out"},
         "dense_gelu": {"classifier.dense": "head.dense", "classifier.out_proj": "head.out"},
         "pre_classifier": {"pre_classifier": "head.dense", "classifier": "head.out"},
         "mean": {}}


def config_of(folder: EncoderFolder, n_classes: int | None = None, head: str | None = None) -> EncoderConfig:
    """The EncoderConfig of a folder's config.json: its own head for a classifier, `head` (default "mean") for a base."""
    c = folder.config
    family = folder.family
    try:
        if family == "distilbert":
            if c.get("sinusoidal_pos_embds"):
                raise EncoderError(f"{folder.path}: sinusoidal position embeddings are not supported")
            d, h, blocks, d_ff = c["dim"], c["n_heads"], c["n_layers"], c["hidden_dim"]
            act, types, eps = c.get("activation", "gelu"), 0, 1e-12
        else:
            d, h, blocks, d_ff = (c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"],
                                  c["intermediate_size"])
            act, types, eps = c.get("hidden_act", "gelu"), c.get("type_vocab_size", 2), c.get("layer_norm_eps", 1e-12)
        classes = n_classes or (len(folder.labels) if folder.classifier else None)
        if not classes:
            raise EncoderError(f"{folder.path}: a base encoder has no teams; fine-tune it with train --encoder")
        return EncoderConfig(
            family=family, vocab_size=c["vocab_size"], d=d, h=h, n_blocks=blocks, d_ff=d_ff,
            max_positions=c.get("max_position_embeddings", 512), type_vocab_size=types, eps=float(eps),
            activation=act, embedding_size=c.get("embedding_size", d) if family == "electra" else d,
            pad_id=c.get("pad_token_id", 1 if family == "roberta" else 0) or 0,
            head=(HEADS[family] if folder.classifier and head is None else head or "mean"), n_classes=classes)
    except KeyError as exc:
        raise EncoderError(f"{folder.path / 'config.json'}: {exc.args[0]} is missing") from None
    except ValueError as exc:
        if isinstance(exc, EncoderError):
            raise
        raise EncoderError(f"{folder.path}: {exc}") from None


def rename(state: dict[str, Tensor], config: EncoderConfig, with_head: bool = True) -> dict[str, Tensor]:
    """A checkpoint's tensors under EncoderModel's names; EncoderError names any tensor left over or missing."""
    return {mine: state[key] for key, mine in names(list(state), config, with_head).items()}


def names(keys: list[str], config: EncoderConfig, with_head: bool = True) -> dict[str, str]:
    """Each checkpoint key -> EncoderModel's name for it (buffers and unused heads left out); EncoderError names a
    tensor this architecture has no place for."""
    prefix = PREFIX[config.family]
    layer_map = _DISTIL_LAYER if config.family == "distilbert" else _BERT_LAYER
    layers = "transformer.layer." if config.family == "distilbert" else "encoder.layer."
    head_map = _HEAD[config.head] if with_head else {}
    out: dict[str, str] = {}
    unused: list[str] = []
    for key in keys:
        name = key.removeprefix(prefix)
        mine = _rename_one(name, layers, layer_map) or _rename_head(key, name, head_map)
        if mine is None:
            if not IGNORED.search(name):
                unused.append(key)
            continue
        out[key] = mine
    if unused:
        raise EncoderError(f"the weights hold {len(unused)} tensor(s) this architecture has no place for, "
                           f"e.g. {unused[0]}; the folder does not match its config.json")
    return out


def _rename_one(name: str, layers: str, layer_map: dict[str, str]) -> str | None:
    stem, _, leaf = name.rpartition(".")
    if stem in _EMBED:
        return f"{_EMBED[stem]}.{leaf}"
    if name.startswith(layers):
        i, _, rest = name[len(layers):].partition(".")
        part, _, leaf = rest.rpartition(".")
        if part in layer_map:
            return f"blocks.{i}.{layer_map[part]}.{leaf}"
    return None


def _rename_head(key: str, name: str, head_map: dict[str, str]) -> str | None:
    for candidate in (key, name):
        stem, _, leaf = candidate.rpartition(".")
        if stem in head_map:
            return f"{head_map[stem]}.{leaf}"
    return None


def build(folder: EncoderFolder, state: dict[str, Tensor], n_classes: int | None = None,
          head: str | None = None) -> EncoderModel:
    """The from-scratch model holding the folder's weights: every tensor placed, none missing (a fresh classifier
    where a base is fine-tuned with the mean head)."""
    config = config_of(folder, n_classes, head)
    model = EncoderModel(config)
    mine = rename(state, config, with_head=folder.classifier and head is None)
    expected = model.state_dict()
    missing = [k for k in expected if k not in mine and not (k.startswith("head.") and not folder.classifier)]
    if missing:
        raise EncoderError(f"{folder.path}: the weights lack {len(missing)} tensor(s) the config asks for, "
                           f"e.g. {missing[0]}")
    wrong = [k for k, v in mine.items() if k in expected and expected[k].shape != v.shape]
    if wrong:
        k = wrong[0]
        raise EncoderError(f"{folder.path}: {k} is {tuple(mine[k].shape)} in the weights but "
                           f"{tuple(expected[k].shape)} by config.json")
    with torch.no_grad():
        model.load_state_dict({**expected, **{k: v.float() for k, v in mine.items()}})
    return model.eval()
