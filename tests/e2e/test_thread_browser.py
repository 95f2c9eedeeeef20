"""An e-mail thread typed as a ticket, in a real browser at 1366 x 768 light and 1000 px dark: the Interpretation
page shows the new message as the ticket, the quoted part greyed out below it with a one-line note, and the switch
that reads the whole thread puts ?thread=whole in the URL."""

from __future__ import annotations

import pytest

from tests.e2e.browser import (PAGE_OVERFLOW_JS, SHOTS, browser_page, no_exception, require_chromium, settle,
                               type_ticket)

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

# Flattened the way a helpdesk export writes it: the line breaks turned into " / ".
THREAD = ("Thanks, the refund arrived. While I've got you, the tracking link for my second box doesn't work. / "
          "Kind regards, / Priya / On Tue, 11 Jun 2024, Larkfield Customer Care <care@larkfield.co.uk> wrote: / "
          "> Dear Ms Shah, / > we have refunded the double charge of £49.99 to your card.")
NEW = "While I've got you, the tracking link for my second box doesn't work."
QUOTED = "we have refunded the double charge"


@pytest.fixture
def server(routers_url):
    """The shared read-only server of tests/e2e/conftest.py: a typed ticket lives in its browser session."""
    return routers_url


def _shot(pg, name: str) -> None:
    """The window as the analyst sees it, the ticket's header at the top (the whole page runs to many screens)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    pg.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    pg.screenshot(path=str(SHOTS / f"{name}.png"))


def _grey(pg, locator) -> bool:
    """Whether the element's text is drawn fainter than the page's body text (a caption's greyed colour)."""
    colour = locator.evaluate("e => getComputedStyle(e.querySelector('p span') || e.querySelector('p') || e).color")
    body = pg.evaluate("getComputedStyle(document.querySelector('[data-testid=\"stText\"]')).color")
    assert colour != body, (colour, body)
    return True


# Each width and each theme once: the greyed colour and the layout depend on one each, not on the pair.
@pytest.mark.parametrize("width,height,scheme", [(1366, 768, "light"), (1000, 900, "dark")])
def test_a_typed_thread_shows_its_new_message_the_greyed_quoted_part_and_the_switch(chromium, server, width, height,
                                                                                    scheme):
    where = f"thread ticket at {width} px, {scheme}"
    with browser_page(chromium, viewport={"width": width, "height": height}, color_scheme=scheme) as pg:
        pg.goto(server)
        settle(pg)
        type_ticket(pg, THREAD)
        no_exception(pg)
        pg.get_by_role("link", name="Interpretation of your ticket").click()
        settle(pg)
        no_exception(pg)
        pg.get_by_role("heading", name="Interpretation", exact=True).wait_for()
        main = pg.locator('[data-testid="stMain"]')
        ticket_text = main.locator('[data-testid="stText"]', has_text=NEW).first
        assert ticket_text.is_visible(), where
        assert QUOTED not in ticket_text.inner_text(), f"{where}: the quoted part is shown as the ticket"
        greyed = main.locator('[data-testid="stCaptionContainer"]', has_text=QUOTED).first
        assert greyed.is_visible(), f"{where}: the quoted part is not shown"
        assert _grey(pg, greyed), f"{where}: the quoted part is not greyed out"
        note = main.locator('[data-testid="stCaptionContainer"]', has_text="characters): the router read").first
        assert note.is_visible() and "quoted history" in note.inner_text(), where
        assert pg.locator("b, strong", has_text="Ms Shah").count() == 0, f"{where}: user text rendered as HTML"
        assert pg.evaluate(PAGE_OVERFLOW_JS) <= 1, f"{where}: the page is wider than the window"
        _shot(pg, f"thread_{width}_{scheme}")

        pg.get_by_text("Read the quoted part too").click()
        settle(pg)
        no_exception(pg)
        assert "thread=whole" in pg.url, where
        main.locator('[data-testid="stCaptionContainer"]', has_text="Reading the whole thread").first.wait_for()
        assert main.locator('[data-testid="stText"]', has_text=QUOTED).first.is_visible(), where
        _shot(pg, f"thread_{width}_{scheme}_whole")
