"""Dashboard timings for `python -m ticketnet bench`: cold start in a real browser, warm reruns on the server."""

# Kept apart from the library proper: these drive the Streamlit app (AppTest in process, or `streamlit run`
# plus Debian's Chromium through Playwright) and are skipped with a reason when those are not installed.

from __future__ import annotations

from ticketnet.bench.ui_chromium import (
    HEADS_DRAWN_TARGET_S,
    LAUNCHERS,
    LONG_TICKET_WORDS,
    PAGES,
    SCENARIOS,
    cold_start,
    cold_starts,
    heads_drawn,
)
from ticketnet.bench.ui_first_open import (
    COMPARE_PAGE,
    COMPARE_TARGET_S,
    FIRST_OPEN_PAGES,
    FIRST_OPEN_TARGET_S,
    LESSON_SECTION,
    LESSON_TARGET_S,
    compare_open,
    lesson_first_open,
    retrain_router,
    typed_first_open,
)
from ticketnet.bench.ui_reruns import (
    MAP_REDRAW_TARGET_S,
    POLICY_PAGE,
    POLICY_TARGET_MS,
    TICKET,
    map_redraw,
    policy_sliders,
    warm_interaction,
)

# The timings live in ui_reruns, ui_first_open and ui_chromium; this module keeps their names in one place.
__all__ = ["TICKET", "COMPARE_PAGE", "COMPARE_TARGET_S", "FIRST_OPEN_PAGES", "FIRST_OPEN_TARGET_S",
           "HEADS_DRAWN_TARGET_S", "LAUNCHERS", "LESSON_SECTION", "LESSON_TARGET_S", "LONG_TICKET_WORDS",
           "MAP_REDRAW_TARGET_S", "PAGES", "POLICY_PAGE", "POLICY_TARGET_MS", "SCENARIOS", "cold_start",
           "cold_starts", "compare_open", "heads_drawn", "lesson_first_open", "map_redraw", "policy_sliders",
           "retrain_router", "typed_first_open", "warm_interaction"]
