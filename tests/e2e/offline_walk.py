"""Walk every dashboard page in chromium against a real server and check nothing is fetched from outside it.

    python -m tests.e2e.offline_walk [LOG_FOLDER]

Meant to run with the network cut, inside a network namespace that has only loopback (tests/e2e/test_offline.py):

    unshare --net sh -c 'ip link set lo up && exec .venv/bin/python -m tests.e2e.offline_walk'

Starts `streamlit run dashboard/app.py` (tests.browser.streamlit_server; $TICKETNET_WEIGHTS and $TICKETNET_DATA are
passed on), opens each page by its URL, and checks that it renders: its title, no exception or error panel, its
charts drawn, every web font loaded. Every request the browser makes is recorded; any that is not for the server
(localhost/127.0.0.1) or a data:/blob: URL fails the walk. Prints one line per page; exit status 0 when all pass,
1 (with the reason) otherwise.
"""

from __future__ import annotations

import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, charts_drawn, settle, streamlit_server  # noqa: E402

# (URL path, page title, charts that must be drawn). Cost draws charts only after a measurement is asked for.
PAGES = [
    ("", "Tickets", 2),
    ("heads", "Heads", 5),
    ("interpretation", "Interpretation", 5),
    ("formula", "The formula", 1),                # one section at a time; the first has one chart
    ("verification", "Verification", 0),
    ("cost", "Cost", 0),
    ("corpus", "Corpus", 0),                      # no scan in a fresh cache: the page offers to make one
]
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}

FONT_ERRORS = """async () => {
  await document.fonts.ready;
  return Array.from(document.fonts).filter(f => f.status === 'error').map(f => f.family);
}"""


def outside(url: str) -> bool:
    if url.startswith(("data:", "blob:", "about:")):
        return False
    return urllib.parse.urlsplit(url).hostname not in LOCAL_HOSTS


def walk(url: str) -> list[str]:
    """Visit every page; return the problems found (empty when all is well)."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    requests: list[str] = []
    failed: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1800})
        context.on("request", lambda r: requests.append(r.url))
        context.on("requestfailed", lambda r: failed.append(f"{r.url} ({r.failure})"))
        pg = context.new_page()
        pg.set_default_timeout(WAIT_MS)
        for path, title, n_charts in PAGES:
            started = time.monotonic()
            pg.goto(f"{url}/{path}")
            settle(pg)
            pg.get_by_role("heading", name=title, exact=True).first.wait_for()
            errors = pg.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').all_inner_texts()
            if errors:
                problems.append(f"{title}: error on the page: {errors[0][:300]!r}")
            drawn = charts_drawn(pg, n_charts) if n_charts else 0
            if drawn < n_charts:
                problems.append(f"{title}: {drawn} charts drawn, expected at least {n_charts}")
            bad_fonts = pg.evaluate(FONT_ERRORS)
            if bad_fonts:
                problems.append(f"{title}: fonts failed to load: {sorted(set(bad_fonts))}")
            print(f"{title:<15} {drawn} charts drawn, {time.monotonic() - started:4.1f} s", flush=True)
        context.close()
        browser.close()
    away = sorted({u for u in requests if outside(u)})
    if away:
        problems.append(f"{len(away)} request(s) for other hosts: {away[:5]}")
    local_failed = [f for f in failed if not outside(f.split(" ")[0])]
    if local_failed:
        problems.append(f"requests to the server failed: {local_failed[:5]}")
    print(f"{len(requests)} requests, {len(away)} for other hosts", flush=True)
    return problems


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp(prefix="offline_walk_"))
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "server.log"
    try:
        with streamlit_server({}, log) as (url, _):
            problems = walk(url)
    except Exception as exc:                      # a page that never rendered, a server that never started
        problems = [f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"]
    for problem in problems:
        print(f"FAIL {problem}", file=sys.stderr)
    if problems:
        print(f"(server log: {log})", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
