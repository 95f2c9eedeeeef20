"""The server's warm-up draws the "Why √d_k" table in the background; AppTest runs (no visitors) leave it alone."""

from __future__ import annotations

import pytest

from dashboard.data import model
from ticketnet.lesson import explorers


@pytest.fixture
def warmup(monkeypatch):
    """`model._model_warmup` run afresh with no delay; yields the calls made to the lesson's table."""
    calls = []
    monkeypatch.setattr(model, "WARMUP_DELAY_S", 0.0)
    monkeypatch.setattr(explorers, "scaling_table", lambda *a, **k: calls.append((a, k)))
    model._model_warmup.clear()
    yield calls
    model._model_warmup.clear()


def test_a_server_draws_the_lesson_table_in_its_warm_up(warmup, monkeypatch):
    monkeypatch.setattr(model, "_serving", lambda: True)
    model._model_warmup().join(timeout=120)
    assert warmup == [((), {})]


def _page_reporting_serving():
    import streamlit as st

    from dashboard.data import model

    st.write(f"serving={model._serving()}")


def test_apptest_is_not_a_server_and_its_warm_up_draws_nothing(warmup):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_page_reporting_serving).run()
    assert not at.exception and at.markdown[0].value == "serving=False"   # pages run under a mock Runtime
    model._model_warmup().join(timeout=120)
    assert warmup == []
