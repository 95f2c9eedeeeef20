"""First opens timed server side (AppTest): a typed ticket never seen, the lesson with nothing kept, Compare."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from ticketnet.bench.browser import APP
from ticketnet.bench.ui_reruns import TICKET

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
