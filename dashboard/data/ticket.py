"""One ticket through the shared router, cached per text and weights: its inspection and its interpretation."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from dashboard.data.model import TICKET_TTL_S, cached_on_weights, router, weights_path, weights_stamp
from ticketnet.data.thread import ThreadSplit, split_thread


@st.cache_data(show_spinner=False, max_entries=256, ttl=TICKET_TTL_S)
def thread(text: str) -> ThreadSplit:
    """The ticket cut into its new message and what the router sets aside (quoted history, signature), once per
    text: every page's header and the picked ticket ask for it on every run."""
    return split_thread(text)


def reader(whole_thread: bool = False):
    """The shared router, reading the whole thread (quoted part too) when `whole_thread`: a shallow copy that shares
    the one model, so the caches below hold one result per (text, flag)."""
    r = router()
    return replace(r, whole_thread=True) if whole_thread else r


@cached_on_weights(show_spinner="Running the ticket through the from-scratch attention…", max_entries=256, ttl=TICKET_TTL_S)
def inspection(text: str, whole_thread: bool = False):
    """ticketnet.inspect_ticket for this text, computed once per text (block/query changes reuse it); the whole
    thread read with `whole_thread`, else the new message only."""
    return reader(whole_thread).inspect(text)


@st.cache_resource(show_spinner=False)
def interpret_pool():
    """$TICKETNET_WORKERS worker processes for the interpretations (ticketnet.interpret.workers), one pool per
    server; None (the default) computes them in the server's process."""
    from ticketnet import paths

    workers = paths.interpret_workers()
    if not workers:
        return None
    from ticketnet.interpret.workers import InterpretPool

    pool = InterpretPool(workers, paths.torch_threads())
    pool.warm(str(weights_path()), weights_stamp())
    return pool


@cached_on_weights(max_entries=128, ttl=TICKET_TTL_S, resource=True)
def removal_variants(text: str, whole_thread: bool = False):
    """The ticket's counterfactual_probs (it and its one-token variants), shared by every target team's run."""
    import torch

    from ticketnet.data.text import UNK_ID
    from ticketnet.interpret import counterfactual_probs

    r = reader(whole_thread)
    ids = torch.tensor(inspection(text, whole_thread).encoded.ids, dtype=torch.long)
    return counterfactual_probs(r.model, ids, r.vocab.stoi.get("<unk>", UNK_ID)) if ids.numel() >= 2 else None


@cached_on_weights(max_entries=64, ttl=TICKET_TTL_S, resource=True)
def forward_memo(text: str, whole_thread: bool = False) -> dict:
    """The logits of the ticket's variants sent through the model so far (phrase coalitions, ERASER's), one dict per
    text and weights shared by every session and target team: a switch of team sends only new variants."""
    return {}


@cached_on_weights(show_spinner="Measuring what each token does (removal, <unk>, gradients)…", max_entries=128, ttl=TICKET_TTL_S)
def interpretation(text: str, target: int | None = None, evidence: str = "", whole_thread: bool = False,
                   phrases: bool = False):
    """ticketnet.interpret.interpret_ticket without ERASER (`eraser` scores the signals a page shows), with the
    phrase signals when `phrases`; once per (text, target, evidence, whole_thread, phrases). What does not depend on
    the target (removal variants, variant logits) is computed once per (text, whole_thread)."""
    from ticketnet.interpret import interpret_ticket

    pool = interpret_pool()
    if pool is not None:                   # another process: this server's sessions keep its interpreter lock
        return pool.submit(str(weights_path()), weights_stamp(), text, target, evidence or "", whole_thread,
                           phrases, ()).result()
    # The shared model itself: the gradient attributions hook nothing on it (ticketnet.interpret.methods.gradients).
    return interpret_ticket(reader(whole_thread), text, target=target, evidence=evidence or "",
                            inspection=inspection(text, whole_thread), phrases=phrases, eraser_signals=(),
                            counterfactuals=removal_variants(text, whole_thread),
                            memo=forward_memo(text, whole_thread))


@cached_on_weights(show_spinner="Scoring the chosen signals with ERASER…", max_entries=256, ttl=TICKET_TTL_S)
def eraser(text: str, target: int, evidence: str, whole_thread: bool, phrases: bool, names: tuple[str, ...]):
    """ERASER rows of the signals `names` of `interpretation(text, target, evidence, whole_thread, phrases)`
    (ticketnet.interpret.eraser_table): only what the page shows is scored, and the ticket's forward memo keeps the
    variants of signals scored before."""
    from ticketnet.interpret import eraser_table

    ti = interpretation(text, target, evidence, whole_thread, phrases)
    return eraser_table(reader(whole_thread).model, ti, names, memo=forward_memo(text, whole_thread))


@cached_on_weights(show_spinner="Removing each word, integrating gradients, scoring the signals…", max_entries=128,
                   ttl=TICKET_TTL_S)
def word_explanation(text: str, target: int, evidence: str = "", whole_thread: bool = False, phrases: bool = False):
    """An encoder router's word-level explanations of this text for the target team
    (ticketnet.interpret.words.explain_words), once per (text, target, evidence, whole_thread, phrases)."""
    from ticketnet.interpret.words import explain_words

    return explain_words(reader(whole_thread), inspection(text, whole_thread), target, evidence or "", phrases)

@cached_on_weights(show_spinner="Working the head's formula through in float64…", max_entries=64, ttl=TICKET_TTL_S)
def head_steps(text: str, block: int, head: int, whole_thread: bool = False):
    """softmax(QKᵀ/√d_k + M)V of one head (0-based block and head) on this text, step by step beside the router's
    own weights (ticketnet.lens.steps.head_steps): the Tiny router's attention reads each block's normalised input,
    an encoder's the block input itself."""
    import torch

    from ticketnet.lens.steps import head_steps as steps

    r = reader(whole_thread)
    ids, is_pad = r.batch([r.encode(text)])
    with torch.inference_mode():
        _, cache = r.run_with_cache(ids, is_pad)
        X = r.attention_input(cache, block)[0]
        return steps(r.attention(block), X, head, cache[f"blocks.{block}.attn.pattern"][0, head], block)
