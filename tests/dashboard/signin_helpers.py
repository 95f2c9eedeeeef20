"""Sign-in files and Streamlit sign-in cookies for the tests, made with Streamlit's own signing."""

from __future__ import annotations

import json
from pathlib import Path

SECRET = "s" * 48
ORIGIN = "http://localhost:8501"


def write_sign_in(folder: Path, ticketnet: str = 'allowed_domains = ["example.com"]\n', auth: str | None = None,
                  name: str = "secrets.toml") -> Path:
    """A sign-in file: a valid [auth] (or `auth`, the section's body) and `ticketnet` as [ticketnet]'s body."""
    auth = auth if auth is not None else (
        f'redirect_uri = "{ORIGIN}/oauth2callback"\ncookie_secret = "{SECRET}"\nclient_id = "ticketnet"\n'
        'client_secret = "secret"\nserver_metadata_url = "http://localhost:9400/.well-known/openid-configuration"\n')
    path = folder / name
    path.write_text(f"[auth]\n{auth}\n[ticketnet]\n{ticketnet}", encoding="utf-8")
    return path


def user_cookie(email: str | None = "ana@example.com", verified: object = True, origin: str = ORIGIN,
                secret: str = SECRET, **claims) -> str:
    """The value Streamlit's sign-in stores in `_streamlit_user` for this identity."""
    from streamlit.web.server.starlette.starlette_app_utils import create_signed_value

    payload = {"sub": email or "someone", "origin": origin, "is_logged_in": True, "provider": "default", **claims}
    if email is not None:
        payload["email"] = email
    if verified is not None:
        payload["email_verified"] = verified
    return create_signed_value(secret, "_streamlit_user", json.dumps(payload)).decode("latin-1")
