"""One ticket through the shared router, cached per text and weights: its inspection and its interpretation."""

from __future__ import annotations

import copy
from dataclasses import replace

import streamlit as st

from dashboard.data.model import cached_on_weights, router
from ticketnet.data.thread import ThreadSplit, split_thread


@st.cache_data(show_spinner=False, max_entries=256)
def thread(text: str) -> ThreadSplit:
    """The ticket cut into its new message and what the router sets aside (quoted history, signature), once per
    text: every page's header and the picked ticket ask for it on every run."""
    return split_thread(text)


def reader(whole_thread: bool = False):
    """The shared router, reading the whole thread (quoted part too) when `whole_thread`: a shallow copy that shares
    the one model, so the caches below hold one result per (text, flag)."""
    r = router()
    return replace(r, whole_thread=True) if whole_thread else r


@cached_on_weights(show_spinner="Running the ticket through the from-scratch attention…", max_entries=256)
def inspection(text: str, whole_thread: bool = False):
    """ticketnet.inspect_ticket for this text, computed once per text (block/query changes reuse it); the whole
    thread read with `whole_thread`, else the new message only."""
    from ticketnet.lens.inspection import inspect_ticket

    return inspect_ticket(reader(whole_thread), text)


@cached_on_weights(show_spinner="Measuring what each token does (removal, <unk>, gradients, ERASER)…", max_entries=128)
def interpretation(text: str, target: int | None = None, evidence: str = "", whole_thread: bool = False):
    """ticketnet.interpret.interpret_ticket, once per (text, target, evidence, whole_thread)."""
    from ticketnet.interpret import interpret_ticket

    r = reader(whole_thread)
    # Captum's gradient attributions register forward hooks on the model's embedding layer while they run, and a
    # hook on the shared model would fire inside other sessions' forward passes ("size of tensor a (28) must match
    # the size of tensor b (41)"). They get a private copy of the model (about 8 ms).
    return interpret_ticket(replace(r, model=copy.deepcopy(r.model)), text, target=target, evidence=evidence or "",
                            inspection=inspection(text, whole_thread))
