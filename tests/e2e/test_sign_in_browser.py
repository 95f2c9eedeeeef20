"""Sign-in end to end: a real OpenID Connect provider (oidc-provider-mock), the team deployment of two servers behind
HAProxy, and Chromium."""

from __future__ import annotations

import re
import urllib.request
from urllib.parse import quote

import pytest

from dashboard import team
from tests.e2e.browser import browser_page, free_port, require_chromium, settle, shot, shot_path

pytestmark = pytest.mark.browser
require_chromium()
if team.find_haproxy() is None:
    pytest.skip("haproxy is not installed (make test installs Debian's)", allow_module_level=True)

TICKET_TEXT = "charged twice for one order"            # T-65052's body: never on a page before sign-in
ALLOWED, OUTSIDER = "ana@example.com", "eve@other.org"


@pytest.fixture(scope="module")
def provider():
    """A real OpenID Connect provider on a free local port, any client id accepted; its users' verified e-mails."""
    import httpx
    import oidc_provider_mock

    with oidc_provider_mock.run_server_in_thread(port=0) as server:
        url = f"http://localhost:{server.server_port}"
        for email in (ALLOWED, OUTSIDER):
            r = httpx.put(f"{url}/users/{quote(email)}", json={"email": email, "email_verified": True})
            assert r.status_code == 204
        yield url


