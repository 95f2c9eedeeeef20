"""Fixtures the browser test modules share: one real server on the shipped router with `other_routers` listed, and
one Chromium a module."""

from __future__ import annotations

import pytest

from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, routers_server


@pytest.fixture(scope="package")
def routers_url(artifacts, other_routers, tmp_path_factory):
    """The url of one server (the shipped router and data, `other_routers` in its sidebar) for the modules that only
    read pages (Ticket map, every page on other routers, Routing policy): each page's state lives in its browser
    session and URL, so one server started once serves them all."""
    with routers_server(artifacts, other_routers, tmp_path_factory) as url:
        yield url


@pytest.fixture(scope="module")
def chromium():
    """One Chromium for a module's tests (each test opens its own context in it, `browser_page`): a launch costs
    about 1.3 s, paid once a module instead of once a case."""
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
