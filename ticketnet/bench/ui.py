"""Dashboard timings for `python -m ticketnet bench`: cold start in a real browser, warm reruns on the server."""

# Kept apart from the library proper: these drive the Streamlit app (AppTest in process, or `streamlit run`
# plus Debian's Chromium through Playwright) and are skipped with a reason when those are not installed.

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from ticketnet.bench.browser import APP, CHROMIUM, CHROMIUM_ARGS, free_port, wait_healthy
from ticketnet.paths import ROOT

TICKET = "T-65052"


def warm_interaction(repeats: int = 10) -> dict:
    """Server-side script time of a rerun on the Heads page after changing the query row, then the block; then on
    the Interpretation page after changing the target team (`_warm_target`).

    AppTest runs the real page script in process, as the server does on each interaction; the ticket's
    forward pass is cached by then, so this is the rerun cost a user waits for (network excluded).
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params["ticket"] = TICKET
    at.run()
    at.switch_page("../pages/heads.py").run()
    if at.exception:
        raise RuntimeError(f"the Heads page failed: {at.exception[0].value}")
    query = next(s for s in at.selectbox if s.label.startswith("Query row"))
    n = len(query.options)
    t0 = time.perf_counter()                      # the first visit to block 2 draws its heads (cached after)
    at.segmented_control(key="block").set_value(2).run()
    block_first = time.perf_counter() - t0
    at.segmented_control(key="block").set_value(1).run()
    rows, blocks = [], []
    for i in range(repeats):
        t0 = time.perf_counter()
        next(s for s in at.selectbox if s.label.startswith("Query row")).set_value((i * 7 + 3) % n).run()
        rows.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        at.segmented_control(key="block").set_value(1 + i % 2).run()
        blocks.append(time.perf_counter() - t0)
    if at.exception:
        raise RuntimeError(f"the Heads page failed: {at.exception[0].value}")
    result = {"query_row_ms_median": 1e3 * statistics.median(rows), "query_row_ms_max": 1e3 * max(rows),
              "block_ms_median": 1e3 * statistics.median(blocks), "block_ms_max": 1e3 * max(blocks),
              "block_first_ms": 1e3 * block_first,
              "repeats": repeats, "tokens": n}
    result.update(_warm_target(at, repeats))
    return result


def _warm_target(at, repeats: int) -> dict:
    """Interpretation page: the rerun after changing the target team. The first choice of each team computes its
    interpretation (removal effects, gradients, ERASER: model calls, reported apart); later visits are cached."""
    at.switch_page("../pages/interpretation.py").run()
    if at.exception:
        raise RuntimeError(f"the Interpretation page failed: {at.exception[0].value}")

    def target():
        return next(s for s in at.selectbox if s.label.startswith("Target team"))

    n = len(target().options)
    predicted = target().value
    first = []
    for t in range(n):                            # every team once: the predicted one was computed on page load
        if t == predicted:
            continue
        t0 = time.perf_counter()
        target().set_value(t).run()
        first.append(time.perf_counter() - t0)
    again = []
    for i in range(repeats):
        t = (predicted + 1 + i) % n
        t0 = time.perf_counter()
        target().set_value(t).run()
        again.append(time.perf_counter() - t0)
    if at.exception:
        raise RuntimeError(f"the Interpretation page failed: {at.exception[0].value}")
    return {"target_ms_median": 1e3 * statistics.median(again), "target_ms_max": 1e3 * max(again),
            "target_first_ms_median": 1e3 * statistics.median(first), "target_first_ms_max": 1e3 * max(first),
            "teams": n}


def cold_starts(repeats: int = 3, timeout: float = 60) -> dict:
    """`cold_start` `repeats` times: the medians (one start is at the mercy of whatever else the machine does)."""
    runs = []
    for _ in range(repeats):
        c = cold_start(timeout)
        if "skipped" in c:
            return c
        runs.append(c)
    return {**{k: statistics.median(r[k] for r in runs) for k in runs[0]}, "repeats": repeats}


def cold_start(timeout: float = 60) -> dict:
    """Seconds from `streamlit run` to the Heads page of T-65052 fully drawn in Chromium (browser started first)."""
    if not CHROMIUM.is_file():
        return {"skipped": f"{CHROMIUM} not found (apt-get install -y chromium)"}
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed (pip install -r requirements-dev.txt)"}
    port = free_port()
    url = f"http://localhost:{port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1400})
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
                                 "--server.headless", "true"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            wait_healthy(url, proc, timeout)
            healthy = time.perf_counter() - t0
            page.goto(f"{url}/heads?ticket={TICKET}")
            # Fully drawn: the heads heading is there, every chart holds a canvas or svg, and no rerun is running.
            page.get_by_role("heading", name="Block 1: the 4 heads").wait_for(timeout=timeout * 1000)
            page.wait_for_function(
                "() => { const c = [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')];"
                " return c.length >= 4 && c.every(e => e.querySelector('canvas, svg')) &&"
                " !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]'); }",
                timeout=timeout * 1000)
            rendered = time.perf_counter() - t0
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            browser.close()
    return {"server_healthy_s": healthy, "heads_page_rendered_s": rendered}
