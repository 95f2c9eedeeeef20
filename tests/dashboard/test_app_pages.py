"""Every dashboard page run headless with Streamlit's AppTest: the default ticket, a ticket from the URL, a typed
ticket, a table pick, a changed query row and block, bad input and bad files, with no exception anywhere."""

from __future__ import annotations

import re

import pytest

from tests.conftest import DEFAULT_TICKET, HEADS, INTERPRETATION, app_test

st_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = st_testing.AppTest




def _texts(at) -> list[str]:
    return [e.value for e in at.text]


def _markdown(at) -> str:
    """All Markdown on the page with backslash escapes removed (ticket values are escaped when rendered)."""
    return re.sub(r"\\(.)", r"\1", "\n".join(str(e.value) for e in at.markdown))


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _predicted(router, text: str) -> str:
    return router.teams[int(router.predict_texts([text])[0].argmax())]


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


# -- Tickets ---------------------------------------------------------------------------------------------------
def test_tickets_page_shows_the_default_ticket_its_prediction_and_the_split(app_env, router, valid_rows):
    at = app_test().run()
    _ok(at)
    assert at.query_params["ticket"] == DEFAULT_TICKET
    default = next(r for r in valid_rows if r["ticket_id"] == DEFAULT_TICKET)
    assert default["text"] in _texts(at)
    assert _metric(at, "prediction") == _predicted(router, default["text"])
    if app_env.shipped:
        assert _metric(at, "prediction") == "payments"
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert len(table) == len(valid_rows)
    assert {"ticket_id", "text", "team", "predicted", "confidence", "correct", "tokens"} <= set(table.columns)
    accuracy = float(_metric(at, "accuracy"))
    assert accuracy == pytest.approx((table["team"] == table["predicted"]).mean(), abs=1e-3)
    assert at.session_state["picked_ticket"] == DEFAULT_TICKET


def test_a_restarted_server_draws_the_tickets_page_from_stored_predictions_without_the_model(app_env, router,
                                                                                            valid_rows, monkeypatch):
    from dashboard.data import model, splits

    splits._split_store.clear()                        # (other tests' tables, kept in this process's memory)
    app_test().run()                                   # the first start routes the valid split and stores it
    model._load_router.clear()
    splits._split_store.clear()                        # as after a restart: only the disk store is left
    monkeypatch.setattr(model, "_load_router", lambda *a: pytest.fail("the Tickets page loaded the model"))
    at = app_test().run()
    _ok(at)
    default = next(r for r in valid_rows if r["ticket_id"] == DEFAULT_TICKET)
    assert _metric(at, "prediction") == _predicted(router, default["text"])
    expected = float(router.predict_texts([default["text"]])[0].max())
    assert any(f"confidence **{expected:.2f}**" in str(m.value) for m in at.markdown)
    assert f"{len(router.encode(default['text']).tokens)} tokens read" in [c.value for c in at.caption]
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert len(table) == len(valid_rows)


def test_a_fresh_machine_draws_the_tickets_page_from_the_predictions_shipped_with_the_weights(
        app_env, router, valid_rows, tmp_path, monkeypatch):
    import shutil

    from dashboard.data import model, splits
    from ticketnet import predictions

    folder = tmp_path / "weights"
    folder.mkdir()
    for p in predictions.weights_files(app_env.weights):
        shutil.copy(p, folder / p.name)
    predictions.write_predictions(router, folder / app_env.weights.name, app_env.data, splits=("valid",))
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(folder / app_env.weights.name))
    splits._split_store.clear()
    monkeypatch.setattr(model, "_load_router", lambda *a: pytest.fail("the Tickets page loaded the model"))
    at = app_test().run()                              # an empty $TICKETNET_CACHE, as on a fresh machine
    _ok(at)
    default = next(r for r in valid_rows if r["ticket_id"] == DEFAULT_TICKET)
    assert _metric(at, "prediction") == _predicted(router, default["text"])
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert table["predicted"].tolist() == [router.teams[i] for i in
                                           router.predict_texts([r["text"] for r in valid_rows]).argmax(1).tolist()]


def test_a_ticket_named_in_the_url_is_shown_on_every_page(app_env, valid_rows):
    other = next(r for r in valid_rows if r["ticket_id"] != DEFAULT_TICKET)
    at = app_test(ticket=other["ticket_id"]).run()
    _ok(at)
    assert other["text"] in _texts(at)
    assert other["ticket_id"] in _markdown(at)
    at.switch_page(HEADS).run()
    _ok(at)
    assert other["text"] in _texts(at)
    assert at.query_params["ticket"] == other["ticket_id"]


