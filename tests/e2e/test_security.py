"""No way in: script injection through the typed ticket, and the server's own settings, in a real browser.

The server is started exactly as `make run` starts it (`python -m dashboard --server.port N`, no other flag), so
what is checked is .streamlit/config.toml, not a test's command line:

* typed tickets carrying <script>, <img onerror>, <svg onload> and javascript: links are routed and every page is
  visited; no dialog opens, no handler runs (a canary global stays unset), no injected element or javascript: link
  appears in the DOM, and the payload is on the page as plain text;
* the same payload arriving in the URL (`?ticket=custom&text=...`) is equally inert, and so is a corpus scan of
  tickets carrying it (an analyst's upload), opened on the Corpus page with a ticket picked from it;
* the server listens on loopback only (the kernel's socket table, and a connection to the machine's own
  non-loopback address is refused); XSRF protection is on (the cookie is set, a state-changing request without
  the token gets 403); the browser never asks for anything outside the server (no usage statistics, no CDN).

Needs /usr/bin/chromium; skipped without it, except under CI.
"""

from __future__ import annotations

import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.e2e.browser import (browser_page, click_first_row, free_port, no_exception, require_chromium, settle,
                               streamlit_server, type_ticket)

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

CANARY = "window.__ticketnet_xss"
PAYLOAD = "\n".join([
    "refund my card <script>alert(1)</script>",
    "<img src=x onerror=alert(document.domain)>",
    f"<img src=x onerror=\"{CANARY}=1\"><svg onload=alert(1)><svg/onload=\"{CANARY}=2\">",
    "[click me](javascript:alert(1)) <a href=\"javascript:alert(1)\">here</a> <iframe src=javascript:alert(1)>",
])
URL_PAYLOAD = f"parcel late <svg onload=\"{CANARY}=3\"><img src=x onerror=alert(2)>"
PAGES = ["Heads", "Interpretation", "Verification"]      # the pages that show the ticket's text or tokens

INJECTED = """() => {
  const hits = [];
  for (const el of document.querySelectorAll('img[src="x"], svg[onload], iframe, [onerror], [onload]'))
    hits.push(el.outerHTML.slice(0, 120));
  for (const el of document.querySelectorAll('a[href^="javascript:" i]')) hits.push(el.outerHTML.slice(0, 120));
  for (const el of document.querySelectorAll('script'))
    if (/alert\\(|__ticketnet_xss/.test(el.textContent)) hits.push(el.outerHTML.slice(0, 120));
  return hits;
}"""


