"""Many users, one server: each session keeps its own pick, and the one model they share is only read.

Two AppTest instances are two sessions of one process: they share `st.cache_resource` (the router) and
`st.cache_data`, and each has its own session state and URL, as two browser tabs on the real server do.
"""

from __future__ import annotations

import threading

import pytest
import torch

from tests.conftest import DEFAULT_TICKET, HEADS, INTERPRETATION, app_test

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest




def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _texts(at) -> list[str]:
    return [e.value for e in at.text]


def _pick(at) -> str:
    return at.session_state["picked_ticket"]


def test_each_session_keeps_its_own_pick(app_env, valid_rows):
    others = [r for r in valid_rows if r["ticket_id"] != DEFAULT_TICKET and len(r["text"]) > 30]
    b = others[0]
    one, two = app_test().run(), app_test(ticket=b["ticket_id"]).run()
    _ok(one), _ok(two)
    assert (_pick(one), _pick(two)) == (DEFAULT_TICKET, b["ticket_id"])

    # Session one picks a row of the table; session two, run again, still has its own ticket.
    table = next(d.value for d in one.dataframe if "ticket_id" in d.value.columns)
    chosen = table.iloc[4]
    assert chosen["ticket_id"] != b["ticket_id"]
    one.session_state["ticket_table"] = {"selection": {"rows": [4], "columns": []}}
    one.run()
    two.switch_page(HEADS).run()
    _ok(one), _ok(two)
    assert _pick(one) == chosen["ticket_id"] and one.query_params["ticket"] == chosen["ticket_id"]
    assert _pick(two) == b["ticket_id"] and two.query_params["ticket"] == b["ticket_id"]
    assert b["text"] in _texts(two) and chosen["text"] not in _texts(two)

    # Session two types a ticket; session one neither sees the text nor switches to it.
    typed = "my parcel never arrived and the tracking page has said 'in transit' for nine days"
    two.switch_page("../pages/tickets.py").run()
    two.text_area[0].input(typed)
    next(btn for btn in two.button if btn.label == "Route this ticket").click()
    two.run()
    one.switch_page(HEADS).run()
    _ok(one), _ok(two)
    assert _pick(two) == "custom" and two.session_state["custom_text"] == typed
    assert _pick(one) == chosen["ticket_id"] and "custom_text" not in one.session_state
    assert typed not in _texts(one) and chosen["text"] in _texts(one)


def test_the_shared_model_is_only_read(app_env, valid_rows):
    from dashboard.data import model
    from ticketnet import Router

    fresh = Router.load(app_env.weights).model.state_dict()
    ticket = next(r for r in valid_rows if r["ticket_id"] != DEFAULT_TICKET)["ticket_id"]
    at = app_test(ticket=ticket).run()
    at.switch_page(HEADS).run()
    at.switch_page(INTERPRETATION).run()                # gradients (integrated gradients, gradient × input) too
    _ok(at)

    shared = model._load_router(str(model.weights_path()), model.weights_stamp())
    assert shared is model._load_router(str(model.weights_path()), model.weights_stamp())   # one object
    model = shared.model
    assert not model.training
    assert all(not p.requires_grad and p.grad is None for p in model.parameters())
    state = model.state_dict()
    assert state.keys() == fresh.keys()
    assert all(torch.equal(state[k], fresh[k]) for k in fresh), "a page run changed the shared model's weights"


def test_computations_run_on_the_server_thread_count(monkeypatch):
    from dashboard.data import model
    from ticketnet import paths

    for value, expected in (("", 1), ("3", 3), ("0", 1), ("many", 1)):
        monkeypatch.setenv(paths.THREADS_ENV, value)
        assert paths.torch_threads() == expected

    seen = []

    def session_run():                                  # a script run is a fresh thread, as in the server
        model.use_server_threads()
        seen.append(torch.get_num_threads())

    t = threading.Thread(target=session_run)
    t.start()
    t.join()
    assert seen == [model.TORCH_THREADS]


def test_gradient_attributions_do_not_disturb_other_sessions(app_env, valid_rows):
    """Captum hooks the embedding layer while it runs; other sessions' forward passes on the shared model, at the
    same moment, must not pass through those hooks (each would read the other's tensors)."""
    from dashboard.data import model, ticket

    shared = model._load_router(str(model.weights_path()), model.weights_stamp())
    texts = [r["text"] for r in valid_rows[:400]]
    stop, failures = threading.Event(), []

    def other_sessions():                               # route tickets of every length, as the Tickets page does
        i = 0
        while not stop.is_set():
            try:
                shared.predict_texts(texts[i % 390 : i % 390 + 10])
                ticket.inspection(texts[(i * 7) % 400])
            except Exception as exc:                   # noqa: BLE001 - any failure is the finding
                failures.append(repr(exc))
                return
            i += 1

    t = threading.Thread(target=other_sessions)
    t.start()
    try:
        for k in range(6):                              # distinct texts: no cache hits
            ticket.interpretation(f"{texts[k]} and one more thing number {k}")
    finally:
        stop.set()
        t.join()
    assert not failures, failures[:3]
    assert not shared.model.embed._forward_hooks and not shared.model.embed._forward_pre_hooks
