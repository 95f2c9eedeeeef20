"""A router's map of a split, computed once and kept on disk under the SHA-256 of its files and of the split's CSV."""

# Files under the store's folder (the dashboard's is $TICKETNET_CACHE/maps), every one written atomically:
#   pooled-<split>-w<weights>-d<data>-v1.npz         every ticket's pooled vector and logits, and the ticket ids
#   map-<proj>-<split>-w<weights>-d<data>-s<seed>-n<limit>-v1.parquet   the projected sample, one row per ticket
# New weights (any of router.pt, vocab.json, router.json) or a changed CSV give new names, so nothing stale is read;
# a file that cannot be read counts as absent and is recomputed.

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ticketnet._runtime.atomic import write_atomic
from ticketnet.data.tickets import load_split
from ticketnet.predictions import key_hashes
from ticketnet.ticketmap.neighbours import NEIGHBOURS, nearest
from ticketnet.ticketmap.pooled import pooled_of_texts
from ticketnet.ticketmap.projection import MAP_LIMIT, MAP_SEED, PROJECTIONS, project, seeded_sample

if TYPE_CHECKING:
    import pandas as pd

    from ticketnet.router import Router

VERSION = 1                  # the files' layout; a new layout gets new names


@dataclass(frozen=True)
class Pooled:
    """Every ticket of a split in input order: ids, true teams, pooled vectors (N, d) and logits (N, C), float32."""

    ticket_ids: np.ndarray
    teams: np.ndarray
    vectors: np.ndarray
    logits: np.ndarray


def probabilities(logits: np.ndarray) -> np.ndarray:
    """Softmax over teams, in float64 (the router's own softmax runs in float32; confidences are rounded to 4)."""
    z = np.asarray(logits, dtype=np.float64)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def map_table(router: Router, rows: Sequence[Mapping[str, str]], vectors: np.ndarray, logits: np.ndarray,
              projection: str, seed: int = MAP_SEED, limit: int = MAP_LIMIT) -> pd.DataFrame:
    """The map of `rows` (their pooled `vectors` and `logits` in the same order): for the seeded sample of at most
    `limit` of them (`seeded_sample`), ticket_id, text, team, predicted, confidence, correct, x, y; the projection
    is fitted on the sample's vectors alone. What a split's map and a scan sample's map are both made of."""
    import pandas as pd

    keep = seeded_sample(len(rows), limit, seed)
    xy = project(vectors[keep], projection, seed)
    probs = probabilities(logits[keep])
    teams = np.asarray(router.teams, dtype=object)
    table = pd.DataFrame({
        "ticket_id": [rows[i]["ticket_id"] for i in keep],
        "text": [rows[i]["text"] for i in keep],
        "team": [rows[i].get("team", "") or "" for i in keep],
        "predicted": teams[probs.argmax(axis=1)] if len(keep) else [],
        "confidence": probs.max(axis=1).round(4) if len(keep) else [],
    })
    table["correct"] = table["team"].eq(table["predicted"])
    table["x"], table["y"] = xy[:, 0], xy[:, 1]
    return table


@dataclass(frozen=True)
class MapStore:
    """The map results of the router at `weights` (already loaded as `router`) on its splits, under `root`."""

    root: Path
    router: Router
    weights: Path
    workers: int = 1
    seed: int = MAP_SEED
    limit: int = MAP_LIMIT

    def _name(self, split_csv: Path, hashes: tuple[str, str] | None) -> str:
        weights_hash, data_hash = hashes or key_hashes(Path(self.weights), Path(split_csv))
        return f"w{weights_hash[:16]}-d{data_hash[:16]}"

    def pooled_path(self, split: str, split_csv: Path, hashes: tuple[str, str] | None = None) -> Path:
        return Path(self.root) / f"pooled-{split}-{self._name(split_csv, hashes)}-v{VERSION}.npz"

    def map_path(self, projection: str, split: str, split_csv: Path, hashes: tuple[str, str] | None = None) -> Path:
        if projection not in PROJECTIONS:
            raise ValueError(f"unknown projection {projection!r}; expected one of {', '.join(PROJECTIONS)}")
        return Path(self.root) / (f"map-{projection.lower()}-{split}-{self._name(split_csv, hashes)}-s{self.seed}"
                                  f"-n{self.limit}-v{VERSION}.parquet")

    def pooled(self, split: str, split_csv: Path, hashes: tuple[str, str] | None = None,
               rows: Sequence[Mapping[str, str]] | None = None) -> Pooled:
        """Every ticket's pooled vector and logits on the split, from disk, else computed and stored. `rows`: the
        split's rows when the caller has read them already (else read from `split_csv`)."""
        path = self.pooled_path(split, split_csv, hashes)
        try:
            with np.load(path, allow_pickle=False) as found:
                return Pooled(found["ticket_ids"], found["teams"], found["vectors"], found["logits"])
        except (OSError, ValueError, KeyError, EOFError):
            pass                                             # absent, truncated or foreign: compute
        rows = load_split(split_csv) if rows is None else rows
        vectors, logits = pooled_of_texts(self.router, [r["text"] for r in rows], workers=self.workers)
        done = Pooled(np.asarray([r["ticket_id"] for r in rows], dtype=str),
                      np.asarray([r.get("team", "") or "" for r in rows], dtype=str), vectors, logits)
        buffer = io.BytesIO()
        np.savez(buffer, ticket_ids=done.ticket_ids, teams=done.teams, vectors=vectors, logits=logits)
        _write_quietly(path, buffer.getvalue())
        return done

    def split_map(self, projection: str, split: str, split_csv: Path, hashes: tuple[str, str] | None = None,
                  rows: Sequence[Mapping[str, str]] | None = None) -> pd.DataFrame:
        """`map_table` of the split by `projection`, from disk, else computed (pooled vectors from `pooled`) and
        stored."""
        import pandas as pd

        path = self.map_path(projection, split, split_csv, hashes)
        try:
            return pd.read_parquet(path)
        except Exception:                                    # noqa: BLE001 - absent or unreadable: compute
            pass
        rows = load_split(split_csv) if rows is None else rows
        pooled = self.pooled(split, split_csv, hashes, rows)
        table = map_table(self.router, rows, pooled.vectors, pooled.logits, projection, self.seed, self.limit)
        buffer = io.BytesIO()
        table.to_parquet(buffer, index=False)
        _write_quietly(path, buffer.getvalue())
        return table

    def neighbours(self, vector: np.ndarray, train_csv: Path, hashes: tuple[str, str] | None = None,
                   k: int = NEIGHBOURS, exclude_id: str | None = None) -> pd.DataFrame:
        """The k training tickets nearest to `vector` in the pooled space (`nearest`: exact, euclidean), nearest
        first: rank, ticket_id, team (its label), distance. `exclude_id`: a training ticket to leave out (the
        ticket itself)."""
        import pandas as pd

        train = self.pooled("train", train_csv, hashes)
        hits = np.flatnonzero(train.ticket_ids == exclude_id) if exclude_id is not None else []
        idx, dist = nearest(train.vectors, vector, k, exclude=[int(hits[0]) if len(hits) else None])
        return pd.DataFrame({"rank": np.arange(1, idx.shape[1] + 1), "ticket_id": train.ticket_ids[idx[0]],
                             "team": train.teams[idx[0]], "distance": dist[0]})


def _write_quietly(path: Path, data: bytes) -> None:
    """Store a result; an unwritable folder only costs a recompute next time."""
    try:
        write_atomic(path, data)
    except OSError:
        pass
