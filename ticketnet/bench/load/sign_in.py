"""A signed-in analyst for the load client: the cookie Streamlit's sign-in would set, made from the file's secret."""

from __future__ import annotations

import json
from pathlib import Path


def analyst_cookie(sign_in_file: Path) -> str:
    """A Cookie header for an admitted user of `sign_in_file` (its first allowed address, or `load@` its first
    domain), signed as Streamlit's sign-in signs it; ValueError, in one line, for a file that cannot be used."""
    from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

    from dashboard import access

    sign_in = access.read_sign_in(sign_in_file)          # SignInError is a ValueError
    rules = sign_in.access
    email = min(rules.emails) if rules.emails else f"load@{min(rules.domains)}"
    payload = {"sub": email, "email": email, "email_verified": True, "origin": sign_in.origin, "is_logged_in": True,
               "provider": "default"}
    value = create_signed_value(sign_in.cookie_secret, access.USER_COOKIE, json.dumps(payload)).decode("latin-1")
    return f"{access.USER_COOKIE}={value}"
