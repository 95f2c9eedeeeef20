"""Every page's own sign-in check (AppTest): nothing before sign-in, a refusal for an outsider, and each user's
routers only."""

from __future__ import annotations

import pytest

from dashboard import access
from dashboard.text import md_escape
from tests.conftest import app_test
from tests.dashboard.signin_helpers import write_sign_in

RULES = ('allowed_domains = ["example.com", "it.example.com"]\n'
         '[ticketnet.routers]\n"helpdesk" = ["@it.example.com"]\n')


@pytest.fixture
def signed_in_as(routers_env, tmp_path, monkeypatch):
    """Sign-in on, with the session's cookie read as the given identity (None: signed out)."""
    monkeypatch.setenv(access.SIGN_IN_ENV, str(write_sign_in(tmp_path, RULES)))
    seen = {}

    def user(cookies, sign_in):
        return seen.get("user")

    monkeypatch.setattr(access, "signed_in_user", user)

    def set_user(email=None, verified=True):
        seen["user"] = None if email is None else {"email": email, "email_verified": verified, "is_logged_in": True}

    return set_user


def _texts(at) -> str:
    return " ".join(str(e.value) for kind in ("markdown", "title", "caption", "metric", "dataframe", "text")
                    for e in getattr(at, kind))


def test_before_sign_in_every_page_shows_the_name_and_the_button_only(signed_in_as):
    signed_in_as(None)
    for page in ("tickets", "heads", "interpretation"):
        at = app_test(ticket="T-65052")
        at.switch_page(f"../pages/{page}.py")
        at.run()
        assert not at.exception
        assert [t.value for t in at.title] == ["ticketnet"]
        assert [b.label for b in at.button] == ["Sign in"]
        assert not at.dataframe and not at.metric and not at.sidebar.selectbox
        assert "T-65052" not in _texts(at) and "larkfield" not in _texts(at)


@pytest.mark.parametrize(("email", "verified", "why"), [("eve@other.org", True, "may not open this dashboard"),
                                                         ("ana@example.com", False,
                                                          "no e-mail address the provider has verified")])
def test_an_outsider_is_refused_by_name_and_can_sign_out(signed_in_as, email, verified, why):
    signed_in_as(email, verified)
    at = app_test(ticket="T-65052").run()
    assert not at.exception
    said = " ".join(m.value for m in at.markdown)
    assert f"**{md_escape(email)}**" in said and why in said
    assert [b.label for b in at.button] == ["Sign out"] and not at.dataframe


def test_an_allowed_user_sees_tickets_and_only_the_routers_open_to_them(signed_in_as):
    signed_in_as("ana@example.com")
    at = app_test().run()
    assert not at.exception and not at.error
    assert any("ticket_id" in d.value.columns for d in at.dataframe)
    assert "Signed in as ana@example.com" in [t.value for t in at.sidebar.text]
    assert "Sign out" in [b.label for b in at.sidebar.button]
    box = at.sidebar.selectbox(key="router_picker")
    assert box.options == ["larkfield · 5 teams", "larkfield-minilm · 5 teams · encoder", "ops · 12 teams"]

    signed_in_as("joe@it.example.com")
    assert "helpdesk · 4 teams" in app_test().run().sidebar.selectbox(key="router_picker").options


def test_a_link_to_a_router_the_user_may_not_open_reads_as_one_that_does_not_exist(signed_in_as):
    signed_in_as("ana@example.com")
    hidden = app_test(router="helpdesk").run()
    missing = app_test(router="nosuch").run()
    assert hidden.session_state["_router"] == missing.session_state["_router"] == "larkfield"
    said = [w.value for w in hidden.warning]
    assert said == [w.value.replace("'nosuch'", "'helpdesk'") for w in missing.warning] and "helpdesk" in said[0]
    assert "helpdesk ·" not in " ".join(hidden.sidebar.selectbox(key="router_picker").options)
