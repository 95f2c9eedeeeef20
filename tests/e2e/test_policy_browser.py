"""The Routing policy page in a real browser at 1366 and 1000 px, on the shipped router and on one with 12 odd team
names: no exception, every chart drawn with its marks, nothing wider than the window, a slider move redraws, the
state in the URL, no markup from a team name."""

from __future__ import annotations

import re

import pytest

from tests.e2e.browser import (PAGE_OVERFLOW_JS, assert_every_chart_drawn, browser_page, no_exception, require_chromium,
                               settle, shot)

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

OVERFLOW_JS = PAGE_OVERFLOW_JS
CHARTS = 3                     # risk–coverage, set sizes, per-team thresholds


@pytest.fixture
def server(routers_url):
    """The shared read-only server of tests/e2e/conftest.py."""
    return routers_url


def _metric(pg, label: str) -> str:
    box = pg.locator('[data-testid="stMetric"]', has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text()


@pytest.mark.parametrize("width", [1366, 1000])
def test_the_policy_page_draws_and_a_slider_move_redraws(chromium, server, width):
    with browser_page(chromium, viewport={"width": width, "height": 900}) as pg:
        pg.goto(f"{server}/policy?precision=0.95&alpha=0.1&method=aps")
        settle(pg)
        no_exception(pg)
        where = f"policy at {width} px"
        assert_every_chart_drawn(pg, where, at_least=CHARTS)
        assert pg.evaluate(OVERFLOW_JS) <= 1, f"{where}: the page is wider than the window"
        search = pg.evaluate("window.location.search")
        assert "precision=0.95" in search and "alpha=0.1" in search and "method=aps" in search, search
        before = _metric(pg, "automation rate · test")
        shot(pg, f"policy_{width}")
        # The precision slider, moved with the keyboard to its top (0.999), where every team's threshold is higher
        # than at 0.95; a few arrow presses are not enough, as presses during a rerun may merge and a step of a
        # few thousandths can leave every threshold where it was.
        thumb = pg.locator('[data-testid="stSlider"]', has_text="Target precision").get_by_role("slider")
        thumb.focus()
        pg.keyboard.press("End")
        settle(pg)
        no_exception(pg)
        moved = re.search(r"precision=([0-9.]+)", pg.evaluate("window.location.search"))
        assert moved and float(moved.group(1)) == 0.999, f"{where}: the URL did not follow the slider"
        assert _metric(pg, "automation rate · test") != before, f"{where}: the numbers did not follow the slider"
        assert_every_chart_drawn(pg, f"{where}, after the move", at_least=CHARTS)


def test_the_policy_page_on_a_router_with_twelve_odd_teams(chromium, server):
    with browser_page(chromium, viewport={"width": 1000, "height": 900}) as pg:
        pg.goto(f"{server}/policy?router=ops&alpha=0.3")
        settle(pg)
        no_exception(pg)
        assert_every_chart_drawn(pg, "ops policy", at_least=2)
        assert pg.evaluate(OVERFLOW_JS) <= 1, "ops policy: the page is wider than the window"
        assert pg.locator("b", has_text="bold").count() == 0, "a team name was rendered as HTML"
        assert "router=ops" in pg.evaluate("window.location.search")
        shot(pg, "policy_ops_1000")