def test_an_unknown_ticket_in_the_url_says_so_and_falls_back(app_env):
    at = app_test(ticket="T-00000-nope").run()
    assert not at.exception
    assert any("T-00000-nope" in w.value.replace("\\", "") for w in at.warning)
    assert at.query_params["ticket"] == DEFAULT_TICKET


@pytest.mark.parametrize("page", [HEADS, INTERPRETATION])
def test_an_unknown_ticket_on_any_page_says_so(app_env, page):
    at = app_test(ticket="T-00000").run()
    at.switch_page(page)
    at.query_params["ticket"] = "T-00000"
    at.run()
    assert not at.exception
    assert any("T-00000" in w.value.replace("\\", "") and "none of the splits" in w.value for w in at.warning)


def test_clicking_a_table_row_picks_that_ticket(app_env, valid_rows):
    at = app_test().run()
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    chosen = table.iloc[4]
    at.session_state["ticket_table"] = {"selection": {"rows": [4], "columns": []}}   # what a click sends
    at.run()
    _ok(at)
    assert at.session_state["picked_ticket"] == chosen["ticket_id"]
    assert at.query_params["ticket"] == chosen["ticket_id"]
    assert chosen["text"] in _texts(at)


def test_filters_narrow_the_table(app_env):
    at = app_test().run()
    at.toggle(key="misrouted").set_value(True)
    at.selectbox(key="true_filter").set_value("payments")
    at.run()
    _ok(at)
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert (table["team"] == "payments").all() and (table["team"] != table["predicted"]).all()
    at.text_input(key="ticket_search").input(DEFAULT_TICKET)
    at.selectbox(key="true_filter").set_value("any")
    at.toggle(key="misrouted").set_value(False)
    at.run()
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert list(table["ticket_id"]) == [DEFAULT_TICKET]


def test_clicking_a_confusion_cell_filters_the_table(app_env):
    at = app_test().run()
    at.session_state["confusion_valid_0"] = {"selection": {"cell": [{"true": "payments", "predicted": "delivery"}]}}
    at.run()                                       # what a click on the cell sends
    _ok(at)
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert (table["team"] == "payments").all() and (table["predicted"] == "delivery").all()
    next(b for b in at.button if b.label == "Clear the confusion filter").click().run()
    _ok(at)
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert set(table["predicted"]) > {"delivery"}


def _type(at, text: str) -> AppTest:
    at.text_area[0].input(text)
    next(b for b in at.button if b.label == "Route this ticket").click()
    return at.run()


def test_a_typed_ticket_is_picked_and_shown_as_plain_text(app_env, router):
    at = app_test().run()
    typed = "My card was charged twice <b>for</b> one order 🎉 **please** refund"
    _type(at, typed)
    _ok(at)
    assert at.session_state["picked_ticket"] == "custom"
    assert at.query_params["ticket"] == "custom" and at.query_params["text"] == typed
    assert typed in _texts(at), "user text goes through st.text, not Markdown/HTML"
    assert "<b>" not in _markdown(at) and "**please**" not in _markdown(at)
    assert _metric(at, "prediction") == _predicted(router, typed)
    at.switch_page(HEADS).run()
    _ok(at)
    assert typed in _texts(at)


def test_an_empty_typed_ticket_gets_a_visible_message(app_env):
    at = app_test().run()
    _type(at, "   \n  ")
    assert not at.exception
    assert any("empty" in w.value for w in at.warning)
    assert at.session_state["picked_ticket"] == DEFAULT_TICKET


def test_unknown_words_and_truncation_are_noticed(app_env, router):
    at = app_test().run()
    _type(at, "🎉 🎈 ✨")
    assert not at.exception
    assert any("never saw these words" in w.value for w in at.warning)
    _type(at, " ".join(["refund"] * (router.max_len + 40)))
    assert not at.exception
    assert any("Truncated" in w.value and str(router.max_len + 40) in w.value for w in at.warning)


def test_a_typed_ticket_in_the_url_is_restored(app_env):
    at = app_test(ticket="custom", text="where is my parcel").run()
    _ok(at)
    assert "where is my parcel" in _texts(at)
    assert "Your ticket" in _markdown(at)


