"""Loading and caching: the router once per process, split tables and per-ticket results once per input."""

# Everything the pages show comes through here, so a missing or broken file ends in one readable
# `st.error` panel (file named, what to do) followed by `st.stop()`, never a traceback.

from __future__ import annotations

import copy
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import streamlit as st

from ticketnet import paths, predictions
from ticketnet._runtime.allocator import keep_freed_memory
from ticketnet.card import RouterCard, WeightsError, load_card
from ticketnet.data.tickets import HARD_PATTERNS, DataError, load_split

if TYPE_CHECKING:
    from ticketnet.router import Router

from dashboard import store

SPLITS: tuple[str, ...] = ("valid", "test", "train", "handwritten")   # handwritten: written by hand, never trained on

# One server, many sessions: every session's script run is its own thread, and each would start its own pool of
# intra-op threads, so several sessions computing at once on few cores oversubscribe the machine (four threads each
# routing a ticket 200 times on a 2-core machine: 0.48 s with 1 intra-op thread, 0.60 s with 2). Each computation
# gets one thread (more with $TICKETNET_TORCH_THREADS) and the sessions share out the cores. The setting belongs to
# each OS thread once it has computed, and a thread started later takes the value current then, so `router()`
# re-applies it in the calling thread. Inter-op threads are left alone: nothing here uses them, and
# torch.set_num_interop_threads fails once any parallel work has run.
#
# torch itself is imported by the first call that needs the model, not by this module: the Tickets page draws from
# stored predictions and the router's card alone, so a restarted server shows it without waiting for torch.
TORCH_THREADS = paths.torch_threads()


def use_server_threads() -> None:
    import torch

    if torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(TORCH_THREADS)

weights_path = paths.weights_path     # $TICKETNET_WEIGHTS, else the shipped weights/router.pt
data_folder = paths.data_path         # $TICKETNET_DATA, else the shipped data/


def split_path(split: str) -> Path:
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    return data_folder() / f"{split}.csv"


def stamp(path: Path) -> tuple[str, int, int]:
    """A cache key that changes when the file changes: (path, mtime in ns, size); missing files key as -1."""
    try:
        st_ = path.stat()
        return (str(path), st_.st_mtime_ns, st_.st_size)
    except OSError:
        return (str(path), -1, -1)


def weights_stamp() -> tuple:
    return tuple(stamp(p) for p in predictions.weights_files(weights_path()))


# -- one readable failure ---------------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
# Characters that are invisible or rearrange the text around them: C0/C1 controls but tab and line breaks (NUL,
# BEL, ESC…), DEL, and the bidirectional embedding/override/isolate marks (a typed U+202E flips what follows).
_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match) -> str:
    c = ord(match.group())
    if c < 0x20:
        return chr(0x2400 + c)                    # Unicode control pictures: ␀ ␇ ␛ …
    return "␡" if c == 0x7F else f"‹U+{c:04X}›"


def md_escape(text: str) -> str:
    """Text safe to place inside Streamlit Markdown: every Markdown/HTML special character escaped, and control
    and bidirectional-override characters shown as visible symbols (␀, ␛, ‹U+202E›) instead of passed through."""
    return _INVISIBLE.sub(_visible, _MD_SPECIAL.sub(r"\\\1", str(text)))


def fail(title: str, message: str, what_to_do: str) -> None:
    """Show one error panel (what failed, the file's message, what to do) and stop this page's run."""
    st.error(f"**{title}**\n\n{md_escape(message)}\n\n{what_to_do}", icon=":material/error:")
    st.stop()


# -- the router -------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner="Loading the router…", max_entries=2)
def _load_router(path: str, key: tuple) -> Router:
    # One model for every session, only ever read: forward passes run under torch.inference_mode() (in ticketnet)
    # and the gradient attributions differentiate with respect to the embeddings' outputs, never the weights, so
    # the parameters need no gradient. Switching that off once here keeps concurrent runs from building autograd
    # graphs through shared tensors, and any attempt to train or step this model fails loudly instead.
    from ticketnet.router import Router

    keep_freed_memory()    # process-wide (idempotent): repeated per-ticket computations stop page-faulting on regrown heap
    r = Router.load(path)
    r.model.eval()
    r.model.requires_grad_(False)
    return r


