"""The server's sign-in gate, in front of a stand-in for Streamlit's routes: what each visitor may reach."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from dashboard import access
from dashboard.server import gate
from tests.dashboard.signin_helpers import user_cookie, write_sign_in

TICKET = "My card was charged twice for one order"          # what only an admitted user may ever see


async def _page(request):
    return PlainTextResponse(f"index of {request.url.path}: {TICKET}")


async def _socket(ws):
    await ws.accept()
    await ws.send_text(TICKET)
    await ws.close()


def _streamlit_like() -> Starlette:
    routes = [Route(p, _page, methods=["GET", "POST", "PUT"]) for p in (
        "/", "/heads", "/_stcore/health", "/_stcore/host-config", "/_stcore/upload_file/s/f", "/media/abc.csv",
        "/auth/login", "/auth/logout", "/oauth2callback", "/static/js/main.js", "/_stcore/metrics",
        "/_stcore/agent/mcp", "/component/x/index.html")]
    return Starlette(routes=[*routes, WebSocketRoute("/_stcore/stream", _socket)])


@pytest.fixture
def client(tmp_path, monkeypatch):
    sign_in = access.read_sign_in(write_sign_in(tmp_path, 'allowed_domains = ["example.com"]\n'))
    monkeypatch.setattr("streamlit.auth_util.encode_provider_token", lambda provider: f"token-for-{provider}")
    return TestClient(gate.SignInGate(_streamlit_like(), sign_in=sign_in, base_path=""), follow_redirects=False)


def _as(client, **claims):
    client.cookies.set("_streamlit_user", user_cookie(**claims))
    return client


def test_before_sign_in_a_page_is_the_name_and_the_button_only(client):
    for path in ("/", "/heads?ticket=T-65052"):
        r = client.get(path)
        assert r.status_code == 200 and "text/html" in r.headers["content-type"]
        assert TICKET not in r.text and "T-65052" not in r.text and "index of" not in r.text
        assert "<h1>ticketnet</h1>" in r.text and 'href="/auth/login?provider=token-for-default"' in r.text
        assert r.headers["cache-control"] == "no-store" and "default-src 'none'" in r.headers["content-security-policy"]


@pytest.mark.parametrize("path", ["/_stcore/host-config", "/_stcore/upload_file/s/f", "/media/abc.csv",
                                  "/static/js/main.js", "/_stcore/metrics", "/_stcore/agent/mcp",
                                  "/component/x/index.html"])
def test_before_sign_in_every_service_route_answers_401(client, path):
    for method in ("GET", "POST", "PUT"):
        r = client.request(method, path)
        assert r.status_code == 401 and TICKET not in r.text


def test_before_sign_in_the_websocket_is_refused_before_any_session(client):
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/_stcore/stream") as ws:
        ws.receive_text()
    assert refused.value.code == 1008


def test_the_health_check_and_the_sign_in_routes_stay_open(client):
    for path in ("/_stcore/health", "/auth/login", "/auth/logout", "/oauth2callback"):
        assert client.get(path).status_code == 200


def test_an_admitted_user_reaches_everything(client):
    _as(client)
    assert TICKET in client.get("/heads").text
    assert client.post("/_stcore/upload_file/s/f").status_code == 200
    assert client.get("/media/abc.csv").status_code == 200
    with client.websocket_connect("/_stcore/stream") as ws:
        assert ws.receive_text() == TICKET


@pytest.mark.parametrize(("claims", "shown"), [
    ({"email": "eve@other.org"}, "eve@other.org"),
    ({"email": "ana@example.com", "verified": False}, "ana@example.com"),
    ({"email": "<b>x</b>@other.org"}, "&lt;b&gt;x&lt;/b&gt;@other.org"),
    ({"email": "eve@sub.example.com"}, "eve@sub.example.com"),
])
def test_a_user_it_does_not_admit_gets_a_refusal_naming_them_and_nothing_else(client, claims, shown):
    _as(client, **claims)
    r = client.get("/heads?ticket=T-65052")
    assert r.status_code == 403 and shown in r.text and TICKET not in r.text
    assert 'href="/auth/logout"' in r.text and "<b>x</b>" not in r.text
    assert client.get("/media/abc.csv").status_code == 403
    with pytest.raises(WebSocketDisconnect), client.websocket_connect("/_stcore/stream") as ws:
        ws.receive_text()


def test_a_forged_or_expired_cookie_is_no_sign_in(client):
    client.cookies.set("_streamlit_user", user_cookie(secret="x" * 48))
    r = client.get("/")
    assert "expired" in r.text and TICKET not in r.text
    assert client.get("/media/abc.csv").status_code == 401


def test_a_deep_link_opens_again_after_sign_in_and_only_on_this_server(client):
    r = client.get("/heads?ticket=T-65052")
    assert r.cookies.get(gate.AFTER_SIGN_IN_COOKIE)
    _as(client)
    back = client.get("/")                                  # where Streamlit's sign-in comes back to
    assert back.status_code == 302 and back.headers["location"] == "/heads?ticket=T-65052"
    assert TICKET in client.get(back.headers["location"]).text
    for evil in ("//evil.example/x", "/\\evil.example", "https://evil.example/", "/%2F/evil.example"):
        client.cookies.set(gate.AFTER_SIGN_IN_COOKIE, evil)
        assert client.get("/").status_code == 200, evil   # served, not sent elsewhere


def test_a_base_path_is_respected(tmp_path, monkeypatch):
    sign_in = access.read_sign_in(write_sign_in(tmp_path))
    monkeypatch.setattr("streamlit.auth_util.encode_provider_token", lambda provider: "t")
    inner = Starlette(routes=[Route("/tickets/_stcore/health", _page), Route("/tickets/media/a", _page)])
    c = TestClient(gate.SignInGate(inner, sign_in=sign_in, base_path="/tickets/"))
    assert c.get("/tickets/_stcore/health").status_code == 200
    assert c.get("/tickets/media/a").status_code == 401
    assert 'href="/tickets/auth/login?provider=t"' in c.get("/tickets/heads").text


def test_without_a_sign_in_file_the_gate_refuses_to_start(monkeypatch):
    monkeypatch.delenv(access.SIGN_IN_ENV, raising=False)
    with pytest.raises(access.SignInError, match=access.SIGN_IN_ENV):
        gate.SignInGate(_streamlit_like())
