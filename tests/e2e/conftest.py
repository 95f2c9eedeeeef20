"""Fixtures the browser test modules share: one real server on the shipped router with `other_routers` listed."""

from __future__ import annotations

import pytest

from tests.e2e.browser import routers_server


@pytest.fixture(scope="package")
def routers_url(artifacts, other_routers, tmp_path_factory):
    """The url of one server (the shipped router and data, `other_routers` in its sidebar) for the modules that only
    read pages (Ticket map, every page on other routers, Routing policy): each page's state lives in its browser
    session and URL, so one server started once serves them all."""
    with routers_server(artifacts, other_routers, tmp_path_factory) as url:
        yield url
