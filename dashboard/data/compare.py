"""The Compare page's data: two routers by name, their routed splits, the comparison, each cached on the routers' files."""

# Every table is cached with st.cache_data on both routers' `model.files_stamp` (router.pt, vocab.json, router.json)
# and the split CSV's stamp, so new weights or data never reuse an old result; models with st.cache_resource, one per
# router file version, shared by every session. A routed split is the router's stored predictions/ when they match
# (`ticketnet.compare.tables.routed_split`), so a page on two routers with stored predictions routes nothing. The
# per-head divergence of a pair is also kept on disk (keyed by both routers' SHA-256 and the CSV's), and each
# router's head importance is the Heads page's own table (`store.table_path("heads", …)`), computed by either page.

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from dashboard.data import model, store
from dashboard.data.splits import HEAD_CHUNK, SPLITS
from dashboard.data.store import stamp
from ticketnet import paths, predictions
from ticketnet._runtime.hashing import file_sha256
from ticketnet.card import RouterCard, WeightsError
from ticketnet.catalog import weights_in

if TYPE_CHECKING:
    from ticketnet.router import Router

RESAMPLES = 2000                  # paired bootstrap resamples of every interval on the page (seeded)
SEED = 0


# -- the routers by name -------------------------------------------------------------------------------------------------
def names() -> list[str]:
    """Every router a session can open (`model.routers()`: the default one, those under routers/, kept seed runs)."""
    return list(model.routers())


def folder(name: str) -> Path:
    return model.routers()[name]


def _weights(name: str) -> Path:
    return weights_in(folder(name))


def _key(name: str) -> tuple:
    """What a cached result of this router is keyed by: its weights path and `model.files_stamp`."""
    weights = _weights(name)
    return str(weights), model.files_stamp(weights)


def card(name: str) -> RouterCard | None:
    """The router's card (teams, vocabulary, router.json) without its weights, or None when it cannot be read."""
    try:
        return model.card_at(_weights(name))
    except WeightsError:
        return None


def label(name: str) -> str:
    """"retrain · 5 teams", as the sidebar's router list says it."""
    found = card(name)
    return f"{name} (cannot be read)" if found is None else f"{name} · {len(found.teams)} teams"


def default_pair(available: list[str], current: str) -> tuple[str, str]:
    """The pair the page opens on: A is the router the session reads (`current`), B the next router after it that
    routes to the same teams (a retrain of it), else the next one."""
    a = current if current in available else available[0]
    teams = None if card(a) is None else set(card(a).teams)
    after = available[available.index(a) + 1:] + available[:available.index(a)]
    same = [n for n in after if teams is not None and card(n) is not None and set(card(n).teams) == teams]
    return a, (same or after)[0]


@st.cache_resource(show_spinner="Loading the router…", max_entries=4)
def _router(weights: str, key: tuple) -> Router:
    from ticketnet.loading import load_router

    r = load_router(weights)
    r.model.eval()
    r.model.requires_grad_(False)          # shared by every session and only ever read (see model._load_router)
    return r


def router(name: str) -> Router:
    model.use_server_threads()
    return _router(*_key(name))


# -- splits both routers read ------------------------------------------------------------------------------------------------
def _csv(name: str, split: str) -> Path:
    return paths.router_data(folder(name)) / f"{split}.csv"


@st.cache_data(show_spinner=False, max_entries=64)
def _sha256(path: str, key: tuple) -> str:
    return file_sha256(path)


def _digest(path: Path) -> str | None:
    found = stamp(path)
    return None if found[1] < 0 else _sha256(str(path), found)


def shared_splits(a: str, b: str) -> list[str]:
    """The split names both routers' data have with the same CSV (byte for byte), in SPLITS order: the tickets the
    two can be compared on."""
    out = []
    for split in SPLITS:
        da, db = _digest(_csv(a, split)), _digest(_csv(b, split))
        if da is not None and da == db:
            out.append(split)
    return out


