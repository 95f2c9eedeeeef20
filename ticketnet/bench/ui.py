"""Dashboard timings for `python -m ticketnet bench`: cold start in a real browser, warm reruns on the server."""

# Kept apart from the library proper: these drive the Streamlit app (AppTest in process, or `streamlit run`
# plus Debian's Chromium through Playwright) and are skipped with a reason when those are not installed.

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

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


# What `make run` starts (the heavy libraries importing in a thread from the first moment) and the plain server.
LAUNCHERS = {
    "python -m dashboard": ["-m", "dashboard"],
    "streamlit run": ["-m", "streamlit", "run", str(APP)],
}
# Page path, the heading that marks it, and how many charts it draws once complete. The Tickets page is what
# `make run` opens; the Heads page of T-65052 is the heaviest first view (8 heatmaps and the model view).
PAGES = {
    "tickets": ("", "Confusion matrix", 2),
    "heads": (f"heads?ticket={TICKET}", "Block 1: the 4 heads", 4),
}
# (page, start): "first" starts with an empty $TICKETNET_CACHE, as on a fresh machine (the shipped weights bring their
# predictions on valid, `ticketnet.predictions`); "restart" with the cache the previous start filled, as after stopping
# and starting the server again; "first, no predictions" with an empty cache and a copy of the weights without their
# predictions, as for a router trained elsewhere: the page routes the valid split before it can draw.
SCENARIOS = (("tickets", "first"), ("tickets", "restart"), ("heads", "restart"), ("tickets", "first, no predictions"))


def cold_starts(repeats: int = 3, timeout: float = 60, launchers: tuple[str, ...] = tuple(LAUNCHERS)) -> dict:
    """Every scenario of `SCENARIOS` for every launcher, `repeats` times, the launchers alternated so that drift
    hits both: medians per launcher and scenario ("<launcher>: <page>, <cache>"), and the launchers' ratios."""
    import shutil
    import tempfile

    from ticketnet.paths import weights_path
    from ticketnet.predictions import weights_files

    runs: dict[str, list[dict]] = {}
    for _ in range(repeats):
        for launcher in launchers:
            with tempfile.TemporaryDirectory(prefix="ticketnet-cold-") as cache, \
                    tempfile.TemporaryDirectory(prefix="ticketnet-cold-weights-") as bare:
                for p in weights_files(weights_path()):
                    shutil.copy(p, Path(bare) / p.name)
                for page, cached in SCENARIOS:
                    if cached.endswith("no predictions"):
                        c = cold_start(launcher, page, str(Path(cache) / "bare"), timeout,
                                       weights=Path(bare) / weights_path().name)
                    else:
                        c = cold_start(launcher, page, cache, timeout)
                    if "skipped" in c:
                        return c
                    runs.setdefault(f"{launcher}: {page}, {cached}", []).append(c)
    out: dict = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    if len(launchers) == 2:
        a, b = launchers
        out["ratio"] = {f"{page}, {cached}": out[f"{a}: {page}, {cached}"]["page_drawn_s"]
                        / out[f"{b}: {page}, {cached}"]["page_drawn_s"] for page, cached in SCENARIOS}
    out["repeats"] = repeats
    return out


def cold_start(launcher: str = "python -m dashboard", page: str = "tickets", cache: str | None = None,
               timeout: float = 60, weights: Path | None = None) -> dict:
    """Seconds from starting the server with `launcher` to `page` fully drawn in Chromium (browser started first):
    its heading shown, every chart holding a canvas or svg, and no script run going. `cache`: $TICKETNET_CACHE;
    `weights`: $TICKETNET_WEIGHTS."""
    if not CHROMIUM.is_file():
        return {"skipped": f"{CHROMIUM} not found (apt-get install -y chromium)"}
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed (pip install -r requirements-dev.txt)"}
    path, heading, charts = PAGES[page]
    env = {**os.environ, **({"TICKETNET_CACHE": cache} if cache else {}),
           **({"TICKETNET_WEIGHTS": str(weights)} if weights else {})}
    port = free_port()
    url = f"http://localhost:{port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1500, "height": 1400})
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *LAUNCHERS[launcher], "--server.port", str(port),
                                 "--server.headless", "true"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            wait_healthy(url, proc, timeout)
            healthy = time.perf_counter() - t0
            tab.goto(f"{url}/{path}")
            tab.get_by_role("heading", name=heading).wait_for(timeout=timeout * 1000)
            tab.wait_for_function(
                "n => { const c = [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')];"
                " return c.length >= n && c.every(e => e.querySelector('canvas, svg')) &&"
                " !document.querySelector('[data-testid=\"stStatusWidgetRunningIcon\"]'); }",
                arg=charts, timeout=timeout * 1000)
            drawn = time.perf_counter() - t0
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            browser.close()
    return {"server_healthy_s": healthy, "page_drawn_s": drawn}
