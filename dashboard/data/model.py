"""The router every session shares: loaded once per weights file, its card, its warm-up, computations cached on it."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import streamlit as st

from dashboard.data.store import stamp
from dashboard.text import fail
from ticketnet import paths, predictions
from ticketnet.card import RouterCard, WeightsError
from ticketnet.catalog import DEFAULT_ROUTER, is_encoder, list_routers, weights_in
from ticketnet.loading import load_any_card

if TYPE_CHECKING:
    from ticketnet.interface import TicketRouter

# One server, many sessions: every session's script run is its own thread, and each would start its own pool of
# intra-op threads, so several sessions computing at once on few cores oversubscribe the machine (docs/performance.md,
# "Settings measured in the code"). Each computation gets one thread (more with $TICKETNET_TORCH_THREADS) and the
# sessions share out the cores. The setting belongs to each OS thread once it has computed, and a thread started
# later takes the value current then, so `router()` re-applies it in the calling thread. Inter-op threads are left
# alone: nothing here uses them, and torch.set_num_interop_threads fails once any parallel work has run.
#
# torch itself is imported by the first call that needs the model, not by this module: the Tickets page draws from
# stored predictions and the router's card alone, so a restarted server shows it without waiting for torch.
TORCH_THREADS = paths.torch_threads()
WARMUP_DELAY_S = 1.0
# Per-ticket results (inspections, interpretations, interventions, chart specs) are kept this long at most, so a busy
# server holds the last few minutes' tickets, not the last max_entries of each kind: its memory levels off at the
# working set (docs/performance.md, "Memory").
TICKET_TTL_S = 600.0

ROUTER_PARAM = "router"               # ?router=mine: the router this session reads, by its folder's name

T = TypeVar("T")


def use_server_threads() -> None:
    import torch

    if torch.get_num_threads() != TORCH_THREADS:
        torch.set_num_threads(TORCH_THREADS)


def routers() -> dict[str, Path]:
    """The routers a session can open, by name (`ticketnet.catalog.list_routers`): the default one first, then those
    the session's user may open (all, without sign-in)."""
    return {name: folder for name, folder in list_routers().items()
            if name == DEFAULT_ROUTER or _may_open(name)}


_session_router: Callable[[], str | None] = lambda: None
_may_open: Callable[[str], bool] = lambda name: True


def limit_routers_with(predicate: Callable[[str], bool]) -> None:
    """Name the function that says whether this session's user may open a router by name (dashboard/sign_in.py
    reads the signed-in user; this layer knows no session). A router it refuses is one the server does not have."""
    global _may_open
    _may_open = predicate


def read_router_choice_with(chooser: Callable[[], str | None]) -> None:
    """Name the function that says which router this session reads (dashboard/router_choice.py keeps the choice in
    the session and the URL; this layer holds computations only, and knows no session)."""
    global _session_router
    _session_router = chooser


def _chosen() -> tuple[str, Path | None]:
    """This session's router as (name, folder), when the chooser names one of `routers()`; else (the default's name,
    None). A session on the default router lists no folder."""
    try:
        asked = _session_router()
    except Exception:                      # noqa: BLE001 - outside a script run (the warm-up, the bench): the default
        asked = None
    folder = routers().get(asked) if asked and asked != DEFAULT_ROUTER else None
    return (asked, folder) if folder is not None else (DEFAULT_ROUTER, None)


def router_name() -> str:
    return _chosen()[0]


def weights_path() -> Path:
    """This session's weights file (router.pt, or an encoder router's encoder.safetensors): the default one is
    $TICKETNET_WEIGHTS or the shipped weights/router.pt."""
    folder = _chosen()[1]
    return paths.weights_path() if folder is None else weights_in(folder)


def card_at(weights: Path) -> RouterCard:
    """The card of the router at `weights`, read once per version of its files; raises WeightsError."""
    return _load_card(str(weights), files_stamp(weights))


def data_folder() -> Path:
    """The splits this session's router is read with: its own data/, else $TICKETNET_DATA or the shipped data/."""
    return paths.router_data(weights_path().parent)


def files_stamp(weights: Path) -> tuple:
    """A cache key that changes when any of a router's files (router.pt, vocab.json, router.json) changes."""
    return tuple(stamp(p) for p in predictions.weights_files(weights))


def weights_stamp() -> tuple:
    """`files_stamp` of this session's router."""
    return files_stamp(weights_path())


