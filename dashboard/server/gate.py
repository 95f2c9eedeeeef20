"""The server's sign-in gate: every request but the health check and the sign-in itself needs an allowed user."""

# Streamlit's sign-in (`st.login`) only tells the script who is there: the websocket, uploads, media files and
# downloads answer anyone. This ASGI middleware runs in front of all of them, so before sign-in no script runs and
# nothing of a ticket, a router or a figure can leave the server. A page address answers with a plain page of its
# own (the product's name and a sign-in button, or a refusal naming the e-mail); anything else with 401 or 403.

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from dashboard import access

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

HEALTH = "/_stcore/health"                   # HAProxy's check, and a monitor's
# Streamlit's own sign-in routes: the way in and out.
OPEN_PATHS = frozenset({HEALTH, "/auth/login", "/auth/logout", access.CALLBACK_PATH})
# First path segments that are never a page: the websocket, uploads, media, downloads, components, the frontend.
SERVICE_ROOTS = frozenset({"_stcore", "media", "component", "app", "static", "auth", "bidi-components"})
PRODUCT = "ticketnet"
# The page a signed-out visitor asked for (a deep link: /heads?ticket=…), opened again once they are signed in:
# Streamlit's sign-in always comes back to the app's root.
AFTER_SIGN_IN_COOKIE = "ticketnet_after_sign_in"
AFTER_SIGN_IN_SECONDS = 600
# The gate's pages load nothing (no script, no image, no font): they cannot leak, and cannot be framed.
HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                               "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


class SignInGate:
    """ASGI middleware: lets through only requests from a signed-in user whom the sign-in file admits."""

    def __init__(self, app: ASGIApp, sign_in: access.SignIn | None = None, base_path: str | None = None) -> None:
        self.app = app
        self.sign_in = sign_in or access.current()
        if self.sign_in is None:
            raise access.SignInError(f"the sign-in gate needs a sign-in file ({access.SIGN_IN_ENV} is not set)")
        if base_path is None:
            from streamlit import config

            base_path = config.get_option("server.baseUrlPath") or ""
        self.base = "/" + base_path.strip("/") if base_path.strip("/") else ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "/")
        local = (path[len(self.base):] or "/") if self.base and path.startswith(self.base) else path
        if local in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        from starlette.requests import HTTPConnection

        cookies = HTTPConnection(scope).cookies
        user = access.signed_in_user(cookies, self.sign_in)
        email = access.verified_email(user)
        if self.sign_in.access.admits(email):
            after = self._after_sign_in(cookies) if scope["type"] == "http" and local == "/" else None
            if after is not None:
                from starlette.responses import RedirectResponse

                response = RedirectResponse(after, status_code=302, headers={"Cache-Control": "no-store"})
                response.delete_cookie(AFTER_SIGN_IN_COOKIE, path="/")
                await response(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            # Closing before accepting refuses the handshake (HTTP 403): no session is made.
            await send({"type": "websocket.close", "code": 1008})
            return
        await self._refuse(scope, receive, send, local, user, email, access.has_sign_in_cookie(cookies))

    async def _refuse(self, scope, receive, send, local: str, user: dict | None, email: str | None,
                      had_cookie: bool) -> None:
        from starlette.responses import HTMLResponse, PlainTextResponse

        is_page = scope.get("method") in ("GET", "HEAD") and local.split("/")[1] not in SERVICE_ROOTS
        if not is_page:
            status, text = (401, "Sign in first.") if user is None else (403, "This account may not open it.")
            response = PlainTextResponse(text, status_code=status, headers=HEADERS)
        elif user is None:
            note = access.EXPIRED_NOTE if had_cookie else access.SIGN_IN_NOTE
            response = HTMLResponse(sign_in_page(self.base, note), headers=HEADERS)
            query = scope.get("query_string", b"").decode("latin-1")
            asked = scope.get("path", "/") + (f"?{query}" if query else "")
            if local != "/" or query:
                from urllib.parse import quote

                response.set_cookie(AFTER_SIGN_IN_COOKIE, quote(asked, safe="/?=&"), max_age=AFTER_SIGN_IN_SECONDS,
                                    path="/", httponly=True, samesite="lax")
        else:
            response = HTMLResponse(refusal_page(self.base, user, email), status_code=403, headers=HEADERS)
        await response(scope, receive, send)


    def _after_sign_in(self, cookies: dict[str, str]) -> str | None:
        """The page to open after sign-in: a path on this server only (never another site's address)."""
        from urllib.parse import unquote

        raw = cookies.get(AFTER_SIGN_IN_COOKIE)
        if not raw:
            return None
        asked = unquote(raw)
        local = asked[len(self.base):] if self.base and asked.startswith(self.base) else asked
        if (not local.startswith("/") or local.startswith("//") or "\\" in asked
                or any(ord(c) < 0x20 for c in asked) or local == "/"):       # the root itself: nothing to reopen
            return None
        return asked


def login_url(base: str) -> str:
    """Streamlit's sign-in route, with the short-lived signed token that names its one provider (what st.login
    makes)."""
    from urllib.parse import quote

    from streamlit.auth_util import encode_provider_token

    return f"{base}/auth/login?provider={quote(encode_provider_token('default'))}"


def sign_in_page(base: str, note: str) -> str:
    """The page before sign-in: the product's name, one line and the sign-in button; nothing else."""
    body = (f"<p>{html.escape(note)}</p>"
            f'<p><a class="button" href="{html.escape(login_url(base))}">Sign in</a></p>')
    return _page("Sign in", body)


def refusal_page(base: str, user: dict, email: str | None) -> str:
    """A signed-in user the file does not admit: who they are signed in as, and the way out."""
    shown, why = access.refusal(user, email)
    body = (f"<p>You are signed in as <strong>{html.escape(shown)}</strong>, which {html.escape(why)}</p>"
            f'<p><a class="button" href="{html.escape(base)}/auth/logout">Sign out</a></p>')
    return _page("Not allowed", body)


def _page(title: str, body: str) -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{PRODUCT} · {html.escape(title)}</title>
<style>
  :root {{ color-scheme: light dark; --fg: #1f2430; --bg: #ffffff; --accent: #1f5fa8; --on-accent: #ffffff; }}
  @media (prefers-color-scheme: dark) {{ :root {{ --fg: #e8eaf0; --bg: #0e1117; --accent: #6ea8e8;
    --on-accent: #0e1117; }} }}
  body {{ margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--fg);
    font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }}
  main {{ max-width: 28rem; padding: 2rem; }}
  h1 {{ font-size: 1.6rem; margin: 0 0 1rem; }}
  .button {{ display: inline-block; padding: .5rem 1.2rem; border-radius: .5rem; background: var(--accent);
    color: var(--on-accent); text-decoration: none; font-weight: 600; }}
  .button:focus-visible {{ outline: 3px solid var(--fg); outline-offset: 2px; }}
</style></head>
<body><main><h1>{PRODUCT}</h1>{body}</main></body></html>
"""
