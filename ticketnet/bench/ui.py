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


POLICY_PAGE = "../pages/policy.py"
POLICY_TARGET_MS = 300.0


def policy_sliders(repeats: int = 10) -> dict:
    """Server-side script time of the Routing policy page's rerun after a slider move (the page's target: ≤ 300 ms): the
    target precision moved to a value this process has not computed (thresholds fitted on valid, bootstrap reports
    on test and the hand-written set, the queue), α likewise (sets calibrated and measured), and the method toggled.

    The page is opened once first (imports, the stored tables, MAPIE); each precision value's axis range has its
    chart template built the first time it is seen, so the precision moves stay inside one range after a warm-up
    move at each end, as a user dragging the slider mostly does. Medians and maxima in milliseconds."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=300)
    at.run()
    t0 = time.perf_counter()
    at.switch_page(POLICY_PAGE).run()
    first_open = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the Routing policy page failed: {at.exception[0].value}")

    def move(key: str, value) -> float:
        start = time.perf_counter()
        widget = at.segmented_control(key=key) if key == "policy_method" else at.slider(key=key)
        widget.set_value(value).run()
        if at.exception:
            raise RuntimeError(f"the Routing policy page failed: {at.exception[0].value}")
        return time.perf_counter() - start

    warm = [move("policy_precision", v) for v in (0.97, 0.99)]    # the template of each end's axis range
    targets = [round(0.971 + 0.001 * (i % 18), 3) for i in range(repeats)]
    precision = [move("policy_precision", v) for v in targets]
    # Moves whose thresholds differ from every earlier move's: the ones that ran the bootstrap again (the reports are
    # cached by the thresholds, and neighbouring targets often give every team the same one).
    from ticketnet import paths, predictions
    from ticketnet.policy import fit_team_thresholds

    weights = paths.weights_path()
    valid = predictions.read_predictions(weights, "valid", paths.router_data(weights.parent) / "valid.csv")
    teams = sorted(set(valid["team"]) | set(valid["predicted"]))
    seen = {tuple(sorted(fit_team_thresholds(valid["confidence"].to_numpy(), valid["predicted"].to_numpy(),
                                             valid["correct"].to_numpy(), teams, precision=v).thresholds.items()))
            for v in targets} if valid is not None else set()
    alphas = [move("policy_alpha", round(0.06 + 0.01 * (i % 20), 2)) for i in range(repeats)]
    methods = [move("policy_method", ("aps", "lac")[i % 2]) for i in range(repeats)]
    out = {"first_open_ms": 1e3 * first_open, "template_ms_max": 1e3 * max(warm), "repeats": repeats,
           "target_ms": POLICY_TARGET_MS, "precision_distinct_thresholds": len(seen)}
    for name, times in (("precision", precision), ("alpha", alphas), ("method", methods)):
        out[f"{name}_ms_median"] = 1e3 * statistics.median(times)
        out[f"{name}_ms_max"] = 1e3 * max(times)
    return out


# The slow paths of a first open, timed as the server runs them: a typed ticket a page has never seen (nothing cached
# for its text), and the lesson section with nothing kept in the process.
FIRST_OPEN_PAGES = ("heads", "interpretation")
FIRST_OPEN_TARGET_S = {"heads": 2.0}          # Heads at 256 tokens, the page's target; Interpretation is measured only
LESSON_TARGET_S = 1.0
LESSON_SECTION = "Why √d_k"


def typed_first_open(sizes: tuple[int, ...] = (30, 256), repeats: int = 3,
                     pages: tuple[str, ...] = FIRST_OPEN_PAGES) -> dict:
    """Server-side script time of opening each page on a typed ticket it has never seen, at each size, in
    interleaved rounds (medians): the ticket's inspection, interpretation and every chart computed in that run.

    The process is warm (the pages opened once on the default ticket: imports, the router, the split's tables),
    as on a server that has run a while; the browser's drawing is not included. Per page: seconds at each n, the
    ratio of the largest n to the smallest and, where the page has a target, the ratio to it."""
    from streamlit.testing.v1 import AppTest

    from dashboard.data.store import pack_text
    from ticketnet.bench.tickets import typed_tickets

    at = AppTest.from_file(str(APP), default_timeout=300)
    at.query_params["ticket"] = TICKET
    at.run()
    for page in pages:
        at.switch_page(f"../pages/{page}.py").run()
        if at.exception:
            raise RuntimeError(f"the {page} page failed: {at.exception[0].value}")
    texts = {n: iter(typed_tickets(n, repeats * len(pages))) for n in sizes}
    times: dict[str, dict[int, list[float]]] = {page: {n: [] for n in sizes} for page in pages}
    for _ in range(repeats):
        for page in pages:
            for n in sizes:
                at.query_params.clear()
                at.query_params.update({"ticket": "custom", "ztext": pack_text(next(texts[n]))})
                t0 = time.perf_counter()
                at.switch_page(f"../pages/{page}.py").run()
                times[page][n].append(time.perf_counter() - t0)
                if at.exception:
                    raise RuntimeError(f"the {page} page failed on a typed ticket: {at.exception[0].value}")
    out: dict = {"repeats": repeats, "sizes": list(sizes)}
    lo, hi = min(sizes), max(sizes)
    for page in pages:
        r = {f"n{n}_s": statistics.median(times[page][n]) for n in sizes}
        r[f"n{hi}_max_s"] = max(times[page][hi])
        if hi != lo:
            r[f"ratio_n{hi}_to_n{lo}"] = r[f"n{hi}_s"] / r[f"n{lo}_s"]
        if page in FIRST_OPEN_TARGET_S:
            r["target_s"] = FIRST_OPEN_TARGET_S[page]
            r["ratio_to_target"] = r[f"n{hi}_s"] / FIRST_OPEN_TARGET_S[page]
        out[page] = r
    return out


def lesson_first_open(repeats: int = 3) -> dict:
    """Server-side script time of opening the Formula page's "Why √d_k" section with nothing kept in the process
    (Streamlit's caches and the lesson's own emptied), in interleaved rounds (medians):

    * "drawn": no stored table either (an empty cache folder), so the run draws the seeded table, as a visitor
      of a fresh machine does who opens the section before the server's warm-up has drawn it;
    * "stored": the table on disk, as after the warm-up and on every later start on the machine.
    """
    import tempfile

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ticketnet.lesson import explorers
    from ticketnet.paths import CACHE_ENV

    def open_section(cache: str) -> float:
        os.environ[CACHE_ENV] = cache
        explorers._kept_table.cache_clear()
        st.cache_data.clear()
        at = AppTest.from_file(str(APP), default_timeout=300)
        at.run()
        at.switch_page("../pages/formula.py").run()
        t0 = time.perf_counter()
        at.segmented_control(key="formula_section").set_value(LESSON_SECTION).run()
        took = time.perf_counter() - t0
        if at.exception or not at.select_slider(key="formula_dk"):
            raise RuntimeError(f"the {LESSON_SECTION} section failed: {[e.value for e in at.exception]}")
        return took

    before = os.environ.get(CACHE_ENV)
    times: dict[str, list[float]] = {"drawn": [], "stored": []}
    try:
        with tempfile.TemporaryDirectory(prefix="ticketnet-lesson-") as folder:
            for i in range(repeats):
                empty = Path(folder) / f"empty-{i}"
                times["drawn"].append(open_section(str(empty)))     # draws, and leaves the table on disk there
                times["stored"].append(open_section(str(empty)))
    finally:
        if before is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = before
        explorers._kept_table.cache_clear()          # nothing read from the temporary folders outlives it
        st.cache_data.clear()
    out: dict = {f"{k}_s": statistics.median(v) for k, v in times.items()}
    out.update({"drawn_max_s": max(times["drawn"]), "ratio_drawn_to_stored": out["drawn_s"] / out["stored_s"],
                "target_s": LESSON_TARGET_S, "stored_ratio_to_target": out["stored_s"] / LESSON_TARGET_S,
                "repeats": repeats})
    return out


# The Compare page: opening it on the 1,500-ticket test split of two routers whose predictions are stored,
# and the per-head divergence of the valid split (its button's run), server side.
COMPARE_TARGET_S = {"open": 2.0, "divergence": 10.0}
COMPARE_PAGE = "../pages/compare.py"


def retrain_router(out: Path, epochs: int = 4, tickets: int = 5_000) -> Path:
    """A second router on Larkfield's splits, of the shipped shape: `epochs` epochs on the first `tickets` training
    tickets (as the tests' `larkfield_retrain`), its predictions stored by training. Returns its folder."""
    import shutil

    from ticketnet.paths import data_dir
    from ticketnet.train import train
    from ticketnet.training import TrainConfig

    data = out / "data-subset"
    data.mkdir(parents=True, exist_ok=True)
    src = data_dir()
    lines = (src / "train.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "train.csv").write_text("".join(lines[: tickets + 1]), encoding="utf-8")
    for name in ("valid.csv", "test.csv", "handwritten.csv", "handwritten_dev.csv", "teams.txt"):
        if (src / name).is_file():
            shutil.copy(src / name, data / name)
    folder = out / "routers" / "retrain"
    train(data, folder, TrainConfig(epochs=epochs, seed=3, recipe="large"), log=lambda _m: None)
    # The splits it is read with are the default router's (the same CSVs): no data/ of its own.
    return folder


def compare_open(router_b: Path, repeats: int = 3) -> dict:
    """Server-side script time of the Compare page on the default router (A) and `router_b`, both with their
    predictions stored (medians of `repeats`):

    * "open_s": opening the page on the test split with every Streamlit cache emptied (the routers' tables, cards and
      the comparison computed again from the stored predictions), imports warm, as the first visitor of a running
      server finds it; "rerun_s": the same page run again (everything cached);
    * "flip_s": then a flip opened side by side (both routers loaded, the ticket inspected and its deletions run in
      both, four charts);
    * "divergence_s": the per-head divergence button on the valid split (both routers loaded, every ticket read by
      both), with nothing stored for the pair.
    """
    import tempfile

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ticketnet.paths import CACHE_ENV, ROUTERS_ENV

    def fresh(query: dict) -> AppTest:
        st.cache_data.clear()
        st.cache_resource.clear()
        at = AppTest.from_file(str(APP), default_timeout=600)
        at.query_params.update(query)
        return at

    def check(at: AppTest, what: str) -> None:
        if at.exception:
            raise RuntimeError(f"the Compare page failed ({what}): {at.exception[0].value}")

    saved = {k: os.environ.get(k) for k in (CACHE_ENV, ROUTERS_ENV)}
    times: dict[str, list[float]] = {"open": [], "rerun": [], "flip": [], "divergence": []}
    query = {"a": "larkfield", "b": router_b.name}
    try:
        os.environ[ROUTERS_ENV] = str(router_b.parent)
        warm = fresh({**query, "split": "test"})
        warm.run()
        warm.switch_page(COMPARE_PAGE).run()                      # imports and the page's modules, once
        check(warm, "warm-up")
        for i in range(repeats):
            with tempfile.TemporaryDirectory(prefix="ticketnet-compare-") as cache:
                os.environ[CACHE_ENV] = cache
                at = fresh({**query, "split": "test"})
                at.switch_page(COMPARE_PAGE)
                t0 = time.perf_counter()
                at.run()
                times["open"].append(time.perf_counter() - t0)
                check(at, "open")
                t0 = time.perf_counter()
                at.run()
                times["rerun"].append(time.perf_counter() - t0)
                flips = next(d.value for d in at.dataframe if "kind" in d.value.columns)
                at.query_params["ticket"] = str(flips["ticket_id"].iloc[0])
                t0 = time.perf_counter()
                at.run()
                times["flip"].append(time.perf_counter() - t0)
                check(at, "a flip")
                at = fresh({**query, "split": "valid"})
                at.switch_page(COMPARE_PAGE).run()
                check(at, "valid")
                button = at.button(key="cmp_divergence")
                t0 = time.perf_counter()
                button.click().run()
                times["divergence"].append(time.perf_counter() - t0)
                check(at, "divergence")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        st.cache_data.clear()
        st.cache_resource.clear()
    out: dict = {f"{k}_s": statistics.median(v) for k, v in times.items()}
    out.update({f"{k}_max_s": max(v) for k, v in times.items()})
    out.update({"repeats": repeats, "split_open": "test", "split_divergence": "valid",
                "target_s": dict(COMPARE_TARGET_S),
                "open_ratio_to_target": out["open_s"] / COMPARE_TARGET_S["open"],
                "divergence_ratio_to_target": out["divergence_s"] / COMPARE_TARGET_S["divergence"]})
    return out


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


MAP_REDRAW_TARGET_S = 1.0          # the Ticket map page at 20,000 points, its target, server side


def map_redraw(repeats: int = 5, split: str = "train") -> dict:
    """Server-side script time of the Ticket map page redrawing its map (every point) after a change of colouring,
    and after a box selection that lists tickets, once the split's map is computed (the first open is reported
    apart: it computes or reads the map). AppTest runs the page script in process, as the server does."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=900)
    at.run()
    t0 = time.perf_counter()
    at.switch_page("../pages/map.py").run()
    at.segmented_control(key="map_split").set_value(split).run()
    first = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the Ticket map page failed: {at.exception[0].value}")
    import pyarrow as pa

    spec = at.get("vega_lite_chart")[0].proto
    points = sum(pa.ipc.open_stream(d.data.data).read_all().num_rows for d in spec.datasets) or None
    colours = list(at.selectbox(key="map_colour").options)
    redraws, boxes = [], []
    for i in range(repeats):
        t0 = time.perf_counter()
        at.selectbox(key="map_colour").select(colours[(i + 1) % len(colours)]).run()
        redraws.append(time.perf_counter() - t0)
    for i in range(repeats):
        at.session_state[f"map_{split}_PCA"] = {"selection": {"box": {"x": [-1.0 - i * 0.1, 1.0],
                                                                      "y": [-1.0, 1.0]}, "click": []}}
        t0 = time.perf_counter()
        at.run()
        boxes.append(time.perf_counter() - t0)
    if at.exception:
        raise RuntimeError(f"the Ticket map page failed: {at.exception[0].value}")
    median = statistics.median(redraws)
    return {"split": split, "points": points, "first_open_s": first, "redraw_s_median": median,
            "redraw_s_max": max(redraws), "box_s_median": statistics.median(boxes), "box_s_max": max(boxes),
            "picked_rows": len(next((d.value for d in at.dataframe if "heads" in d.value.columns), [])),
            "repeats": repeats, "ratio_to_target": median / MAP_REDRAW_TARGET_S}
