"""The Map page's data: a split's ticket map by PCA or UMAP and a ticket's nearest training tickets, kept per router."""

# Computed by ticketnet.ticketmap once per router and split and kept on disk in $TICKETNET_CACHE/maps under the
# SHA-256 of the router's files and of the split's CSV (a restart reads them back); in memory, one shared table per
# router, split and projection. One lock: two sessions asking for the same map compute it once.

from __future__ import annotations

import os
import threading
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.data import model, splits, store
from dashboard.data.model import cached_on_weights
from dashboard.text import fail
from ticketnet.data.tickets import DataError, load_split
from ticketnet.ticketmap import MAP_LIMIT, MapStore
from ticketnet.ticketmap.neighbours import NEIGHBOURS

LABEL_QUALITY = "label_quality"       # a label-issues result joined by ticket_id colours the map when it is present
# Tickets a second whose pooled vectors are computed on two cores, by router kind, as measured (docs/ticket-map.md,
# "Measured"; an encoder's is the corpus scan's route level, docs/corpus.md).
POOLED_RATE = {"tiny": 6_000.0, "encoder": 40.0}


@st.cache_resource
def _lock() -> threading.Lock:
    return threading.Lock()


def map_store() -> MapStore:
    """The map store of this session's router (its files in $TICKETNET_CACHE/maps)."""
    return MapStore(store.cache_dir() / "maps", model.router(), model.weights_path(), workers=os.cpu_count() or 1)


@st.cache_resource(show_spinner=False, max_entries=16)
def _texts(split_csv: str, key: tuple) -> dict[str, str]:
    return {r["ticket_id"]: r["text"] for r in load_split(split_csv)}


def texts(split: str) -> dict[str, str]:
    """ticket_id -> text of the split, read once per change of its CSV (shared, not copied: 60,000 training texts)."""
    return _texts(str(splits.split_path(split)), splits.data_stamp(split))


def split_label(split: str) -> str:
    """How the split picker names a split: "train sample" where the map is drawn on a seeded sample of it."""
    return f"{split} sample" if len(texts(split)) > MAP_LIMIT else split


def _rows(split: str) -> list[dict]:
    return splits.split_rows(split)[["ticket_id", "text", "team"]].to_dict("records")


@cached_on_weights(max_entries=12, resource=True)
def _split_map(split: str, projection: str, data_key: tuple) -> pd.DataFrame:
    with _lock():
        return map_store().split_map(projection, split, splits.split_path(split), splits.key_hashes(split), _rows(split))


def split_map(split: str, projection: str) -> pd.DataFrame:
    """The split's map (its seeded sample beyond MAP_LIMIT tickets): ticket_id, text, team, predicted, confidence,
    correct, x, y. One table shared by every session: never modify it in place."""
    splits.split_rows(split)                               # fails readably first
    try:
        return _split_map(split, projection, splits.data_stamp(split))
    except (ValueError, DataError) as exc:                 # a ticket with no token at all
        fail(f"The {split} split could not be mapped.", str(exc), "Fix or remove that ticket, then reload.")


def with_label_quality(table: pd.DataFrame, split: str,
                       preferred: str | None = None) -> tuple[pd.DataFrame, str | None]:
    """The map table with a label_quality column (cleanlab's score, lower: more doubtful) from the newest
    label-issues result on this split, from the `preferred` source (the one the Label issues page has picked; else
    the router's, then the baseline's), and which result that is; the table unchanged, and None, when there is
    none."""
    from dashboard.data import labels

    for source in dict.fromkeys([s for s in (preferred, *labels.SOURCES) if s in labels.SOURCES]):
        for result in labels.results(source):
            if result.split != split:
                continue
            ranked = labels.ranked(result)
            if ranked is None:                                  # the split changed since it was computed
                continue
            scores = ranked.table.set_index("ticket_id")["score"]
            return (table.assign(**{LABEL_QUALITY: table["ticket_id"].map(scores).to_numpy()}),
                    f"{source} out-of-fold probabilities, {result.label}")
    return table, None


def neighbour_pool() -> tuple[str, int, int]:
    """Which training tickets the neighbours are sought among: (its name in the map store, how many, the seconds
    their vectors take once). All of train, except for an encoder router fine-tuned on a sample of it: that sample,
    the tickets it learnt from (all of train through the encoder would take too long: docs/ticket-map.md,
    "Measured")."""
    meta = model.card().meta.get("train", {})
    n, of = meta.get("tickets"), meta.get("sampled_from")
    kind = "encoder" if model.is_encoder_router() else "tiny"
    if kind == "encoder" and n and of and n < of:
        name, count = f"train-finetuned-n{n}-seed{meta.get('seed', 0)}", int(n)
    else:
        name, count = "train", len(texts("train"))
    return name, count, max(1, round(count / POOLED_RATE[kind]))


def _pool_rows(name: str) -> list[dict]:
    rows = _rows("train")
    if name == "train":
        return rows
    from ticketnet.encoder.finetune import stratified_rows

    meta = model.card().meta["train"]
    return stratified_rows(rows, int(meta["tickets"]), int(meta.get("seed", 0)))


@cached_on_weights(max_entries=8, resource=True)
def _pooled(split: str, data_key: tuple, pool: str | None = None):
    """A split's pooled vectors, or (`pool`, a name from `neighbour_pool`) those of the training tickets the
    neighbours are sought among."""
    with _lock():
        rows = _pool_rows(pool) if pool else _rows(split)
        return map_store().pooled(pool or split, splits.split_path(split), splits.key_hashes(split), rows)


def neighbours(split: str, ticket_id: str, k: int = NEIGHBOURS) -> pd.DataFrame | None:
    """The k training tickets (of `neighbour_pool`) nearest to the split's ticket in the pooled space (exact,
    euclidean), nearest first:
    rank, ticket_id, team (its label), distance, agrees (its label is the ticket's true team), routed_as (its label
    is the router's prediction for the ticket), text. A training ticket is not its own neighbour. None when the
    ticket is not in the split."""
    from ticketnet.ticketmap import nearest

    pooled = _pooled(split, splits.data_stamp(split))
    hits = np.flatnonzero(pooled.ticket_ids == ticket_id)
    if not len(hits):
        return None
    i = int(hits[0])
    pool = neighbour_pool()[0]
    train = pooled if split == "train" and pool == "train" else _pooled("train", splits.data_stamp("train"), pool)
    own = np.flatnonzero(train.ticket_ids == ticket_id) if split == "train" else []
    idx, dist = nearest(train.vectors, pooled.vectors[i], k, exclude=[int(own[0]) if len(own) else None])
    predicted = model.card().teams[int(pooled.logits[i].argmax())]
    found = pd.DataFrame({"rank": np.arange(1, idx.shape[1] + 1), "ticket_id": train.ticket_ids[idx[0]],
                          "team": train.teams[idx[0]], "distance": dist[0]})
    found["agrees"] = found["team"].eq(str(pooled.teams[i]))
    found["routed_as"] = found["team"].eq(predicted)
    found["text"] = found["ticket_id"].map(texts("train"))
    return found


def heads_link(ticket_id: str) -> str:
    """The Heads page of a ticket, relative to this page, keeping a router other than the default."""
    query = {"ticket": ticket_id}
    if model.router_name() != model.DEFAULT_ROUTER:
        query[model.ROUTER_PARAM] = model.router_name()
    return "heads?" + urlencode(query)
