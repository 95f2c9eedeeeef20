"""The router's predictions on its evaluation splits, kept beside its weights so they can be shown without the model."""

# `python -m ticketnet train` (or `python -m ticketnet predictions` for existing weights) writes one Parquet table per
# split into `predictions/` beside router.pt, and a manifest with the SHA-256 of the router's three files and of each
# split's CSV. A reader gets a table only while both still match: new weights or regenerated data make it absent,
# never stale. The dashboard's first page draws from these on a fresh machine before torch has even loaded.

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ticketnet._runtime.atomic import write_atomic
from ticketnet._runtime.hashing import files_hash
from ticketnet.card import POLICY_KEY, card_json_bytes, weights_files

if TYPE_CHECKING:
    import pandas as pd

    from ticketnet.router import Router

FOLDER = "predictions"
MANIFEST = "manifest.json"
SPLITS = ("valid", "test", "handwritten")          # the splits a reader looks at first; train is 60,000 tickets


def router_hash(weights: Path) -> str:
    """SHA-256 of the router's three files, as `files_hash` takes it, with router.json read as it was before a
    routing policy was stored in it: the policy says how predictions are acted on, so storing or changing one keeps
    every stored prediction and interpretation table of the router fresh. A card without a policy hashes exactly as
    its bytes (what every manifest written before policies recorded)."""
    import hashlib

    files = weights_files(weights)
    try:
        meta = json.loads(files[2].read_bytes())
    except (OSError, ValueError):
        meta = None
    if not isinstance(meta, dict) or POLICY_KEY not in meta:
        return files_hash(files)
    h = hashlib.sha256()
    for path in files[:2]:
        h.update(path.name.encode() + b"\0")
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"\0missing")
    without = {k: v for k, v in meta.items() if k != POLICY_KEY}
    h.update(files[2].name.encode() + b"\0" + card_json_bytes(without))
    return h.hexdigest()


def key_hashes(weights: Path, split_csv: Path) -> tuple[str, str]:
    """(`router_hash` of the router, SHA-256 of the split's CSV): what a table of this router's predictions on this
    CSV is keyed by, here and in the dashboard's disk store (about 10 ms for the shipped files)."""
    return router_hash(weights), files_hash([split_csv])


def routed_table(router: Router, rows: Sequence[Mapping[str, str]], workers: int = 1) -> pd.DataFrame:
    """Every ticket of `rows` (ticket_id, text, team, pattern) with the router's prediction: ticket_id, text, team,
    predicted, confidence, tokens, pattern, correct, truncated, set_aside_chars (of an e-mail's quoted history and
    signature, not read) and p_<team> (probabilities rounded to 4 decimals). Raises ValueError for a ticket with no
    token."""
    import numpy as np
    import pandas as pd

    encoded = [router.encode(r["text"]) for r in rows]
    probs = router.predict_encoded(encoded, workers=workers)
    conf, pred = probs.max(dim=1)
    teams = list(router.teams)
    df = pd.DataFrame({
        "ticket_id": [r["ticket_id"] for r in rows],
        "text": [r["text"] for r in rows],
        "team": [r.get("team", "") for r in rows],
        "predicted": [teams[i] for i in pred.tolist()],
        "confidence": conf.double().numpy().round(4),
        "tokens": [len(e.ids) for e in encoded],
        "pattern": [r.get("pattern", "") or "" for r in rows],
    })
    df["correct"] = df["team"].eq(df["predicted"])
    df["truncated"] = [e.truncated for e in encoded]
    df["set_aside_chars"] = np.array([e.set_aside_chars for e in encoded], dtype=np.int32)
    for i, t in enumerate(teams):
        df[f"p_{t}"] = probs[:, i].double().numpy().round(4)
    return df


def write_predictions(router: Router, weights: Path, data: Path, splits: Iterable[str] = SPLITS) -> dict:
    """Route every split of `splits` found in `data` and write the tables and the manifest into `predictions/` beside
    `weights` (each file atomically, the manifest last). Returns the manifest."""
    import io

    from ticketnet.data.tickets import load_split

    folder = Path(weights).parent / FOLDER
    manifest: dict = {"weights_sha256": router_hash(weights), "splits": {}}
    for split in splits:
        csv = Path(data) / f"{split}.csv"
        if not csv.is_file():
            continue
        table = routed_table(router, load_split(csv))
        buffer = io.BytesIO()
        table.to_parquet(buffer, index=False)
        write_atomic(folder / f"{split}.parquet", buffer.getvalue())
        manifest["splits"][split] = {"data_sha256": files_hash([csv]), "tickets": len(table),
                                     "accuracy": round(float(table["correct"].mean()), 4)}
    write_atomic(folder / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
    return manifest


def _entry(weights: Path, split: str, split_csv: Path, hashes: tuple[str, str] | None) -> Path | None:
    folder = Path(weights).parent / FOLDER
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        entry = manifest["splits"][split]
        weights_hash, data_hash = hashes or key_hashes(weights, split_csv)
        if manifest["weights_sha256"] != weights_hash or entry["data_sha256"] != data_hash:
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    path = folder / f"{split}.parquet"
    return path if path.is_file() else None


def has_predictions(weights: Path, split: str, split_csv: Path, hashes: tuple[str, str] | None = None) -> bool:
    """Whether predictions of exactly this router on exactly this CSV are stored (hashes only; no pandas).
    `hashes`: their `key_hashes`, when the caller has them already."""
    return _entry(weights, split, split_csv, hashes) is not None


def read_predictions(weights: Path, split: str, split_csv: Path,
                     hashes: tuple[str, str] | None = None) -> pd.DataFrame | None:
    """The stored predictions of this router on this CSV (`routed_table`'s columns), or None when there are none,
    they belong to other weights or other data, or the file cannot be read. `hashes`: as for `has_predictions`."""
    path = _entry(weights, split, split_csv, hashes)
    if path is None:
        return None
    import pandas as pd

    try:
        return pd.read_parquet(path)
    except Exception:                     # noqa: BLE001 - truncated or foreign file: route instead
        return None