def _teams_of(a: str, b: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return card(a).teams, card(b).teams


@st.cache_data(show_spinner="Reading the routers' predictions…", max_entries=16)
def _routed(router_folder: str, csv: str, key: tuple, csv_key: tuple, teams: tuple[str, ...]) -> pd.DataFrame:
    from ticketnet.compare.tables import routed_split

    return routed_split(Path(router_folder), csv, teams)


def routed(name: str, split: str, teams: tuple[str, ...]) -> pd.DataFrame:
    """The router's routed table of the split (its stored predictions when they match, else routed now); `teams`:
    every team a ticket may have (both routers' teams)."""
    csv = _csv(name, split)
    return _routed(str(folder(name)), str(csv), _key(name), stamp(csv), teams)


def _pair(a: str, b: str, split: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    teams_a, teams_b = _teams_of(a, b)
    either = tuple(dict.fromkeys([*teams_a, *teams_b]))
    return routed(a, split, either), routed(b, split, either)


def _pair_key(a: str, b: str, split: str) -> tuple:
    return _key(a), _key(b), split, stamp(_csv(a, split))


# -- the comparison --------------------------------------------------------------------------------------------------------
@st.cache_data(show_spinner="Comparing the routers (paired bootstrap)…", max_entries=8)
def _summary(a: str, b: str, split: str, key: tuple) -> dict:
    from ticketnet.compare import compare_tables

    ta, tb = _pair(a, b, split)
    teams_a, teams_b = _teams_of(a, b)
    return compare_tables(ta, tb, teams_a, teams_b, resamples=RESAMPLES, seed=SEED)


def summary(a: str, b: str, split: str) -> dict | str:
    """`ticketnet.compare.compare_tables` of the two routers on the split, or one line saying why there is none (the
    routers share no team, or no ticket of a team both know)."""
    try:
        return _summary(a, b, split, _pair_key(a, b, split))
    except ValueError as exc:
        return str(exc)


@st.cache_data(show_spinner=False, max_entries=8)
def _flips(a: str, b: str, split: str, key: tuple) -> pd.DataFrame:
    from ticketnet.compare import flip_table

    ta, tb = _pair(a, b, split)
    return flip_table(ta, tb, *_teams_of(a, b))


def flips(a: str, b: str, split: str) -> pd.DataFrame:
    """`ticketnet.compare.flip_table`: the tickets one router routes right and the other wrong, or both wrong."""
    return _flips(a, b, split, _pair_key(a, b, split))


@st.cache_data(show_spinner=False, max_entries=8)
def _deltas(a: str, b: str, split: str, key: tuple) -> pd.DataFrame:
    from ticketnet.compare import team_deltas

    ta, tb = _pair(a, b, split)
    return team_deltas(ta, tb, *_teams_of(a, b), resamples=RESAMPLES, seed=SEED)


def team_deltas(a: str, b: str, split: str) -> pd.DataFrame:
    """`ticketnet.compare.team_deltas`: per team, B − A precision and recall with paired intervals."""
    return _deltas(a, b, split, _pair_key(a, b, split))


def split_ticket(a: str, b: str, split: str, ticket_id: str) -> dict | None:
    """The split's row of `ticket_id` with both routers' predictions (team, predicted_a/_b, confidence_a/_b), or
    None when the split has no such ticket."""
    ta, tb = _pair(a, b, split)
    ra, rb = ta[ta["ticket_id"] == ticket_id], tb[tb["ticket_id"] == ticket_id]
    if not len(ra) or not len(rb):
        return None
    row, other = ra.iloc[0], rb.iloc[0]
    return {"ticket_id": ticket_id, "text": row["text"], "team": row["team"], "pattern": row.get("pattern", ""),
            "predicted_a": row["predicted"], "confidence_a": float(row["confidence"]),
            "predicted_b": other["predicted"], "confidence_b": float(other["confidence"])}


# -- one ticket through both routers -----------------------------------------------------------------------------------
@st.cache_data(show_spinner="Running the ticket through the router…", max_entries=64)
def _inspection(weights: str, key: tuple, text: str):
    return _router(weights, key).inspect(text)


def is_encoder(name: str) -> bool:
    """Whether router `name` is a pretrained encoder (it reads pieces, not the Tiny router's tokens)."""
    return model.is_encoder(_weights(name))


def inspection(name: str, text: str):
    """The router's `inspect` of the ticket (its attention patterns, probabilities), either kind."""
    model.use_server_threads()
    return _inspection(*_key(name), text)


@st.cache_data(show_spinner="Deleting each token in turn, in both routers…", max_entries=64)
def _deletion(key_a: tuple, key_b: tuple, text: str, unit: str):
    from ticketnet.compare import deletion_agreement

    return deletion_agreement(_router(*key_a), _router(*key_b), text, unit)


def deletion(a: str, b: str, text: str, unit: str):
    """`ticketnet.compare.deletion_agreement`: both routers' deletion effects and their Kendall τ."""
    model.use_server_threads()
    return _deletion(_key(a), _key(b), text, unit)


# -- per head across the split --------------------------------------------------------------------------------------------
def shape_problem(a: str, b: str) -> str | None:
    """Why the two routers' heads cannot be paired (different blocks or heads), from their cards; None if they can."""
    from ticketnet.compare import shape_mismatch

    return shape_mismatch(card(a).meta["config"], card(b).meta["config"])


@st.cache_data(show_spinner=False, max_entries=32)
def _key_hashes(weights: str, key: tuple, csv: str, csv_key: tuple) -> tuple[str, str]:
    return predictions.key_hashes(Path(weights), Path(csv))


def _hashes(name: str, split: str) -> tuple[str, str]:
    """`ticketnet.predictions.key_hashes` of the router and the split's CSV, hashed once per version of the files."""
    csv = _csv(name, split)
    return _key_hashes(*_key(name), str(csv), stamp(csv))


def _divergence_path(a: str, b: str, split: str) -> Path:
    (ha, hd), (hb, _) = _hashes(a, split), _hashes(b, split)
    return store.cache_dir() / "compare" / f"heads-{split}-a{ha[:16]}-b{hb[:16]}-d{hd[:16]}.parquet"


@st.cache_data(show_spinner=False, max_entries=8)
def _stored_divergence(a: str, b: str, split: str, key: tuple) -> pd.DataFrame | None:
    return store.load_table(_divergence_path(a, b, split))


def stored_divergence(a: str, b: str, split: str) -> pd.DataFrame | None:
    """The pair's per-head divergence on the split if computed already (in this process or before a restart)."""
    return _stored_divergence(a, b, split, _pair_key(a, b, split))


def compute_divergence(a: str, b: str, split: str) -> pd.DataFrame:
    """`ticketnet.compare.attention_divergence` over every ticket of the split, kept on disk for the pair."""
    from ticketnet.compare import attention_divergence

    model.use_server_threads()
    ta, _ = _pair(a, b, split)
    table = attention_divergence(router(a), router(b), list(ta["text"]))
    store.save_table(_divergence_path(a, b, split), table)
    _stored_divergence.clear()
    return table


def importance(name: str, split: str) -> pd.DataFrame | None:
    """The router's head importance on the split (the Heads page's table), if computed already, else None."""
    return store.load_table(store.table_path("heads", split, *_hashes(name, split)))


def compute_importance(name: str, split: str, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Mask each head of the router in turn over the split's tickets (`ticketnet.compare.head_importance_on`, the
    Heads page's measure), kept on disk where the Heads page finds it too."""
    from ticketnet.compare import head_importance_on
    from ticketnet.data.tickets import load_split

    model.use_server_threads()
    r = router(name)
    rows = load_split(_csv(name, split))             # tickets of teams this router lacks are left out by the measure
    table = head_importance_on(r, [row["text"] for row in rows], [row["team"] for row in rows], HEAD_CHUNK, progress)
    store.save_table(store.table_path("heads", split, *_hashes(name, split)), table)
    return table
