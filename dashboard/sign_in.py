"""Every page's own sign-in check, behind the server's gate: who is signed in, which routers they may open, sign-out."""

# The gate (dashboard/server/gate.py) refuses the websocket of anyone the sign-in file does not admit, so a script
# normally runs only for an admitted user. The script checks again on every run, before any page draws, with the same
# rules on the same cookie: a page never relies on the request having come through the gate.

from __future__ import annotations

import streamlit as st

from dashboard import access
from dashboard.data import model
from dashboard.text import md_escape

_EMAIL = "_signed_in_email"             # this session's admitted user, as this run's check found them


def _user() -> tuple[dict | None, str | None]:
    sign_in = access.current()
    user = access.signed_in_user(st.context.cookies, sign_in) if sign_in else None
    return user, access.verified_email(user)


def require_sign_in() -> str | None:
    """The admitted user's e-mail; None where the dashboard runs without sign-in. Anyone else gets the product's
    name and the way in (or out) and nothing more: the run stops here."""
    sign_in = access.current()
    if sign_in is None:
        return None
    user, email = _user()
    if sign_in.access.admits(email):
        st.session_state[_EMAIL] = email
        return email
    st.session_state.pop(_EMAIL, None)
    st.title("ticketnet")
    if user is None:
        st.markdown(access.SIGN_IN_NOTE)
        st.button("Sign in", type="primary", on_click=st.login)
    else:
        shown, why = access.refusal(user, email)
        st.markdown(f"You are signed in as **{md_escape(shown)}**, which {why}")
        st.button("Sign out", on_click=st.logout)
    st.stop()


def may_open(router: str) -> bool:
    """Whether this session's user may open `router` (every router, without sign-in)."""
    sign_in = access.current()
    if sign_in is None:
        return True
    try:
        email = st.session_state.get(_EMAIL)
    except Exception:                   # noqa: BLE001 - outside a script run (the warm-up): no user, no router
        return False
    return sign_in.access.may_open(email, router)


model.limit_routers_with(may_open)


def signed_in_sidebar(email: str | None) -> None:
    """Who is signed in, and the sign-out button (which signs out of every server of the deployment)."""
    if email is None:
        return
    row = st.sidebar.container(horizontal=True, vertical_alignment="center", gap="small")
    # Plain text, not Markdown: an address would turn into a mailto link there.
    row.text(f"Signed in as {email}")
    row.button("Sign out", key="sign_out", on_click=st.logout, icon=":material/logout:", type="tertiary")