@pytest.fixture(scope="module")
def deployment(provider, artifacts, tmp_path_factory):
    """`python -m dashboard.team --processes 2 --secrets FILE` on the shipped router: (the proxy's url, the servers'
    urls)."""
    from ticketnet.bench.load import procfs
    from ticketnet.bench.load.server import dashboard_server

    tmp = tmp_path_factory.mktemp("sign-in")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    secrets = tmp / "secrets.toml"
    secrets.write_text(f"""[auth]
redirect_uri = "{url}/oauth2callback"
cookie_secret = "{'c' * 64}"
client_id = "ticketnet"
client_secret = "any"
server_metadata_url = "{provider}/.well-known/openid-configuration"

[ticketnet]
allowed_domains = ["example.com"]
""")
    env = {"TICKETNET_CACHE": str(tmp / "cache"), "TICKETNET_SCANS": str(tmp / "scans"),
           "TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data)}
    (tmp / "scans").mkdir()
    with dashboard_server(tmp / "team.log", env, processes=2, port=port, secrets=secrets) as (proxy, launcher):
        servers = sorted(int(m.group(1)) for pid in procfs.tree(launcher.pid) - {launcher.pid}
                         if (m := re.search(r"--server\.port\x00(\d+)", _cmdline(pid))))
        assert len(servers) == 2
        yield proxy, [f"http://127.0.0.1:{p}" for p in servers], secrets


def _sign_in(pg, email: str) -> None:
    pg.get_by_role("link", name="Sign in").click()
    pg.get_by_placeholder("sub").fill(email)
    pg.get_by_role("button", name="Authorize").click()


def test_before_sign_in_a_deep_link_shows_no_ticket_and_nothing_runs(chromium, deployment):
    proxy, _, _ = deployment
    with browser_page(chromium, viewport={"width": 1366, "height": 768}) as pg:
        sockets = []
        pg.on("websocket", lambda ws: sockets.append(ws.url))
        for path in ("/", "/heads?ticket=T-65052", "/interpretation?ticket=T-65052&row=3"):
            pg.goto(proxy + path)
            html = pg.content()
            assert pg.get_by_role("link", name="Sign in").is_visible()
            assert TICKET_TEXT not in html and "T-65052" not in html and "larkfield" not in html.lower()
            assert pg.locator("[data-testid=stApp]").count() == 0
        shot(pg, "sign_in_before")
        assert sockets == []


def test_an_allowed_user_signs_in_lands_on_the_deep_link_and_sees_tickets(chromium, deployment):
    proxy, _, _ = deployment
    with browser_page(chromium, viewport={"width": 1366, "height": 768}) as pg:
        pg.goto(proxy + "/heads?ticket=T-65052")
        _sign_in(pg, ALLOWED)
        pg.wait_for_url(re.compile(r"/heads\?ticket=T-65052"))
        settle(pg)
        assert pg.get_by_role("heading", name="Heads", exact=True).is_visible()
        assert TICKET_TEXT in pg.inner_text("[data-testid=stMain]")
        pg.goto(proxy + "/")
        settle(pg)
        assert pg.get_by_role("heading", name="Tickets", exact=True).is_visible()
        assert pg.locator("[data-testid=stDataFrame]").count() >= 1
        assert f"Signed in as {ALLOWED}" in pg.inner_text("[data-testid=stSidebar]")
        shot(pg, "sign_in_tickets")


def test_the_one_sign_in_holds_on_every_server_and_sign_out_clears_it_for_all(chromium, deployment):
    proxy, servers, _ = deployment
    with browser_page(chromium, viewport={"width": 1000, "height": 768}, color_scheme="dark") as pg:
        pg.goto(proxy + "/")
        _sign_in(pg, ALLOWED)
        settle(pg)
        sidebar = pg.locator("[data-testid=stSidebar]")
        assert sidebar.get_by_text(f"Signed in as {ALLOWED}").is_visible()       # seen without scrolling
        pg.screenshot(path=str(shot_path("sign_in_1000_dark")))
        cookie = "; ".join(f"{c['name']}={c['value']}" for c in pg.context.cookies()
                           if c["name"].startswith("_streamlit_user"))
        for server in servers:                          # whichever server HAProxy picks, the same sign-in holds
            assert "<h1>ticketnet</h1>" not in _get(server + "/heads", cookie)
            assert "<h1>ticketnet</h1>" in _get(server + "/heads")
            # a media file or download, and an upload: Streamlit's own answer once signed in, 401 before
            assert _status(server + "/media/0123abcd.csv", cookie) == 404
            assert _status(server + "/media/0123abcd.csv") == 401
            assert _status(server + "/_stcore/upload_file/s/f", method="PUT") == 401
        pg.get_by_role("button", name="Sign out").click()
        pg.get_by_role("button", name="End session").click()       # the provider's own sign-out page
        pg.wait_for_selector("text=Sign in to open the dashboard.")
        assert not [c for c in pg.context.cookies() if c["name"].startswith("_streamlit_user")]
        pg.goto(proxy + "/heads?ticket=T-65052")
        assert TICKET_TEXT not in pg.content() and pg.get_by_role("link", name="Sign in").is_visible()


def test_a_user_outside_the_domains_is_refused_and_sees_no_ticket(chromium, deployment):
    proxy, _, _ = deployment
    with browser_page(chromium, viewport={"width": 1366, "height": 768}, color_scheme="dark") as pg:
        pg.goto(proxy + "/heads?ticket=T-65052")
        _sign_in(pg, OUTSIDER)
        pg.wait_for_selector("text=may not open this dashboard")
        html = pg.content()
        assert OUTSIDER in pg.inner_text("body") and TICKET_TEXT not in html and "T-65052" not in html
        assert pg.locator("[data-testid=stApp]").count() == 0
        shot(pg, "sign_in_refused_dark")
        pg.get_by_role("link", name="Sign out").click()
        pg.get_by_role("button", name="End session").click()
        pg.wait_for_selector("text=Sign in to open the dashboard.")


def test_the_load_client_signs_in_with_a_cookie_and_is_refused_without(deployment):
    import asyncio

    from ticketnet.bench.load.protocol import Session
    from ticketnet.bench.load.sign_in import analyst_cookie

    proxy, _, secrets = deployment

    async def tickets(cookie):
        async with Session(proxy, timeout=60, cookie=cookie) as s:
            return await s.open()

    from concurrent.futures import ThreadPoolExecutor

    def in_thread(cookie):                      # Playwright holds an event loop on this thread
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, tickets(cookie)).result()

    run = in_thread(analyst_cookie(secrets))
    assert run.status and not run.exceptions and run.page_not_found is None
    assert "T-65052" in " ".join(str(el) for _, el in run.elements.values())
    with pytest.raises(Exception) as refused:                   # the handshake itself is refused (HTTP 403)
        in_thread(None)
    assert "403" in str(refused.value)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _status(url: str, cookie: str | None = None, method: str = "GET") -> int:
    import urllib.error

    req = urllib.request.Request(url, method=method, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def _get(url: str, cookie: str | None = None) -> str:
    req = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()
