"""Every page on routers with other teams than Larkfield's (4 and 12 of them, odd names, other shapes), picked from
the sidebar or the URL, with each session's numbers its own router's."""

from __future__ import annotations

import pytest

from tests.conftest import ODD_TEAMS, app_test

PAGES = tuple(f"../pages/{p}.py" for p in ("tickets", "heads", "interpretation", "corpus", "formula", "verification",
                                            "cost"))


def _ok(at, where: str) -> None:
    assert not at.exception, (where, [e.value for e in at.exception])
    assert not at.error, (where, [e.value for e in at.error])


def _switch(at, page: str):
    at.switch_page(page)
    return at.run()


@pytest.mark.parametrize("name,teams", [("helpdesk", ODD_TEAMS[:4]), ("ops", ODD_TEAMS)])
def test_every_page_runs_on_a_router_with_other_teams(routers_env, name, teams):
    from ticketnet import Router

    router = Router.load(routers_env / name / "router.pt")
    assert router.teams == tuple(sorted(teams))
    at = app_test(router=name).run()
    _ok(at, "tickets")
    assert at.session_state["_router"] == name and at.query_params["router"] == name
    table = next(d.value for d in at.dataframe if "ticket_id" in d.value.columns)
    assert set(table["team"]) <= set(teams) and len(table) == len(router.meta["export"]["split_tickets"]) * 0 + \
        router.meta["export"]["split_tickets"]["valid"]
    assert set(table["predicted"]) <= set(teams)
    picked = at.session_state["picked_ticket"]
    assert picked in set(table["ticket_id"]), "the default ticket must come from this router's data"
    for page in PAGES[1:]:
        at = _switch(at, page)
        _ok(at, page)
        assert at.session_state["_router"] == name, page


def test_the_sidebar_lists_the_routers_and_switching_forgets_the_other_routers_ticket(routers_env):
    at = app_test().run()
    _ok(at, "default")
    box = at.sidebar.selectbox(key="router_picker")
    assert box.options == ["larkfield · 5 teams", "larkfield-minilm · 5 teams · encoder", "helpdesk · 4 teams",
                           "ops · 12 teams"]
    assert at.session_state["picked_ticket"] == "T-65052"
    at = box.select("ops").run()
    at = at.run()
    _ok(at, "switched")
    assert at.session_state["_router"] == "ops" and at.query_params["router"] == "ops"
    assert at.session_state["picked_ticket"] != "T-65052"
    predicted = next(m.value for m in at.metric if m.label == "prediction")
    assert predicted in ODD_TEAMS


def test_an_unknown_router_in_a_link_falls_back_to_the_default(routers_env):
    at = app_test(router="nobody").run()
    _ok(at, "unknown")
    assert at.session_state["_router"] == "larkfield" and "router" not in at.query_params


def test_a_shared_link_opens_its_routers_ticket_and_its_splits_only(routers_env):
    from ticketnet import load_split

    rows = load_split(routers_env / "ops" / "data" / "valid.csv")
    at = app_test(router="ops", ticket=rows[3]["ticket_id"]).run()
    _ok(at, "link")
    assert at.session_state["picked_ticket"] == rows[3]["ticket_id"]
    assert at.segmented_control(key="split").options == ["valid", "test", "train"]     # no hand-written set
    assert any("bag-of-words baseline" in c.value and "chosen on this split" in c.value for c in at.caption)


def test_a_team_router_opens_on_its_own_first_ticket_with_its_own_placeholders(routers_env):
    at = app_test(router="helpdesk").run()
    assert not at.exception
    ticket = at.query_params["ticket"]
    assert ticket != "T-65052" and at.session_state["picked_ticket"] == ticket
    typed = next(t for t in at.text_area if t.label == "Ticket text")
    assert "card was charged twice" not in (typed.placeholder or "")
    search = at.text_input(key="ticket_search")
    assert "T-65052" not in (search.placeholder or "")
    labels = app_test(router="helpdesk")
    labels.switch_page("../pages/label_issues.py").run()
    assert not labels.exception and labels.query_params.get("ticket") != "T-65052"
