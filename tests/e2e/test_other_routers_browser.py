"""Every page in a real browser on routers with other teams than Larkfield's (4 and 12, odd names), at 1366 and
1000 px: no exception, every chart drawn with its marks, nothing wider than the window, no markup from a team name."""

from __future__ import annotations

import pytest

from tests.e2e.browser import (PAGE_OVERFLOW_JS, assert_every_chart_drawn, browser_page, no_exception, require_chromium,
                               settle, shot)

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

# (page path, the fewest charts it draws on a router's default ticket)
PAGES = (("", 2), ("heads", 3), ("interpretation", 3), ("formula", 1), ("verification", 0), ("cost", 0))
OVERFLOW_JS = PAGE_OVERFLOW_JS


@pytest.fixture
def server(routers_url):
    """The shared read-only server of tests/e2e/conftest.py."""
    return routers_url


@pytest.mark.parametrize("router,width", [("helpdesk", 1366), ("ops", 1000)])
def test_every_page_draws_on_a_router_with_other_teams(chromium, server, router, width):
    with browser_page(chromium, viewport={"width": width, "height": 900}) as pg:
        for path, charts in PAGES:
            pg.goto(f"{server}/{path}?router={router}")
            settle(pg)
            no_exception(pg)
            where = f"{router} {path or 'tickets'} at {width} px"
            if charts:
                assert_every_chart_drawn(pg, where, at_least=charts)
            assert pg.evaluate(OVERFLOW_JS) <= 1, f"{where}: the page is wider than the window"
            assert pg.locator("b", has_text="bold").count() == 0, f"{where}: a team name was rendered as HTML"
            assert f"router={router}" in pg.evaluate("window.location.search"), where
            shot(pg, f"routers_{router}_{path or 'tickets'}_{width}")
