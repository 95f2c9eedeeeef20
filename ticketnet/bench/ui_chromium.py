"""Dashboard timings in Chromium through Playwright: cold starts per launcher and scenario, a long ticket's heads."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ticketnet.bench.browser import APP, CHROMIUM, CHROMIUM_ARGS, free_port, wait_healthy
from ticketnet.bench.ui_reruns import TICKET
from ticketnet.paths import ROOT

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


HEADS_DRAWN_TARGET_S = 3.0         # a 300-word typed ticket's heads, from opening the page to drawn, in Chromium
LONG_TICKET_WORDS = ("my card was charged twice for one order and the refund has not arrived yet so please check the "
                     "payment and tell me when the money will be back on my account because I need it for rent this "
                     "week").split()


def heads_drawn(repeats: int = 3, words: int = 300, timeout: float = 120) -> dict:
    """Seconds from opening Heads on a `words`-word typed ticket never seen (256 tokens read) to its four heads
    drawn in Chromium at 1366 px, each repeat in a new tab on a new ticket; a server of this checkout, started once.
    What the browser is sent and draws, not only the script's time (`typed_first_open`)."""
    if not CHROMIUM.is_file():
        return {"skipped": f"{CHROMIUM} not found (apt-get install -y chromium)"}
    from playwright.sync_api import sync_playwright

    from dashboard.data.store import pack_text

    port = free_port()
    url = f"http://localhost:{port}"
    proc = subprocess.Popen([sys.executable, *LAUNCHERS["python -m dashboard"], "--server.port", str(port),
                             "--server.headless", "true"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    times = []
    try:
        wait_healthy(url, proc, 60)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for r in range(repeats + 1):                        # the first warms the model and is left out
                text = " ".join(f"{w}{r}" if i % 7 == 0 else w
                                for i, w in enumerate((LONG_TICKET_WORDS * 20)[:words]))
                tab = browser.new_page(viewport={"width": 1366, "height": 900})
                t0 = time.perf_counter()
                tab.goto(f"{url}/heads?ticket=custom&ztext={pack_text(text)}")
                tab.wait_for_function(
                    "() => [...document.querySelectorAll('[data-testid=\"stImage\"] img')]"
                    ".filter(i => i.complete && i.naturalWidth > 0).length >= 4", timeout=timeout * 1000)
                if r:
                    times.append(time.perf_counter() - t0)
                tab.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    median = statistics.median(times)
    return {"words": words, "repeats": repeats, "seconds": times, "median_s": median,
            "target_s": HEADS_DRAWN_TARGET_S, "ratio_to_target": median / HEADS_DRAWN_TARGET_S}