@st.cache_resource(show_spinner="Loading the router…", max_entries=2)
def _load_router(path: str, key: tuple) -> TicketRouter:
    # One model for every session, only ever read: forward passes run under torch.inference_mode() (in ticketnet)
    # and the gradient attributions differentiate with respect to the embeddings' outputs, never the weights, so
    # the parameters need no gradient. Switching that off once here keeps concurrent runs from building autograd
    # graphs through shared tensors, and any attempt to train or step this model fails loudly instead.
    from ticketnet.loading import load_router

    # The heap's settings are the launcher's (dashboard/__main__.py), with the idle watch's trims that go with them;
    # setting any here, on the router's first load, would override them for the whole server.
    r = load_router(path)
    r.model.eval()
    r.model.requires_grad_(False)
    return r


@st.cache_resource(show_spinner=False)
def _load_card(path: str, key: tuple) -> RouterCard:
    return load_any_card(path)


def _on_weights_file(load: Callable[[str, tuple], T]) -> T:
    """`load(weights path, weights_stamp())`, or the page stopped on a readable message when the files are broken."""
    try:
        return load(str(weights_path()), weights_stamp())
    except WeightsError as exc:
        fail("The router could not be loaded.", str(exc),
             f"Train it with `.venv/bin/python -m ticketnet train`, or point the environment variable `{paths.WEIGHTS_ENV}` at "
             "a `router.pt` that has `vocab.json` and `router.json` beside it, then reload this page.")


def router() -> TicketRouter:
    """The router, loaded once per weights file (reloaded when the file changes); stops the page on failure."""
    use_server_threads()
    return _on_weights_file(_load_router)


def is_encoder_router() -> bool:
    """Whether this session's router is a pretrained encoder (pieces, many heads) rather than the Tiny router."""
    return is_encoder(weights_path())


def card() -> RouterCard:
    """The router's vocabulary, teams and router.json without its weights (no torch), once per weights file; stops
    the page on failure. Enough to encode a ticket, name the teams and read stored predictions. An encoder router's
    card comes with its model, which its distance flag needs."""
    if is_encoder_router():
        return router().card
    return _on_weights_file(_load_card)


def cached_on_weights(*, show_spinner: bool | str = False, max_entries: int | None = None,
                      resource: bool = False, ttl: float | None = None) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Cache a computation on the router per (arguments, weights file): `st.cache_data` (a copy per call) or, with
    `resource`, `st.cache_resource` (one shared object), keyed by the arguments and `weights_stamp()`, so new
    weights never reuse an old result. Each call loads the router first, so a broken weights file stops the page
    with its readable message before the computation starts. The result's `.clear()` empties its cache. `ttl`:
    seconds an entry is kept (TICKET_TTL_S for per-ticket results)."""
    cache = st.cache_resource if resource else st.cache_data

    def decorate(compute: Callable[..., T]) -> Callable[..., T]:
        def on_weights(weights_key: tuple, args: tuple, kwargs: dict) -> T:
            return compute(*args, **kwargs)

        # Streamlit names a function's cache by its module and qualified name: one cache per decorated function.
        on_weights.__module__, on_weights.__qualname__ = compute.__module__, compute.__qualname__
        cached = cache(show_spinner=show_spinner, max_entries=max_entries, ttl=ttl)(on_weights)

        @functools.wraps(compute)
        def call(*args, **kwargs) -> T:
            router()
            # By keyword: Streamlit looks up a positional argument's name in the signature on every call.
            return cached(weights_key=weights_stamp(), args=args, kwargs=kwargs)

        call.clear = cached.clear
        return call

    return decorate


def _serving() -> bool:
    """Whether this is a real Streamlit server (AppTest runs the pages under a mock Runtime, with no visitors to
    get ready for)."""
    from streamlit.runtime import Runtime

    return Runtime.exists() and type(Runtime.instance()) is Runtime


@st.cache_resource(show_spinner=False)
def _model_warmup() -> threading.Thread:
    serving = _serving()

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
        if serving:
            # "Why √d_k" reads a seeded table of 235 million draws, slow to draw on one core (docs/performance.md,
            # "Pages, server side"); drawn here, once per machine (it is kept on disk), the section opens at once.
            # A visitor who opens it first waits for this drawing instead of starting another.
            from ticketnet.lesson.explorers import scaling_table

            scaling_table()

    thread = threading.Thread(target=load, name="ticketnet-model-warmup", daemon=True)
    thread.start()
    return thread


def warm_model() -> None:
    """Once per process, after a script run: import torch and the model's code in the background, so the first page
    that runs the model (Heads, Interpretation, a typed ticket) finds them loaded, then (on a server) the lesson's
    "Why √d_k" table. A no-op once they are."""
    _model_warmup()
