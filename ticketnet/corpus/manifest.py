"""SCAN_DIR/manifest.json: what made a scan (weights, input, versions, level) and where each partition stands."""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path

from ticketnet._runtime.hashing import files_hash
from ticketnet.card import weights_files
from ticketnet.catalog import CLASSIFIER_WEIGHTS

MANIFEST = "manifest.json"
FORMAT = 2
LIBRARIES = ("torch", "dask", "distributed", "pyarrow", "pandas", "numpy", "duckdb", "tokenizers", "safetensors")


class ScanError(ValueError):
    """A scan that cannot go on as asked; the message says why and what to do."""


def weights_hash(weights: str | Path) -> str:
    """SHA-256 over router.pt, vocab.json and router.json: the three files that decide every number (an encoder
    router's encoder.safetensors, tokenizer.json and router.json; a team's classifier's model.safetensors, its
    config.json and the tokenizer.json it has)."""
    weights = Path(weights)
    if weights.name == CLASSIFIER_WEIGHTS:
        tokenizer = weights.parent / "tokenizer.json"
        return files_hash([weights, weights.parent / "config.json", *([tokenizer] if tokenizer.is_file() else [])],
                          missing_ok=False)
    return files_hash(weights_files(weights), missing_ok=False)


def versions() -> dict[str, str]:
    out = {}
    for name in ("ticketnet", *LIBRARIES):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def read(out: str | Path) -> dict | None:
    path = Path(out) / MANIFEST
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None                        # half-written by a crash before writes were atomic: treat as foreign


def write(out: str | Path, manifest: dict) -> None:
    path = Path(out) / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def check_same_scan(out: Path, old: dict, new: dict) -> None:
    """Refuse to mix two scans in one folder: other weights, another input, level or partitioning."""
    for key, what in (("weights", "other weights"), ("input", "another input")):
        if old.get(key, {}).get("sha256") != new[key]["sha256"]:
            raise ScanError(f"{out} holds a scan made with {what} ({old.get(key, {}).get('path')}); "
                            "use another --out, or --overwrite to start it afresh")
    for key in ("format", "level", "partition_size"):
        if old.get(key) != new[key]:
            raise ScanError(f"{out} holds a scan made with {key.replace('_', ' ')} {old.get(key)} (asked: {new[key]}); "
                            "use another --out, or --overwrite to start it afresh")
