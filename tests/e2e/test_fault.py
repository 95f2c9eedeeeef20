"""The server dies mid-session: kill `streamlit run` with SIGKILL while a browser shows a ticket, start it again on
the same port, and the open page comes back by itself with the ticket from its URL. Nothing on disk changes: the
weights and splits hash the same before and after, and no temporary file is left beside them.

Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it, except under CI.
"""

from __future__ import annotations

import hashlib
import re
import signal
import time

import pytest

from tests.e2e.browser import (CHROMIUM, CHROMIUM_ARGS, WAIT_MS, charts_drawn, free_port, no_exception, require_chromium,
                           settle, shot, streamlit_server, ticket_in_url)
from tests.conftest import DEFAULT_TICKET

pytestmark = pytest.mark.browser
require_chromium()
sync_api = pytest.importorskip("playwright.sync_api")

STATE_JS = "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-connection-state')"
# Counts the script runs the page has seen start, so the test knows the page after the restart is a new run.
RUNS_JS = """
window.__stRuns = 0;
let last = null;
new MutationObserver(() => {
  const s = document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') ?? null;
  if (s !== last) { if (s === 'running') window.__stRuns++; last = s; }
}).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-test-script-state']});
"""


def _snapshot(*folders) -> dict[str, str]:
    """sha256 of every file under the folders (weights/ and data/ by default)."""
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()}


def _leftovers(*folders) -> list[str]:
    return [str(p) for folder in folders for p in folder.rglob("*")
            if p.name.endswith((".tmp", ".part", "~")) or p.name.startswith(".~")]


def test_the_page_recovers_after_the_server_is_killed(artifacts, valid_rows, tmp_path):
    folders = (artifacts.weights.parent, artifacts.data)
    before = _snapshot(*folders)
    assert before and not _leftovers(*folders)
    env = {"TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data)}
    ticket = next(r for r in valid_rows if r["ticket_id"] != DEFAULT_TICKET and len(r["text"]) > 40)
    port = free_port()

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.set_default_timeout(WAIT_MS)
        page.add_init_script(RUNS_JS)
        crashed = []
        page.on("crash", lambda _: crashed.append(True))

        def fresh_run(action, new_document: bool = False, timeout: float = 60_000) -> None:
            """Do `action` and wait for the script run it causes to finish (not merely for old output to be there)."""
            runs = 0 if new_document else page.evaluate("window.__stRuns")
            action()
            page.wait_for_function("n => window.__stRuns > n", arg=runs, timeout=timeout)
            settle(page)

        def shows_the_ticket(when: str) -> None:
            page.get_by_role("heading", name=re.compile(r"Block 1: the \d+ heads")).wait_for()
            page.get_by_text(ticket["text"][:40], exact=False).first.wait_for()
            assert ticket_in_url(page) == ticket["ticket_id"], when
            no_exception(page)
            assert charts_drawn(page, 5) >= 5, when

        def lost_and_kept(name: str) -> None:
            """The page notices the dead server (the status widget says it is connecting), keeps the URL, and does
            not crash."""
            page.wait_for_function(f"() => ({STATE_JS})() !== 'CONNECTED'", timeout=20_000)
            assert page.evaluate(f"({STATE_JS})()") in ("PINGING_SERVER", "CONNECTING", "DISCONNECTED_FOREVER")
            assert ticket_in_url(page) == ticket["ticket_id"] and not crashed
            shot(page, name)

        def reconnected() -> None:
            # Streamlit's frontend keeps pinging /_stcore/health and reconnects by itself, to a new session.
            page.wait_for_function(f"() => ({STATE_JS})() === 'CONNECTED'", timeout=45_000)

        # 1. Killed while idle: the page keeps showing the ticket, reconnects, and the next interaction runs on the
        #    new server, whose new session takes the ticket from the URL. A reload shows it too.
        with streamlit_server(env, tmp_path / "first.log", port=port) as (url, proc):
            fresh_run(lambda: page.goto(f"{url}/heads?ticket={ticket['ticket_id']}"), new_document=True)
            shows_the_ticket("before the kill")
            proc.send_signal(signal.SIGKILL)                    # no shutdown handler runs
            proc.wait(timeout=10)
        lost_and_kept("fault_1_server_killed")
        assert page.get_by_role("heading", name=re.compile(r"Block 1: the \d+ heads")).count() == 1

        with streamlit_server(env, tmp_path / "second.log", port=port) as (url, proc):
            t = time.monotonic()
            reconnected()
            shows_the_ticket("reconnected")

            def change_query_row():
                page.locator('[data-testid="stSelectbox"]', has_text="Query row").click()
                page.keyboard.type("2 · ")
                page.keyboard.press("Enter")

            fresh_run(change_query_row)
            page.get_by_role("heading", name=re.compile(r"\(position 2\)")).wait_for()
            shows_the_ticket("first run on the new server")
            print(f"reconnected and ran {time.monotonic() - t:.1f} s after the new server was up")
            shot(page, "fault_2_recovered")
            fresh_run(page.reload, new_document=True)
            shows_the_ticket("reloaded")

            # 2. Killed in the middle of a script run (the Interpretation page computing): on reconnect the frontend
            #    runs the interrupted page again, on the new server, with the ticket of the URL.
            # The page switch clears the query string and the run writes the ticket back first thing; waiting for
            # that too makes the kill land in the computing, not in the moment before the write reached the browser.
            page.locator('[data-testid="stSidebarNav"] a', has_text="Interpretation").click()
            page.wait_for_function("t => window.__stRuns > 0 && document.querySelector('[data-testid=\"stApp\"]')"
                                   "?.getAttribute('data-test-script-state') === 'running'"
                                   " && new URLSearchParams(location.search).get('ticket') === t",
                                   arg=ticket["ticket_id"])
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        lost_and_kept("fault_3_killed_mid_run")

        with streamlit_server(env, tmp_path / "third.log", port=port) as (url, proc):
            reconnected()
            # The run was cut off, so the page still says "running" until the rerun on the new server finishes.
            page.wait_for_function("() => document.querySelector('[data-testid=\"stApp\"]')"
                                   "?.getAttribute('data-test-script-state') === 'notRunning'", timeout=60_000)
            settle(page)
            # The rerun writes the ticket back into the URL; give it that moment rather than reading the URL at once.
            try:
                page.wait_for_function("t => new URLSearchParams(location.search).get('ticket') === t",
                                       arg=ticket["ticket_id"], timeout=15_000)
            except Exception:                                  # noqa: BLE001 - reported with what the page shows
                state = page.evaluate("() => document.querySelector('[data-testid=\"stApp\"]')"
                                      "?.getAttribute('data-test-script-state')")
                shot(page, "fault_4_ticket_not_back")
                raise AssertionError(f"the ticket is not back in the URL after the rerun: {page.url} ({state})")
            assert charts_drawn(page, 5) >= 5
            assert ticket_in_url(page) == ticket["ticket_id"] and "/interpretation" in page.url
            page.get_by_role("heading", name=re.compile("What each token does")).wait_for()
            no_exception(page)
            page.locator('[data-testid="stSidebar"]').get_by_text(ticket["ticket_id"]).first.wait_for()
            shot(page, "fault_4_recovered_mid_run")
            assert not crashed
        browser.close()

    assert _snapshot(*folders) == before, "a weights or data file changed"
    assert not _leftovers(*folders)