WARMUP_DELAY_S = 1.0


@st.cache_resource(show_spinner=False)
def _model_warmup() -> threading.Thread:
    def load() -> None:
        # A moment first: the script run is over, but the server's event loop is still sending the page to the
        # browser, and this import would hold the GIL it needs for that.
        time.sleep(WARMUP_DELAY_S)
        # Modules only (no Streamlit cache is touched outside a script run); none of them imports the dashboard, so
        # a script thread importing dashboard modules meanwhile waits on these locks at worst, never in a cycle.
        import ticketnet.interpret
        import ticketnet.lens.inspection
        import ticketnet.router  # noqa: F401

        ticketnet.interpret.load_all()                 # its names are imported on first use otherwise

    thread = threading.Thread(target=load, name="ticketnet-model-warmup", daemon=True)
    thread.start()
    return thread


def warm_model() -> None:
    """Once per process, after a script run: import torch and the model's code in the background, so the first page
    that runs the model (Heads, Interpretation, a typed ticket) finds them loaded. A no-op once they are."""
    _model_warmup()


def _weights_failed(exc: WeightsError) -> None:
    fail("The router could not be loaded.", str(exc),
         f"Train it with `python -m ticketnet train`, or point the environment variable `{paths.WEIGHTS_ENV}` at a "
         "`router.pt` that has `vocab.json` and `router.json` beside it, then reload this page.")


def router() -> Router:
    """The router, loaded once per weights file (reloaded when the file changes); stops the page on failure."""
    use_server_threads()
    path = weights_path()
    try:
        return _load_router(str(path), weights_stamp())
    except WeightsError as exc:
        _weights_failed(exc)


@st.cache_resource(show_spinner=False)
def _load_card(path: str, key: tuple) -> RouterCard:
    return load_card(path)


def card() -> RouterCard:
    """The router's vocabulary, teams and router.json without its weights (no torch), once per weights file; stops
    the page on failure. Enough to encode a ticket, name the teams and read stored predictions."""
    try:
        return _load_card(str(weights_path()), weights_stamp())
    except WeightsError as exc:
        _weights_failed(exc)


# -- splits -----------------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=6)
def _split_rows(split: str, key: tuple) -> pd.DataFrame:
    rows = load_split(split_path(split))
    df = pd.DataFrame(rows)
    for col in ("evidence", "pattern", "distractor"):
        if col not in df.columns:
            df[col] = ""
    return df.fillna("")


def split_rows(split: str) -> pd.DataFrame:
    """The split's rows as a DataFrame (ticket_id, text, team, evidence, pattern, distractor)."""
    path = split_path(split)
    try:
        return _split_rows(split, stamp(path))
    except DataError as exc:
        fail(f"The {split} split could not be read.", str(exc),
             f"Regenerate the data with `python -m ticketnet synth`, or point the environment variable `{paths.DATA_ENV}` "
             "at a folder holding `train.csv`, `valid.csv` and `test.csv`, then reload this page.")


def _route_split(split: str) -> pd.DataFrame:
    # Every core: this runs once per split and server (then it is on disk), often on the very first page.
    return predictions.routed_table(router(), split_rows(split).to_dict("records"), workers=os.cpu_count() or 1)


def split_table(split: str) -> pd.DataFrame:
    """Every ticket of the split with the router's prediction: ticket_id, text, team, predicted, confidence,
    tokens, pattern, correct, truncated, p_<team>."""
    split_rows(split)                                  # fails readably first
    card()
    # Kept on disk like the split-wide results, keyed by the weights' and the data's hashes: routing the 1,500
    # tickets of the first page is most of a restart's script run once the imports are done.
    # One table is shared by every session: each gets its own copy to filter and sort (as st.cache_data gave).
    done = _stored(split, "routed")
    if done is not None:
        return done.copy()
    try:
        with _split_store().lock, st.spinner("Routing every ticket of the split…"):
            done = _stored(split, "routed")                # another session may have routed it meanwhile
            return (done if done is not None else _keep(split, "routed", _route_split(split))).copy()
    except ValueError as exc:                          # a ticket with no token at all
        fail(f"The {split} split could not be routed.", str(exc), "Fix or remove that ticket, then reload.")


