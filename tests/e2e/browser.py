"""Shared parts of the real-browser tests: Debian's chromium via Playwright, and a real `streamlit run` server."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from ticketnet.bench import browser as tooling
from ticketnet.bench.browser import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: F401 - one definition for bench and tests

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
WAIT_MS = 90_000


def require_chromium() -> None:
    """Skip the calling test module when chromium is missing, except under CI, where that is a failure."""
    if not CHROMIUM.is_file():
        reason = f"{CHROMIUM} not found; install Debian's browser with `apt-get install -y chromium`"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason, allow_module_level=True)


def server_command(port: int, bare: bool = False) -> list[str]:
    """What `make run` starts (`python -m dashboard`: `streamlit run` with the heavy imports in a thread) on `port`;
    `bare` passes nothing else, so every setting comes from .streamlit/config.toml."""
    command = [sys.executable, "-m", "dashboard", "--server.port", str(port)]
    if bare:
        return command
    return [*command, "--server.headless", "true", "--server.address", "localhost",
            "--browser.gatherUsageStats", "false"]


def wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    tooling.wait_healthy(url, proc, timeout, detail=lambda: ":\n" + log.read_text(errors="replace")[-3000:])


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


@contextlib.contextmanager
def streamlit_server(env: dict[str, str], log: Path, port: int | None = None,
                     prefix: list[str] | None = None, bare: bool = False) -> Iterator[tuple[str, subprocess.Popen]]:
    """A real Streamlit server on `port` (default: a free one), run from the repository root so
    .streamlit/config.toml applies (`bare`: nothing but the port on the command line, as `make run`);
    yields (url, process) and stops it afterwards."""
    port = port or free_port()
    with open(log, "ab") as out:
        proc = subprocess.Popen([*(prefix or []), *server_command(port, bare)], cwd=ROOT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://localhost:{port}"
        wait_healthy(url, proc, log)
        yield url, proc
    finally:
        stop(proc)


# How far the main column is wider than the window (> 0: the page scrolls sideways).
PAGE_OVERFLOW_JS = "document.querySelector('[data-testid=\"stMain\"]').scrollWidth - window.innerWidth"


@contextlib.contextmanager
def routers_server(artifacts, routers: Path, tmp_path_factory) -> Iterator[str]:
    """A real server on the shipped router and data with the routers under `routers` in its sidebar, its cache and
    scans in fresh folders; yields its url."""
    env = {"TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data),
           "TICKETNET_ROUTERS": str(routers), "TICKETNET_CACHE": str(tmp_path_factory.mktemp("cache")),
           "TICKETNET_SCANS": str(tmp_path_factory.mktemp("scans"))}
    with streamlit_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as (url, _):
        yield url


# Counts the script runs the page has started: the app's root element carries the run state
# (`data-test-script-state`), watched from the first call on each document. Returns whether a run started since the
# last settle (on a fresh document: whether its first run has begun), and acknowledges it.
RUN_WATCH_JS = """() => {
  const app = document.querySelector('[data-testid=stApp]');
  const state = () => app.getAttribute('data-test-script-state');
  if (!window.__runs) {
    window.__runs = {started: state() === 'initial' ? 0 : 1, seen: 0};
    new MutationObserver(() => { if (state() === 'running') window.__runs.started += 1; })
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  }
  return window.__runs;
}"""
RUN_ACK_JS = "() => { window.__runs.seen = window.__runs.started; }"
# Done: no run going, no spinner or skeleton, and every chart on the page that is laid out holds its canvas or svg
# (one in a closed expander or a hidden tab has no box and may not draw until it is shown).
SETTLED_JS = """() => {
  const app = document.querySelector('[data-testid=stApp]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  for (const id of ['stStatusWidgetRunningIcon', 'stSpinner', 'stSkeleton', 'stAppSkeleton'])
    if (document.querySelector(`[data-testid=${id}]`)) return false;
  return [...document.querySelectorAll('[data-testid=stVegaLiteChart]')]
    .every(c => !c.getClientRects().length || c.querySelector('canvas, svg'));
}"""
SCRIPT_STATE_JS = "document.querySelector('[data-testid=stApp]').getAttribute('data-test-script-state')"
RUN_START_S = 0.5            # how long an action that does not rerun the script is given to start one


def settle(pg) -> None:
    """Wait until the script run the last action started is over and the page is drawn: no run going, no spinner
    or skeleton, every chart holding its canvas or svg. Runs are seen as they start (RUN_WATCH_JS), so a quick run is
    not waited out with a fixed pause; an action that starts none is given RUN_START_S to start one."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    pg.wait_for_selector('[data-testid="stApp"]')
    runs = pg.evaluate(RUN_WATCH_JS)
    if runs["started"] <= runs["seen"]:
        try:
            pg.wait_for_function("() => window.__runs.started > window.__runs.seen", timeout=RUN_START_S * 1000)
        except PlaywrightTimeout:                       # this action reran nothing
            pass
    pg.wait_for_function(SETTLED_JS, polling=100)
    pg.evaluate(RUN_ACK_JS)
    # two animation frames: what the finished run drew is laid out before the caller measures it
    pg.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


@contextlib.contextmanager
def browser_page(browser, **context_options) -> Iterator:
    """A page in a fresh context (its own cookies, session and viewport: `context_options`) of a launched
    `browser`, its default timeout WAIT_MS; the context is closed afterwards."""
    context = browser.new_context(**context_options)
    try:
        pg = context.new_page()
        pg.set_default_timeout(WAIT_MS)
        yield pg
    finally:
        context.close()


def click_first_row(pg) -> None:
    """Select the first row of the page's last table (glide-data-grid: a 35 px header, then 35 px rows; the
    row-selection column is the leftmost ~30 px)."""
    grid = pg.locator('[data-testid="stDataFrame"]').last
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    pg.mouse.click(box["x"] + 15, box["y"] + 35 + 17)


# What a "Route this ticket" click led to: the typed ticket picked (it is in the URL), a warning under the form, or
# nothing yet (null).
ROUTED_JS = """() => {
  if (window.location.search.includes('ticket=custom')) return 'routed';
  const warned = [...document.querySelectorAll('[data-testid=stAlertContentWarning]')]
    .find(a => /ticket is empty|cannot be routed/.test(a.innerText));
  return warned ? 'warned: ' + warned.innerText.trim().split('\\n').pop() : null;
}"""
ROUTE_WAIT_MS = 45_000


def type_ticket(pg, text: str) -> None:
    """Write `text` in the Tickets page's "Write your own ticket" box and route it, then wait for its run.

    In one CI run of the whole suite (2 loaded cores) a click routed nothing for 90 s, and it has not been seen
    again in runs under added load; so a click that leads to neither the routed ticket nor a warning within
    ROUTE_WAIT_MS is reported (a pytest warning naming what the page showed) and the ticket is submitted once more.
    A warning, or a second click that routes nothing, fails."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    pg.get_by_text("Write your own ticket").click()
    box = pg.get_by_role("textbox", name="Ticket text")
    for attempt in (1, 2):
        box.fill(text)
        pg.get_by_role("button", name="Route this ticket").click()
        try:
            outcome = pg.wait_for_function(ROUTED_JS, timeout=ROUTE_WAIT_MS, polling=200).json_value()
        except PlaywrightTimeout:
            seen = (f"the box held {len(box.input_value())} of {len(text)} characters, the script was "
                    f"{pg.evaluate(SCRIPT_STATE_JS)!r}, url {pg.url}")
            if attempt == 2:
                raise AssertionError(f"two 'Route this ticket' clicks routed nothing: {seen}") from None
            warnings.warn(f"a 'Route this ticket' click routed nothing in {ROUTE_WAIT_MS / 1000:.0f} s ({seen}); "
                          "submitted again", stacklevel=2)
            settle(pg)
            continue
        assert outcome == "routed", f"the typed ticket was not routed: {outcome}"
        break
    settle(pg)


def no_exception(pg) -> None:
    assert pg.locator('[data-testid="stException"]').count() == 0
    assert pg.locator('[data-testid="stAlertContentError"]').count() == 0


def charts_drawn(pg, at_least: int) -> int:
    charts = pg.locator('[data-testid="stVegaLiteChart"]')
    pg.wait_for_function(
        "n => Array.from(document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]'))"
        ".filter(c => c.querySelector('canvas, svg')).length >= n", arg=at_least)
    drawn = 0
    for i in range(charts.count()):
        box = charts.nth(i).locator("canvas, svg").first.bounding_box()
        if box and box["width"] > 20 and box["height"] > 20:
            drawn += 1
    return drawn


# What each chart on the page drew, read from its Vega view (found through the React component that holds it; the
# canvas renderer leaves no marks in the DOM): per chart, the size of every plot area that holds data marks, and how
# many mark items have a size. A chart whose plot is 0 px wide still draws its axes and even its outlier points, so
# both are counted: the τ box plot of issue 23 had a 0 × 264 px plot and 12 boxes of no width.
CHART_MARKS_JS = """() => [...document.querySelectorAll('[data-testid=stVegaLiteChart]')].map((c, index) => {
  const isView = v => v && typeof v === 'object' && typeof v.scenegraph === 'function' && typeof v.data === 'function';
  let view = null;
  for (const n of [c, ...c.querySelectorAll('*')]) {
    const key = Object.keys(n).find(k => k.startsWith('__reactFiber'));
    if (!key) continue;
    for (let f = n[key], up = 0; f && up < 30 && !view; up++, f = f.return)
      for (let s = f.memoizedState, i = 0; s && i < 80 && !view; i++, s = s.next) {
        const m = s.memoizedState;
        for (const v of [m, m && m.current]) if (isView(v)) { view = v; break; }
      }
    if (view) break;
  }
  if (!view) return {index, view: false};
  const plots = [], titles = [];
  let items = 0, sized = 0;
  const walk = (mark) => {
    for (const item of mark.items || []) {
      if (mark.role === 'axis-title' && item.text) titles.push([].concat(item.text).join(' '));
      if (mark.marktype === 'group') {
        const data = (item.items || []).filter(m => m.role === 'mark' && m.marktype !== 'group');
        if (data.length) plots.push([Math.round(item.width || 0), Math.round(item.height || 0)]);
        for (const child of item.items || []) walk(child);
      } else if (mark.role === 'mark') {
        items += 1;
        const b = item.bounds;
        if (b && b.width() > 0.5 && b.height() > 0.5) sized += 1;
      }
    }
  };
  walk(view.scenegraph().root);
  return {index, view: true, plots, items, sized, titles};
})"""


def chart_marks(pg) -> list[dict]:
    """Per chart on the page: {index, view, plots: [[width, height], ...], items, sized, titles} (see CHART_MARKS_JS;
    titles: the axis titles it drew)."""
    return pg.evaluate(CHART_MARKS_JS)


def assert_every_chart_drawn(pg, where: str, at_least: int = 1, min_px: int = 10) -> list[dict]:
    """Every chart on the page has its Vega view, every plot area holding data marks is at least `min_px` on each
    side, and it drew at least one mark item with a size: an empty chart (axes and labels only) fails."""
    pg.wait_for_function("n => document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]').length >= n",
                         arg=at_least)
    deadline = time.monotonic() + 15                # a view is built a moment after its element appears
    while True:
        found = chart_marks(pg)
        empty = [c for c in found if not c["view"] or not c["plots"] or c["sized"] == 0
                 or any(w < min_px or h < min_px for w, h in c["plots"])]
        if not empty or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(found) >= at_least, f"{where}: {len(found)} charts, expected {at_least} or more"
    assert not empty, f"{where}: charts drawn empty or without a plot area: {empty}"
    return found


def shot(pg, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def ticket_in_url(pg) -> str | None:
    m = re.search(r"[?&]ticket=([^&]+)", pg.url)
    return m.group(1) if m else None


def shot_path(name: str) -> Path:
    """Where a screenshot named `name` goes (artifacts/screenshots/, ignored by git), the folder made."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS / f"{name}.png"
