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


def test_a_session_keeps_none_of_the_tickets_it_left(app_env, valid_rows):
    """Streamlit 1.67 keeps a widget's metadata after the widget is gone; a widget keyed by ticket (the target team)
    would leave one per ticket opened, holding its page run (the interpretation's copy) for the session's life."""
    import gc

    from ticketnet.interpret.ticket import TicketInterpretation

    def interpretations_alive() -> int:
        gc.collect()
        return sum(isinstance(o, TicketInterpretation) for o in gc.get_objects())

    picks = [r["ticket_id"] for r in valid_rows if 30 < len(r["text"]) < 160][:4]
    at = app_test(ticket=picks[0]).run()
    metadata, alive = [], []
    for ticket_id in picks:
        at.query_params["ticket"] = ticket_id
        at.switch_page(INTERPRETATION).run()
        _ok(at)
        assert _pick(at) == ticket_id
        widgets = at.session_state._state._state._new_widget_state   # noqa: SLF001 - what the session holds
        metadata.append(len(widgets.widget_metadata))
        alive.append(interpretations_alive())
    # From the second ticket on (the first also holds the Tickets page's widgets): one ticket's widgets, and not
    # one more interpretation per ticket left.
    assert len(set(metadata[1:])) == 1 and metadata[1] < metadata[0], metadata
    assert max(alive[1:]) <= alive[0] <= 2, alive


def test_forget_stale_widgets_keeps_what_the_last_run_drew(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(
        "import streamlit as st\n"
        "from dashboard.server.sessions import forget_stale_widgets\n"
        "st.session_state['dropped'] = forget_stale_widgets()\n"
        "n = st.session_state.get('n', 0)\n"
        "st.session_state['n'] = n + 1\n"
        "st.selectbox('kept', [1, 2, 3], key='kept')\n"
        "st.selectbox('per run', [1, 2], key=f'run_{n}')\n")
    at = AppTest.from_file(str(script)).run()
    at.selectbox(key="kept").select(3).run()
    for _ in range(3):
        at.run()
    _ok(at)
    assert at.selectbox(key="kept").value == 3                        # a drawn widget keeps its value and metadata
    assert at.session_state["dropped"] == 1                           # the per-run widget of the run before last
    # After a run: the widgets it drew (kept, run_4) and those the run before drew (run_3), not the five runs'.
    metadata = at.session_state._state._state._new_widget_state.widget_metadata  # noqa: SLF001
    assert sorted(wid.rsplit("-", 1)[-1] for wid in metadata) == ["kept", "run_3", "run_4"]


def test_forget_stale_widgets_leaves_other_internals_alone():
    from dashboard.server.sessions import forget_stale_widgets

    class Unknown:
        pass

    assert forget_stale_widgets(Unknown()) is None
