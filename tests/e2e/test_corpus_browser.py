"""The Corpus page in a real browser: open a scan, filter by a word, click a ticket, land on Heads with it."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.e2e.browser import (browser_page, click_first_row, no_exception, require_chromium, settle, shot,
                               streamlit_server)

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")


def test_open_a_scan_filter_by_a_word_pick_a_ticket_and_see_its_heads(artifacts, full_scan, tmp_path, chromium):
    shutil.copytree(full_scan, tmp_path / "scans" / "shipped")
    env = {"TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data),
           "TICKETNET_SCANS": str(tmp_path / "scans")}
    with (streamlit_server(env, tmp_path / "server.log") as (url, _),
          browser_page(chromium, viewport={"width": 1500, "height": 2400}) as pg):
        pg.goto(f"{url}/corpus")
        settle(pg)
        pg.get_by_role("heading", name="What the router relies on, per team").wait_for()
        pg.get_by_text("240 of 240 tickets match", exact=False).first.wait_for()
        no_exception(pg)

        word = pg.get_by_role("textbox", name="Contains the word")
        word.fill("refund")
        word.press("Enter")
        settle(pg)
        caption = pg.get_by_text(re.compile(r"\d+ of 240 tickets match")).first
        caption.wait_for()
        assert not caption.inner_text().startswith("240 of")
        shot(pg, "corpus_1_filtered")

        click_first_row(pg)                                           # the tickets (the token table comes first)
        # A corpus ticket's link names its id and its scan, so a shared link restores both.
        pg.wait_for_function("() => window.location.search.includes('scan=shipped')")
        settle(pg)
        no_exception(pg)
        picked = pg.get_by_text(re.compile(r"Picked T-\d+")).first
        picked.wait_for()
        tid = re.search(r"T-\d+", picked.inner_text()).group()
        shot(pg, "corpus_2_picked")

        pg.locator('[data-testid="stSidebarNav"] a', has_text="Heads").click()
        settle(pg)
        pg.get_by_role("heading", name=re.compile(r"Block 1: the 4 heads")).wait_for()
        assert pg.get_by_text(f"{tid} · corpus ticket", exact=False).count() >= 1
        assert f"ticket={tid}" in pg.url and "scan=shipped" in pg.url
        no_exception(pg)
        shot(pg, "corpus_3_heads")
