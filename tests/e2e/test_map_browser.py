"""The Ticket map page in a real browser, for Larkfield's router and for one with 12 odd team names, at 1366 and 1000
px: the map drawn with its points, a dragged box lists tickets, a picked row shows its nearest training tickets."""

from __future__ import annotations

import pytest

from tests.e2e.browser import (PAGE_OVERFLOW_JS, assert_every_chart_drawn, browser_page, click_first_row, no_exception,
                               require_chromium, settle, shot)

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

OVERFLOW_JS = PAGE_OVERFLOW_JS


@pytest.fixture
def server(routers_url):
    """The shared read-only server of tests/e2e/conftest.py."""
    return routers_url


def _drag_box(pg, xs: tuple[float, float], ys: tuple[float, float]) -> None:
    """Drag a rectangle over the map's plot between the fractions `xs` of the chart's width and `ys` of its height."""
    chart = pg.locator('[data-testid="stVegaLiteChart"]').first
    chart.scroll_into_view_if_needed()
    box = chart.locator("canvas, svg").first.bounding_box()
    assert box is not None
    pg.mouse.move(box["x"] + box["width"] * xs[0], box["y"] + box["height"] * ys[0])
    pg.mouse.down()
    pg.mouse.move(box["x"] + box["width"] * xs[1], box["y"] + box["height"] * ys[1], steps=8)
    pg.mouse.up()


@pytest.mark.parametrize("router,width,neighbours", [("larkfield", 1366, False), ("larkfield", 1000, False),
                                                     ("ops", 1000, True), ("ops", 1366, True)])
def test_the_map_draws_a_box_lists_tickets_and_a_row_shows_its_neighbours(chromium, server, router, width, neighbours):
    query = "" if router == "larkfield" else f"?router={router}"
    with browser_page(chromium, viewport={"width": width, "height": 900}) as pg:
        where = f"{router} map at {width} px"
        pg.goto(f"{server}/map{query}")
        settle(pg)
        no_exception(pg)
        pg.get_by_role("heading", name="Ticket map").wait_for()
        found = assert_every_chart_drawn(pg, where, at_least=1)
        assert found[0]["sized"] >= (1_000 if router == "larkfield" else 10), (where, found[0])
        assert pg.evaluate(OVERFLOW_JS) <= 1, f"{where}: the page is wider than the window"
        _drag_box(pg, (0.15, 0.85), (0.35, 0.9))    # inside the plot: clear of the axis titles and the legend above
        settle(pg)
        no_exception(pg)
        pg.get_by_text("click a row for its nearest training tickets", exact=False).wait_for()
        assert pg.locator('[data-testid="stDataFrame"]').count() == 1, where
        shot(pg, f"map_{router}_{width}_box")
        if neighbours:
            click_first_row(pg)
            settle(pg)
            no_exception(pg)
            pg.get_by_role("heading", name="Nearest training tickets to", exact=False).wait_for()
            assert pg.locator('[data-testid="stDataFrame"]').count() == 2, where
            shot(pg, f"map_{router}_{width}_neighbours")
        assert pg.locator("b", has_text="bold").count() == 0, f"{where}: a team name was rendered as HTML"
        assert pg.evaluate(OVERFLOW_JS) <= 1, f"{where}: the page is wider than the window"
        if router != "larkfield":
            assert f"router={router}" in pg.evaluate("window.location.search"), where
