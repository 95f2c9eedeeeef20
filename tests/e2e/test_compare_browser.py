"""The Compare page in a real browser at 1366 and 1000 px, light and dark: two Larkfield routers and two routers of a
4-team data set; the summary, a flip picked in the table and shown side by side, the per-head divergence; every chart
drawn with its marks, nothing wider than the window, no markup from a team name or a ticket."""

from __future__ import annotations

import pytest

from tests.compare.routers import helpdesk_routers, larkfield_routers
from tests.e2e.browser import (PAGE_OVERFLOW_JS, assert_every_chart_drawn, browser_page, click_first_row, no_exception,
                               require_chromium, settle, shot, streamlit_server, ticket_in_url)

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

OVERFLOW_JS = PAGE_OVERFLOW_JS
PAIRS = {"larkfield": ("larkfield", "retrain"), "helpdesk": ("helpdesk", "helpdesk_b")}


@pytest.fixture(scope="module")
def server(artifacts, larkfield_retrain, other_routers, tmp_path_factory):
    root = tmp_path_factory.mktemp("routers")
    larkfield_routers(larkfield_retrain, root)
    helpdesk_routers(other_routers, root)
    env = {"TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data),
           "TICKETNET_ROUTERS": str(root), "TICKETNET_CACHE": str(tmp_path_factory.mktemp("cache")),
           "TICKETNET_SCANS": str(tmp_path_factory.mktemp("scans"))}
    with streamlit_server(env, tmp_path_factory.mktemp("streamlit") / "server.log") as (url, _):
        yield url


def _fits(pg, where: str) -> None:
    no_exception(pg)
    assert pg.evaluate(OVERFLOW_JS) <= 1, f"{where}: the page is wider than the window"
    assert pg.locator("b", has_text="bold").count() == 0, f"{where}: a team name was rendered as HTML"


@pytest.mark.parametrize("pair,width,scheme", [("larkfield", 1366, "light"), ("helpdesk", 1000, "light"),
                                               ("larkfield", 1000, "dark"), ("helpdesk", 1366, "dark")])
def test_the_compare_page_draws_and_opens_a_flip_side_by_side(chromium, server, pair, width, scheme):
    a, b = PAIRS[pair]
    with browser_page(chromium, viewport={"width": width, "height": 768}, color_scheme=scheme) as pg:
        where = f"{pair} at {width} px ({scheme})"
        pg.goto(f"{server}/compare?a={a}&b={b}&split=test")
        settle(pg)
        _fits(pg, where)
        assert_every_chart_drawn(pg, where, at_least=1)                  # the per-team deltas
        assert pg.get_by_text("McNemar's exact test").count() >= 1, where
        shot(pg, f"compare_{pair}_{width}_{scheme}_summary")

        click_first_row(pg)                                                # the flips table: a flip opens
        settle(pg)
        _fits(pg, f"{where}, a flip")
        ticket = ticket_in_url(pg)
        assert ticket, f"{where}: the picked flip is not in the URL"
        assert pg.get_by_text("side by side").count() >= 1, where
        # the deltas, two heatmaps and the deletion effects
        assert_every_chart_drawn(pg, f"{where}, a flip", at_least=4)
        assert pg.get_by_text("Kendall τ of the deletions").count() == 1, where
        compute = pg.get_by_role("button", name="Compute the per-head divergence")
        if compute.count():                             # an earlier case on this server may have stored it
            compute.click()
            settle(pg)
        _fits(pg, f"{where}, per head")
        assert_every_chart_drawn(pg, f"{where}, per head", at_least=5)
        assert pg.get_by_text("Most changed: block").count() == 1, where
        search = pg.evaluate("window.location.search")
        assert f"a={a}" in search and f"b={b}" in search and "split=test" in search and f"ticket={ticket}" in search
        shot(pg, f"compare_{pair}_{width}_{scheme}_flip")