# -- Heads -------------------------------------------------------------------------------------------------------
def test_heads_page_shows_heatmaps_parity_and_what_the_query_row_reads(app_env, router, valid_rows, monkeypatch):
    from dashboard.data import ticket
    from ticketnet.router import Router

    calls = []
    real = Router.inspect
    monkeypatch.setattr(Router, "inspect", lambda r, t: calls.append(t) or real(r, t))
    ticket.inspection.clear()

    at = app_test().run()
    at.switch_page(HEADS).run()
    _ok(at)
    default = next(r for r in valid_rows if r["ticket_id"] == DEFAULT_TICKET)
    assert _metric(at, "prediction") == _predicted(router, default["text"])
    badge = next(m.value for m in at.markdown if "from-scratch = PyTorch within" in str(m.value))
    assert float(badge.split("within ")[1].split("]")[0]) <= 1e-5
    query = next(s for s in at.selectbox if s.label.startswith("Query row"))
    tokens = router.encode(default["text"]).tokens
    assert query.value == (tokens.index("not") if "not" in tokens else 0)
    assert "reads" in _markdown(at) and "head 4" in _markdown(at)
    charts_before = len(at.get("vega_lite_chart"))
    assert charts_before == 5                     # probabilities, heads, query bars, bands, model view

    query.set_value(5).run()
    _ok(at)
    assert any("(position 5)" in h.value for h in at.subheader)
    at.segmented_control(key="block").set_value(2).run()
    _ok(at)
    assert any(h.value.startswith("Block 2") for h in at.subheader)
    assert len(calls) == 1, "changing the query row or block must reuse the cached forward pass"


# -- Interpretation -----------------------------------------------------------------------------------------------
def test_interpretation_page_effects_agreement_statements_and_eraser(app_env, router):
    at = app_test().run()
    at.switch_page(INTERPRETATION).run()
    _ok(at)
    headers = [h.value for h in at.header]
    assert any("What each token does" in h for h in headers)
    assert any("ERASER" in h for h in headers)
    assert any("Evidence recovery" in h for h in headers)          # T-65052 has gold evidence
    md = _markdown(at)
    assert "Head" in md and "deleting" in md and "What these numbers do not show" in md
    target = next(s for s in at.selectbox if s.label.startswith("Target team"))
    assert "(predicted)" in target.format_func(target.value)
    agreement = next(d.value for d in at.dataframe if "kendall_tau" in d.value.columns)
    assert {"rollout", "integrated gradients", "b2 h4"} <= set(agreement["signal"])
    gap = next(g for g in (c.value.replace("\\", "") for c in at.caption) if "Integrated gradients (" in g)
    missed = float(re.search(r"\(([\d.]+)% of it\)", gap).group(1))
    assert "path steps" in gap and missed <= 1.0

    other = (target.value + 1) % len(router.teams)
    target.set_value(other).run()
    _ok(at)
    assert f"the log-odds of {router.teams[other]}" in _markdown(at)           # in the page's unit (logit by default)
    at.segmented_control(key="interp_unit").set_value("prob").run()
    _ok(at)
    assert f"p({router.teams[other]})" in _markdown(at)


def test_csv_downloads_are_written_on_click_not_on_every_run(app_env):
    """The load test's race: a static download's /media file could be dropped before a slow browser checked it (404,
    "Download Button source error"). Deferred buttons carry no URL until clicked, so there is nothing to miss."""
    at = app_test().run()
    at.switch_page(INTERPRETATION).run()
    _ok(at)
    buttons = at.get("download_button")
    assert len(buttons) >= 3                                       # per-token table, agreement, ERASER
    for b in buttons:
        assert b.proto.deferred_file_id and not b.proto.url, b.proto.label
    at.switch_page("../pages/tickets.py").run()
    _ok(at)
    assert all(b.proto.deferred_file_id and not b.proto.url for b in at.get("download_button"))


def test_csv_download_writes_the_table_as_shown_when_clicked(monkeypatch):
    import pandas as pd

    from dashboard import ui

    seen = {}
    monkeypatch.setattr(ui.st, "download_button", lambda label, data, **kw: seen.update(label=label, data=data, **kw))
    df = pd.DataFrame({"token": ["not", "a,b", "é"], "removal": [0.5, -0.25, 0.0]})
    expected = df.to_csv(index=False).encode("utf-8")
    ui.csv_download(df, "table (CSV)", "t.csv", key="dl")
    assert callable(seen["data"]) and seen["mime"] == "text/csv" and seen["file_name"] == "t.csv"
    df.loc[0, "removal"] = 9.0                                     # a later change to the caller's table
    assert seen["data"]() == expected == ui.csv_bytes(pd.read_csv(__import__("io").BytesIO(expected)))