def find_ticket(ticket_id: str) -> tuple[str, dict] | None:
    """(split, row) of a ticket id, looking in valid, test, then train; None if no split has it."""
    for split in SPLITS:
        path = split_path(split)
        if not path.is_file():
            continue
        try:
            rows = _split_rows(split, stamp(path))
        except DataError:
            continue
        hit = rows[rows["ticket_id"] == ticket_id]
        if len(hit):
            return split, hit.iloc[0].to_dict()
    return None


def quality(split: str) -> dict:
    """ticketnet.metrics.summarize of the router on the split (accuracy, per-team P/R/F1, confusion)."""
    from ticketnet.metrics import summarize

    df = split_table(split)
    teams = list(card().teams)
    y = np.array([teams.index(t) for t in df["team"]])
    hard = df["pattern"].isin(HARD_PATTERNS).to_numpy()
    return summarize(df[[f"p_{t}" for t in teams]].to_numpy(), y, tuple(teams), hard)


def routed_probs(split: str, ticket_id: str) -> list[float] | None:
    """The ticket's team probabilities (rounded to 4 decimals, in the card's team order) from its split's routed
    table, if that table is at hand (in memory or on disk) and holds the ticket; else None. Needs no model."""
    if split not in SPLITS or not split_path(split).is_file():
        return None
    table = _stored(split, "routed")
    if table is None:
        return None
    row = table.loc[table["ticket_id"] == ticket_id]
    if not len(row):
        return None
    return [float(row.iloc[0][f"p_{t}"]) for t in card().teams]


# -- one ticket -------------------------------------------------------------------------------------------
@st.cache_data(show_spinner="Running the ticket through the from-scratch attention…", max_entries=256)
def _inspection(text: str, weights_key: tuple):
    from ticketnet.lens.inspection import inspect_ticket

    r = _load_router(str(weights_path()), weights_key)
    return inspect_ticket(r, text)


def inspection(text: str):
    """ticketnet.inspect_ticket for this text, computed once per text (block/query changes reuse it)."""
    router()
    return _inspection(text, weights_stamp())


@st.cache_data(show_spinner="Measuring what each token does (removal, <unk>, gradients, ERASER)…", max_entries=128)
def _interpretation(text: str, target: int | None, evidence: str, weights_key: tuple):
    from ticketnet.interpret import interpret_ticket

    r = _load_router(str(weights_path()), weights_key)
    # Captum's gradient attributions register forward hooks on the model's embedding layer while they run, and a
    # hook on the shared model would fire inside other sessions' forward passes (the load test caught one: "size
    # of tensor a (28) must match the size of tensor b (41)"). They get a private copy of the model (about 8 ms).
    return interpret_ticket(replace(r, model=copy.deepcopy(r.model)), text, target=target, evidence=evidence,
                            inspection=_inspection(text, weights_key))


def interpretation(text: str, target: int | None = None, evidence: str = ""):
    """ticketnet.interpret.interpret_ticket, once per (text, target, evidence)."""
    router()
    return _interpretation(text, target, evidence or "", weights_stamp())


# -- a whole split: computed on request, kept in memory and on disk (dashboard/store.py) ------------------------------
# A server restart used to lose every split result. Each table is now also written to the cache folder, keyed by the
# SHA-256 of the weights and of the split's CSV, and read back by the first session that asks for it.
@dataclass
class _Store:
    lock: threading.Lock
    tables: dict


@st.cache_resource
def _split_store() -> _Store:
    return _Store(threading.Lock(), {})


@st.cache_data(show_spinner=False, max_entries=16)
def _hash_files(paths: tuple[str, ...], key: tuple) -> str:
    return store.files_hash(Path(p) for p in paths)


