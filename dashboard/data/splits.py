"""The splits: their rows, routed and scored by the router, and the split-wide results kept in memory and on disk."""

# Split-wide tables (the routed split, its interpretation, its head importance) are computed on request under one
# lock, kept in memory for every session, and written to the cache folder (data/store.py) keyed by the SHA-256
# of the weights and of the split's CSV, so the first session after a restart reads them back.

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.data import store
from dashboard.data.model import card, data_folder, router, weights_path, weights_stamp
from dashboard.data.store import stamp
from dashboard.text import fail
from ticketnet import paths, predictions
from ticketnet._runtime.hashing import file_sha256
from ticketnet._runtime.priority import background_priority
from ticketnet.data.tickets import HARD_PATTERNS, DataError, load_split

SPLITS: tuple[str, ...] = ("valid", "test", "train", "handwritten")   # handwritten: by hand, never trained on
HEAD_CHUNK = 128          # tickets per head-masking pass: small enough for a progress bar that moves (12 steps on valid)

def split_path(split: str) -> Path:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    return data_folder() / f"{split}.csv"


def data_stamp(split: str) -> tuple:
    """A cache key that changes when the split's CSV changes."""
    return stamp(split_path(split))


@st.cache_data(show_spinner=False, max_entries=6)
def _split_rows(split: str, key: tuple, teams: tuple[str, ...]) -> pd.DataFrame:
    df = pd.DataFrame(load_split(split_path(split), teams))
    for col in ("evidence", "pattern", "distractor"):
        if col not in df.columns:
            df[col] = ""
    return df.fillna("")


def split_rows(split: str) -> pd.DataFrame:
    """The split's rows as a DataFrame (ticket_id, text, team, evidence, pattern, distractor)."""
    try:
        return _split_rows(split, data_stamp(split), tuple(card().teams))
    except DataError as exc:
        fail(f"The {split} split could not be read.", str(exc),
             f"Regenerate the data with `.venv/bin/python -m ticketnet synth`, or point the environment variable "
             f"`{paths.DATA_ENV}` at a folder holding `train.csv`, `valid.csv` and `test.csv`, then reload this page.")


def available() -> list[str]:
    """The splits this router's data has, in SPLITS order (valid, test and train always; handwritten where
    written)."""
    return [s for s in SPLITS if s in SPLITS[:3] or split_path(s).is_file()]


@st.cache_resource(show_spinner=False, max_entries=6)
def _ticket_index(split: str, key: tuple, teams: tuple[str, ...]) -> tuple[pd.DataFrame, dict[str, int]]:
    """One split's rows, shared and only read, and ticket id -> row position, built once per version of its CSV:
    every page's run looks its ticket up, and the copy of the split's table that st.cache_data hands out per
    lookup cost more than the page's own layout."""
    rows = _split_rows(split, key, teams)
    positions: dict[str, int] = {}
    for i, ticket_id in enumerate(rows["ticket_id"].tolist()):
        positions.setdefault(ticket_id, i)                            # the first of a repeated id, as before
    return rows, positions


def find_ticket(ticket_id: str) -> tuple[str, dict] | None:
    """(split, row) of a ticket id, looking in valid, test, then train; None if no split has it."""
    for split in SPLITS:
        if not split_path(split).is_file():
            continue
        try:
            rows, positions = _ticket_index(split, data_stamp(split), tuple(card().teams))
        except DataError:
            continue
        if ticket_id in positions:
            return split, rows.iloc[positions[ticket_id]].to_dict()
    return None


# -- split-wide tables, one lock, in memory and on disk --------------------------------------------------------------
@dataclass
class _Store:
    lock: threading.Lock
    tables: dict
    hashes: dict                  # (weights, split CSV, their stamps) -> their key hashes, under `hashes_lock`
    hashes_lock: threading.Lock   # not `lock`, which a split-wide run holds for seconds


@st.cache_resource
def _split_store() -> _Store:
    return _Store(threading.Lock(), {}, {}, threading.Lock())


def key_hashes(split: str) -> tuple[str, str]:
    """`ticketnet.predictions.key_hashes` of the current weights and the split's CSV, hashed once per file change.
    Kept in the split store (a dict lookup): every page run asks for them several times, and `st.cache_data`'s
    hashing of the arguments and copy of the result cost more than the lookup itself. The split-wide tables and the
    ticket map name their files by them."""
    weights, csv = weights_path(), split_path(split)
    key = (str(weights), str(csv), weights_stamp(), data_stamp(split))
    kept = _split_store()
    with kept.hashes_lock:
        if key not in kept.hashes:
            if len(kept.hashes) >= 16:                 # files replaced under a running server: keep the newest
                kept.hashes.pop(next(iter(kept.hashes)))
            kept.hashes[key] = predictions.key_hashes(weights, csv)
        return kept.hashes[key]


def _stored(split: str, kind: str) -> pd.DataFrame | None:
    """The split's table of `kind` from memory, else from disk (then kept in memory), else None. A routed table may
    also come with the weights (`ticketnet.predictions`: written by training for exactly these weights and data)."""
    tables, key = _split_store().tables, (kind, split, data_stamp(split), weights_stamp())
    if key not in tables:
        found = store.load_table(store.table_path(kind, split, *key_hashes(split)))
        if found is None and kind == "routed":
            found = predictions.read_predictions(weights_path(), split, split_path(split), key_hashes(split))
        if found is None:
            return None
        tables[key] = found
    return tables[key]