# -- broken files ----------------------------------------------------------------------------------------------------
def test_missing_weights_give_one_readable_error(app_env, tmp_path, monkeypatch):
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(tmp_path / "router.pt"))
    at = app_test().run()
    assert not at.exception
    assert len(at.error) == 1
    assert "router.pt" in at.error[0].value and "TICKETNET_WEIGHTS" in at.error[0].value


def test_a_broken_split_gives_one_readable_error(app_env, tmp_path, monkeypatch):
    import shutil

    for name in ("train.csv", "test.csv"):
        shutil.copy(app_env.data / name, tmp_path / name)
    (tmp_path / "valid.csv").write_text("ticket_id,text\nT-1,hello\n", encoding="utf-8")
    monkeypatch.setenv("TICKETNET_DATA", str(tmp_path))
    at = app_test().run()
    assert not at.exception
    assert len(at.error) == 1
    assert "valid.csv" in at.error[0].value and "team" in at.error[0].value


# -- across a split (on a 40-ticket split, so it takes seconds) ------------------------------------------------------
def test_split_wide_interpretation_and_head_importance(small_data):
    at = app_test().run()
    at.switch_page(INTERPRETATION).run()
    _ok(at)
    next(b for b in at.button if b.label == "Compute head importance").click().run()
    _ok(at)
    assert any("Masking **block" in str(m.value) for m in at.markdown)
    next(b for b in at.button if b.label == "Compute interpretation for this split").click().run()
    _ok(at)
    assert any("Median τ" in str(m.value).replace("\\", "") for m in at.markdown)
    assert len(at.get("vega_lite_chart")) >= 10

    # The Tickets table now sorts by "attention disagrees with effect"; Heads titles carry head importance.
    at.switch_page("../pages/tickets.py").run()
    _ok(at)
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert "disagreement" in table.columns and table["disagreement"].between(0, 1).all()
    at.switch_page(HEADS).run()
    _ok(at)
    assert not any("computed on the Interpretation page" in c.value for c in at.caption)


def test_the_per_token_table_is_in_the_unit_chosen_and_says_so(app_env, router):
    # The token bars follow the unit toggle; the per-token table beside them must hold the same numbers, named.
    at = app_test().run()
    at.switch_page(INTERPRETATION).run()
    _ok(at)
    logit = next(d.value for d in at.dataframe if "removal: support (logit difference)" in d.value.columns)
    at.segmented_control(key="interp_unit").set_value("prob").run()
    _ok(at)
    prob = next(d.value for d in at.dataframe if "removal: support (probability)" in d.value.columns)
    assert "unk replacement: support (probability)" in prob.columns
    assert list(logit["token"]) == list(prob["token"])
    top = int(prob["removal: support (probability)"].abs().idxmax())
    # The same token's support has the same sign in both units (logit difference and p(team) move together).
    assert (logit["removal: support (logit difference)"][top] > 0) == (prob["removal: support (probability)"][top] > 0)
    assert not logit["removal: support (logit difference)"].equals(prob["removal: support (probability)"])


@pytest.mark.parametrize("page", ["tickets", "heads", "interpretation", "corpus", "map", "compare", "policy",
                                  "label_issues", "formula", "verification", "cost"])
def test_no_widget_takes_a_default_and_a_session_value_both(app_env, monkeypatch, page):
    # The server log warned that "signals_shown" was created with a default value and also set through the
    # Session State API: a page's view seeds its widgets through the session only, and they take no default.
    from streamlit.elements.lib import policies

    said: list[str] = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    monkeypatch.setattr(policies._LOGGER, "warning", lambda message, *args, **kw: said.append(message % args))
    at = app_test().run()
    if page != "tickets":
        at.switch_page(f"../pages/{page}.py").run()
    at.run()                                                   # a rerun: the seeded widgets drawn again
    if page == "interpretation":                               # the switch that rewrites the signal lists
        at.segmented_control(key="phrase_signals").set_value("on").run()
        at.segmented_control(key="phrase_signals").set_value("off").run()
    assert not at.exception
    assert not [m for m in said if "default value" in m], said