def _key_hashes(split: str) -> tuple[str, str]:
    """`ticketnet.predictions.key_hashes` of the current weights and the split's CSV, hashed once per file change."""
    weights = predictions.weights_files(weights_path())
    return (_hash_files(tuple(str(p) for p in weights), weights_stamp()),
            _hash_files((str(split_path(split)),), stamp(split_path(split))))


def _disk_path(split: str, kind: str) -> Path:
    return store.table_path(kind, split, *_key_hashes(split))


def _split_key(split: str, kind: str) -> tuple:
    return (kind, split, stamp(split_path(split)), weights_stamp())


def _stored(split: str, kind: str) -> pd.DataFrame | None:
    """The split's table of `kind` from memory, else from disk (then kept in memory), else None. A routed table may
    also come with the weights (`ticketnet.predictions`: written by training for exactly these weights and data)."""
    tables, key = _split_store().tables, _split_key(split, kind)
    if key not in tables:
        found = store.load_table(_disk_path(split, kind))
        if found is None and kind == "routed":
            found = predictions.read_predictions(weights_path(), split, split_path(split), _key_hashes(split))
        if found is None:
            return None
        tables[key] = found
    return tables[key]


def _keep(split: str, kind: str, table: pd.DataFrame) -> pd.DataFrame:
    _split_store().tables[_split_key(split, kind)] = table
    store.save_table(_disk_path(split, kind), table)     # best effort: an unwritable cache only costs a recompute
    return table


def computed_splits(kind: str) -> list[str]:
    """The splits whose table of `kind` ("interpret" or "heads") exists, in memory or on disk."""
    return [s for s in SPLITS if split_path(s).is_file() and _stored(s, kind) is not None]


def split_interpretation(split: str) -> pd.DataFrame | None:
    """The split's interpretation table if it was computed already (by anyone, before a restart too), else None."""
    return _stored(split, "interpret")


def compute_split_interpretation(split: str, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """ticketnet.interpret.interpret_split over the split (target: predicted team), stored for reuse."""
    from ticketnet.interpret import interpret_split

    with _split_store().lock:
        done = _stored(split, "interpret")
        if done is not None:
            return done
        rows = split_rows(split)
        return _keep(split, "interpret", interpret_split(router(), rows.to_dict("records"), progress=progress))


HEAD_CHUNK = 128          # tickets per head-masking pass: small enough for a progress bar that moves (12 steps on valid)


def _head_importance(split: str, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    import torch

    from ticketnet.interpret import head_importance
    from ticketnet.nn.transformer import pad_batch

    r = router()
    rows = split_rows(split)
    encoded = [r.encode(t) for t in rows["text"]]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
    teams = list(r.teams)
    labels = torch.tensor([teams.index(t) for t in rows["team"]])
    parts = []
    # Tickets sorted by length in chunks, so padding stays small; the chunks' means are averaged by size.
    # `ticketnet.interpret.head_importance` has no progress callback, so progress is reported here, per chunk.
    for s in range(0, len(order), HEAD_CHUNK):
        idx = order[s : s + HEAD_CHUNK]
        ids, is_pad = pad_batch([encoded[i].ids for i in idx])
        part = head_importance(r.model, ids, is_pad, labels[idx])
        part["_n"] = len(idx)
        parts.append(part)
        if progress is not None:
            progress(s + len(idx), len(order))
    df = pd.concat(parts)
    for c in ("accuracy", "accuracy_drop", "prob_drop"):
        df[c] = df[c] * df["_n"] / len(order)
    return df.groupby(["block", "head"], as_index=False)[["accuracy", "accuracy_drop", "prob_drop"]].sum()


def head_importance(split: str) -> pd.DataFrame | None:
    """block, head, accuracy (head masked), accuracy_drop, prob_drop (mean drop in p(true team)) on the split,
    if computed already (before a restart too), else None."""
    return _stored(split, "heads")


def compute_head_importance(split: str, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Mask each head in turn over the split (Michel et al. 2019); `progress(done, total)` after each chunk of
    tickets; stored for reuse."""
    with _split_store().lock:
        done = _stored(split, "heads")
        if done is not None:
            return done
        return _keep(split, "heads", _head_importance(split, progress))