@pytest.fixture(scope="module")
def server(artifacts, tmp_path_factory):
    """`make run`'s command on a free port: every setting comes from .streamlit/config.toml."""
    port = free_port()
    env = {"TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data)}
    with streamlit_server(env, tmp_path_factory.mktemp("security") / "server.log", port, bare=True) as (url, _):
        yield url, port


@pytest.fixture(scope="module")
def recorded_page(server, chromium):
    """A page that records dialogs (dismissing them) and every request the browser makes."""
    with browser_page(chromium, viewport={"width": 1400, "height": 1800}) as pg:
        dialogs: list[str] = []
        requests: list[str] = []
        pg.on("dialog", lambda d: (dialogs.append(f"{d.type}: {d.message}"), d.dismiss()))
        pg.context.on("request", lambda r: requests.append(r.url))
        yield pg, dialogs, requests


def _left_the_machine(requests: list[str]) -> list[str]:
    """The recorded request URLs that went to a host other than this machine (data: and blob: stay in the page)."""
    return [u for u in requests if urllib.parse.urlsplit(u).hostname not in ("localhost", "127.0.0.1")
            and not u.startswith(("data:", "blob:"))]


def _inert(pg, dialogs: list[str], where: str) -> None:
    assert not dialogs, f"{where}: a dialog opened: {dialogs}"
    assert pg.evaluate(CANARY) is None, f"{where}: an injected handler ran"
    assert pg.evaluate(INJECTED) == [], f"{where}: injected markup reached the DOM"


def _plain_text_shown(pg, line: str) -> None:
    texts = pg.locator('[data-testid="stText"]').all_inner_texts()
    assert any(line in t for t in texts), f"{line!r} is not on the page as plain text"


def test_injection_tickets_are_inert_on_every_page(server, recorded_page):
    url, _ = server
    pg, dialogs, _ = recorded_page
    pg.goto(url)
    settle(pg)
    type_ticket(pg, PAYLOAD)
    no_exception(pg)
    for line in PAYLOAD.splitlines():
        _plain_text_shown(pg, line)
    _inert(pg, dialogs, "Tickets")
    for name in PAGES:
        pg.locator('[data-testid="stSidebarNav"] a', has_text=name).click()
        settle(pg)
        no_exception(pg)
        _plain_text_shown(pg, PAYLOAD.splitlines()[0])          # the header or sidebar shows the picked ticket
        if name == "Heads":                                     # tooltips carry token text too: hover the heatmaps
            chart = pg.locator('[data-testid="stVegaLiteChart"]').nth(1)
            chart.scroll_into_view_if_needed()
            box = chart.bounding_box()
            for fx in (0.15, 0.4, 0.65, 0.9):
                pg.mouse.move(box["x"] + box["width"] * fx, box["y"] + box["height"] * 0.5)
                pg.wait_for_timeout(250)
        _inert(pg, dialogs, name)


def test_an_injection_ticket_in_the_url_is_inert(server, recorded_page):
    url, _ = server
    pg, dialogs, _ = recorded_page
    for page in ("", "heads", "interpretation"):
        pg.goto(f"{url}/{page}?" + urllib.parse.urlencode({"ticket": "custom", "text": URL_PAYLOAD}))
        settle(pg)
        no_exception(pg)
        _plain_text_shown(pg, URL_PAYLOAD)
        _inert(pg, dialogs, f"/{page} from a link")


def test_a_scan_of_injection_tickets_is_inert_on_the_corpus_page(artifacts, tmp_path, recorded_page):
    """An uploaded ticket file is user text too: scanned, listed, filtered and picked on the Corpus page (a server of
    its own, with the scan in its $TICKETNET_SCANS; the module's browser, which records dialogs and requests)."""
    from ticketnet.corpus.engine import run_scan

    pg, dialogs, requests = recorded_page
    lines = PAYLOAD.splitlines() + [URL_PAYLOAD]
    csv = tmp_path / "injected.csv"
    csv.write_text("ticket_id,text\n" + "".join(f'X-{i},"{line.replace(chr(34), chr(34) * 2)}"\n'
                                                for i, line in enumerate(lines)), encoding="utf-8")
    run_scan(csv, tmp_path / "scans" / "injected", level="effects", scheduler="synchronous",
             weights=artifacts.weights)
    env = {"TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data),
           "TICKETNET_SCANS": str(tmp_path / "scans")}
    with streamlit_server(env, tmp_path / "server.log", bare=True) as (url, _):
        pg.goto(f"{url}/corpus")
        settle(pg)
        no_exception(pg)
        pg.get_by_text(f"{len(lines)} of {len(lines)} tickets match", exact=False).first.wait_for()
        _inert(pg, dialogs, "Corpus")
        word = pg.get_by_role("textbox", name="Contains the word")
        word.fill("script")
        word.press("Enter")
        settle(pg)
        no_exception(pg)
        _inert(pg, dialogs, "Corpus, filtered by a word of the payload")
        word.fill("")
        word.press("Enter")
        settle(pg)
        click_first_row(pg)                                           # the tickets (the token table comes first)
        pg.wait_for_function("() => window.location.search.includes('scan=injected')")
        settle(pg)
        no_exception(pg)
        _inert(pg, dialogs, "Corpus, a ticket picked")
        for name in PAGES:
            pg.locator('[data-testid="stSidebarNav"] a', has_text=name).click()
            settle(pg)
            no_exception(pg)
            _inert(pg, dialogs, f"{name}, the corpus ticket")
    outside = _left_the_machine(requests)
    assert outside == [], f"the Corpus page asked other hosts: {outside[:10]}"


def test_the_browser_asks_nothing_of_any_other_host(server, recorded_page):
    pg, _, requests = recorded_page
    assert requests, "the request recorder saw nothing"
    outside = _left_the_machine(requests)
    assert outside == [], f"requests left the machine (usage statistics, fonts, CDN?): {outside[:10]}"


# -- the server's settings, live -----------------------------------------------------------------------------------
def _listening(port: int) -> list[str]:
    """Local addresses of the sockets listening on `port`, from the kernel's tables (/proc/net/tcp, tcp6)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":          # 0A: LISTEN
                raw = bytes.fromhex(address)
                if len(raw) == 4:
                    found.append(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:                                                     # four little-endian 32-bit words
                    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
                    found.append(socket.inet_ntop(socket.AF_INET6, words))
    return found


def _own_addresses() -> list[str]:
    """This machine's non-loopback addresses (from `hostname -I`), if any."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [a for a in out.split() if not a.startswith(("127.", "::1", "fe80:"))]


def test_the_server_listens_on_loopback_only(server):
    _, port = server
    addresses = _listening(port)
    if not addresses:
        pytest.skip("/proc/net/tcp is not readable here")
    assert all(a.startswith("127.") or a == "::1" for a in addresses), addresses
    for address in _own_addresses():
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family) as s:
            s.settimeout(2)
            assert s.connect_ex((address, port)) != 0, f"the dashboard answers on {address}:{port}"


def test_xsrf_protection_is_on(server):
    url, _ = server
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as r:
        cookies = r.headers.get_all("Set-Cookie") or []
    assert any(c.startswith("_streamlit_xsrf=") for c in cookies), cookies
    request = urllib.request.Request(f"{url}/_stcore/upload_file/some-session/some-file", data=b"x", method="PUT")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 403, err.value.code
