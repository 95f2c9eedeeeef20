"""The parity suite run live for the Verification page, cached per run: the formula, the model, a padded batch."""

from __future__ import annotations

import time

import streamlit as st

from dashboard.data.model import cached_on_weights, router
from ticketnet.lens import parity
from ticketnet.lens.parity import LENGTHS, ParityRow  # noqa: F401  (the Verification page's lengths and rows)


@st.cache_data(show_spinner="Running one head and MultiHead against PyTorch…")
def formula_rows(run: int) -> tuple[list[ParityRow], float]:
    """`parity.formula_rows` and the seconds they took; `run` counts the reader's "run again" clicks."""
    t0 = time.perf_counter()
    rows = parity.formula_rows()
    return rows, time.perf_counter() - t0


@cached_on_weights(show_spinner="Running the shipped model's two blocks on the ticket…", max_entries=64)
def model_rows(text: str, run: int) -> list[ParityRow]:
    return parity.model_rows(router(), text)


@cached_on_weights(show_spinner="Running a padded batch and the masked-token invariance check…", max_entries=64)
def padded_rows(texts: tuple[str, ...], run: int) -> list[ParityRow]:
    return parity.padded_batch_rows(router(), list(texts))


@st.cache_resource(show_spinner="Loading transformers' own copy of the encoder to check against…", max_entries=1)
def _encoder_reference(weights_key: tuple):
    from ticketnet.encoder.parity import reference_for

    return reference_for(router())


@cached_on_weights(show_spinner="Running the encoder's blocks against transformers…", max_entries=32)
def encoder_rows(texts: tuple[str, ...], run: int) -> list[ParityRow]:
    """The encoder router against transformers' eager forward: the picked ticket alone, then padded with others."""
    from dashboard.data.model import weights_stamp
    from ticketnet.encoder.parity import ticket_rows

    return ticket_rows(router(), _encoder_reference(weights_stamp()), list(texts))