BACKGROUND_KINDS = ("interpret", "heads")    # split-wide runs of many seconds, asked for by one analyst


def _compute(split: str, kind: str, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The split's table of `kind`, computed under the lock unless another session has stored it meanwhile; kept in
    memory and on disk (best effort: an unwritable cache only costs a recompute). The long split-wide runs go at a
    lower scheduling priority, so other sessions' page runs keep the cores they need meanwhile."""
    with _split_store().lock:
        done = _stored(split, kind)
        if done is not None:
            return done
        nice = paths.split_nice() if kind in BACKGROUND_KINDS else 0
        with background_priority(nice) if nice else contextlib.nullcontext():
            table = compute()
        _split_store().tables[(kind, split, data_stamp(split), weights_stamp())] = table
        store.save_table(store.table_path(kind, split, *key_hashes(split)), table)
        return table


def computed_splits(kind: str) -> list[str]:
    """The splits whose table of `kind` ("interpret" or "heads") exists, in memory or on disk."""
    return [s for s in SPLITS if split_path(s).is_file() and _stored(s, kind) is not None]


# -- the routed split and the router's quality on it ----------------------------------------------------------------
def _route_split(split: str) -> pd.DataFrame:
    # Every core: this runs once per split and server (then it is on disk), often on the very first page.
    return predictions.routed_table(router(), split_rows(split).to_dict("records"), workers=os.cpu_count() or 1)


def split_table(split: str) -> pd.DataFrame:
    """Every ticket of the split with the router's prediction: ticket_id, text, team, predicted, confidence,
    tokens, pattern, correct, truncated, p_<team>."""
    split_rows(split)                                  # fails readably first
    card()
    # Kept like the split-wide results: routing the 1,500 tickets of the first page is most of a restart's script
    # run once the imports are done. One table is shared by every session: each gets its own copy to filter and sort.
    done = _stored(split, "routed")
    if done is None:
        try:
            with st.spinner("Routing every ticket of the split…"):
                done = _compute(split, "routed", lambda: _route_split(split))
        except ValueError as exc:                      # a ticket with no token at all
            fail(f"The {split} split could not be routed.", str(exc), "Fix or remove that ticket, then reload.")
    return done.copy()


def quality(split: str) -> dict:
    """ticketnet.metrics.summarize of the router on the split (accuracy, per-team P/R/F1, confusion)."""
    from ticketnet.metrics import summarize

    df = split_table(split)
    teams = list(card().teams)
    y = np.array([teams.index(t) for t in df["team"]])
    hard = df["pattern"].isin(HARD_PATTERNS).to_numpy()
    return summarize(df[[f"p_{t}" for t in teams]].to_numpy(), y, tuple(teams), hard)


@st.cache_data(show_spinner=False, max_entries=16)
def _file_sha256(path: str, key: tuple) -> str:
    return file_sha256(path)


def baseline(split: str) -> dict | None:
    """The bag-of-words baseline's figures on the split (accuracy, macro F1, recall per team) as recorded in
    router.json, when it was measured on exactly this CSV; else None."""
    meta = card().meta
    recorded = meta.get("baseline", {}).get("metrics", {}).get(split)
    path = split_path(split)
    if recorded is None or not path.is_file():
        return None
    if meta.get("data_sha256", {}).get(split) != _file_sha256(str(path), stamp(path)):
        return None
    return recorded


def routed_probs(split: str, ticket_id: str) -> list[float] | None:
    """The ticket's team probabilities (rounded to 4 decimals, in the card's team order) from its split's routed
    table, if that table is at hand (in memory or on disk) and holds the ticket; else None. Needs no model."""
    if split not in SPLITS or not split_path(split).is_file():
        return None
    table = _stored(split, "routed")
    row = None if table is None else table.loc[table["ticket_id"] == ticket_id]
    if row is None or not len(row):
        return None
    return [float(row.iloc[0][f"p_{t}"]) for t in card().teams]


# -- interpretation and head importance of a whole split ------------------------------------------------------------
def split_interpretation(split: str) -> pd.DataFrame | None:
    """The split's interpretation table if it was computed already (by anyone, before a restart too), else None."""
    return _stored(split, "interpret")


def compute_split_interpretation(split: str, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """ticketnet.interpret.interpret_split over the split (target: predicted team), stored for reuse."""
    from ticketnet.interpret import interpret_split

    return _compute(split, "interpret", lambda: interpret_split(router(), split_rows(split).to_dict("records"),
                                                                progress=progress))


def head_importance(split: str) -> pd.DataFrame | None:
    """block, head, accuracy (head masked), accuracy_drop, support_logit_diff and support_prob (the head's mean
    support for the true team: unmasked − masked) on the split, if computed already (before a restart too), else
    None."""
    return _stored(split, "heads")


def _head_importance(split: str, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    from ticketnet.interpret.methods.heads import head_importance_by_length

    r, rows = router(), split_rows(split)
    teams = list(r.teams)
    return head_importance_by_length(r, [r.encode(t).ids for t in rows["text"]],
                                     [teams.index(t) for t in rows["team"]], HEAD_CHUNK, progress, pad_id=r.pad_id)


def compute_head_importance(split: str, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Mask each head in turn over the split (Michel et al. 2019); `progress(done, total)` after each chunk of
    tickets; stored for reuse."""
    return _compute(split, "heads", lambda: _head_importance(split, progress))
