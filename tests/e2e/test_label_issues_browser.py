"""The Label issues page in a real browser, for Larkfield's router and routers of odd team names, at 1366 and 1000 px
in the light and the dark theme: no exception, every chart drawn, nothing wider than the window, a row picked."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.e2e.browser import (PAGE_OVERFLOW_JS, assert_every_chart_drawn, browser_page, click_first_row, no_exception,
                               require_chromium, settle, shot, streamlit_server)

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

OVERFLOW_JS = PAGE_OVERFLOW_JS
N_TRAIN = 600


@pytest.fixture(scope="module")
def server(artifacts, other_routers, tmp_path_factory):
    """Larkfield's router (a copy, read with its first N_TRAIN training tickets) and the two other routers, each with
    the baseline's 3-fold out-of-fold result cached."""
    from ticketnet.labels.run import compute_oof

    root = tmp_path_factory.mktemp("labels_e2e")
    larkfield, data, routers = root / "larkfield", root / "data", root / "routers"
    larkfield.mkdir()
    data.mkdir()
    for name in ("router.pt", "vocab.json", "router.json"):
        shutil.copy(artifacts.weights.parent / name, larkfield / name)
    lines = (artifacts.data / "train.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "train.csv").write_text("".join(lines[:N_TRAIN + 1]), encoding="utf-8")
    for name in ("valid.csv", "test.csv", "teams.txt"):
        shutil.copy(artifacts.data / name, data / name)
    shutil.copytree(other_routers, routers)
    import os

    old = os.environ.get("TICKETNET_DATA")
    os.environ["TICKETNET_DATA"] = str(data)
    try:
        for folder in (larkfield, routers / "helpdesk", routers / "ops"):
            compute_oof(folder, "train", 3, None, "baseline", scheduler="synchronous")
    finally:
        if old is None:
            os.environ.pop("TICKETNET_DATA")
        else:
            os.environ["TICKETNET_DATA"] = old
    env = {"TICKETNET_ROUTER": str(larkfield), "TICKETNET_DATA": str(data), "TICKETNET_ROUTERS": str(routers),
           "TICKETNET_CACHE": str(root / "cache"), "TICKETNET_SCANS": str(root / "scans")}
    with streamlit_server(env, root / "server.log") as (url, _):
        yield url


@pytest.mark.parametrize("router,width,theme", [("larkfield", 1366, "light"), ("larkfield", 1000, "dark"),
                                                ("ops", 1366, "dark"), ("helpdesk", 1000, "light")])
def test_the_label_issues_page_draws_and_picks(chromium, server, router, width, theme):
    with browser_page(chromium, viewport={"width": width, "height": 900}, color_scheme=theme) as pg:
        query = "" if router == "larkfield" else f"?router={router}"
        pg.goto(f"{server}/label_issues{query}")
        settle(pg)
        no_exception(pg)
        pg.get_by_text("No out-of-fold result from the router", exact=False).first.wait_for()
        pg.get_by_text("baseline (TF-IDF", exact=False).first.click()        # the source picker
        settle(pg)
        pg.get_by_role("heading", name="Labels to doubt").wait_for()
        no_exception(pg)
        assert_every_chart_drawn(pg, f"label issues, {router}", at_least=2)
        assert pg.evaluate(OVERFLOW_JS) <= 0, "the page is wider than the window"
        shot(pg, f"label_issues_{router}_{width}_{theme}")
        click_first_row(pg)
        settle(pg)
        no_exception(pg)
        picked = pg.get_by_text(re.compile(r"^Picked ")).first
        picked.wait_for()
        pg.get_by_text("Evidence", exact=False).first.wait_for()
        link = pg.get_by_role("link", name=re.compile(r"^Heads of "))
        link.first.click()
        settle(pg)
        no_exception(pg)
        pg.get_by_role("heading", name=re.compile(r"Block 1: the \d+ heads")).wait_for()
