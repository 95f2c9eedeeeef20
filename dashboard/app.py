"""ticketnet dashboard: what did the router look at, and did that matter?"""

# Run from the repository root (`make run` does this):
#
#     python -m dashboard          # `streamlit run dashboard/app.py`, with pandas and altair (and torch when the first
#                                  # page must route) importing early
#
# Pages (the PAGES lists below): Tickets, Heads, Interpretation, Corpus and Ticket map inspect the router; Compare
# routers, Routing policy and Label issues decide with it; The formula, Verification and Cost show how attention
# works. docs/dashboard.md describes each. The picked ticket follows you to every page and lives in the URL
# (``?ticket=T-65052``; a typed one as ``?ticket=custom`` with ``&text=``, ``&ztext=`` or ``&typed=``), and so does
# every other choice that differs from its default, the router included (``&router=mine``).
#
# Environment variables:
#
#     TICKETNET_ROUTER    the default router's folder (router.pt, vocab.json, router.json; its splits in data/);
#                         default: the shipped weights/ (TICKETNET_WEIGHTS, a router.pt, still works)
#     TICKETNET_ROUTERS   folder of more routers, one per subfolder, listed in the sidebar; default: routers/
#     TICKETNET_DATA      splits for a router without data/ of its own; default: the shipped data/
#     TICKETNET_CACHE     folder for split-wide results and long typed tickets; default: ~/.cache/ticketnet
#     TICKETNET_SCANS     folder of corpus scans and uploads for the Corpus page; default: artifacts/scans
#
# Both `dashboard` and `ticketnet` are installed (editable) in the virtual environment by `make run`.
#
# Settings (offline, no telemetry, localhost only, no error details in the browser) are in
# .streamlit/config.toml; Streamlit reads it when started from the repository root. Served beyond this machine, the
# dashboard asks for sign-in (`python -m dashboard --secrets FILE`: dashboard/signed_in.py, dashboard/access.py).

from __future__ import annotations

import streamlit as st

from dashboard import router_choice, sign_in, state, ui, view
from dashboard.data import model
from dashboard.server import idle, sessions
from dashboard.text import md_escape
from ticketnet.paths import ROOT

# The tab icon is an emoji: Streamlit draws it as an inline SVG, where a ":material/…:" icon would be fetched from
# fonts.gstatic.com on every page load (the dashboard makes no request beyond localhost).
st.set_page_config(page_title="ticketnet · what did the router look at?", page_icon="🔀",
                   layout="wide", initial_sidebar_state="expanded")

PAGES = [
    st.Page(ROOT / "pages" / "tickets.py", title="Tickets", icon=":material/table_rows:", default=True),
    st.Page(ROOT / "pages" / "heads.py", title="Heads", icon=":material/grid_on:"),
    st.Page(ROOT / "pages" / "interpretation.py", title="Interpretation", icon=":material/troubleshoot:"),
    st.Page(ROOT / "pages" / "corpus.py", title="Corpus", icon=":material/dataset:"),
    st.Page(ROOT / "pages" / "map.py", title="Ticket map", icon=":material/scatter_plot:"),
]

# What the router's owners decide with it: a retrain against the old router, what may skip triage, which labels to
# doubt.
DECISION_PAGES = [
    st.Page(ROOT / "pages" / "compare.py", title="Compare routers", icon=":material/compare_arrows:"),
    st.Page(ROOT / "pages" / "policy.py", title="Routing policy", icon=":material/alt_route:"),
    st.Page(ROOT / "pages" / "label_issues.py", title="Label issues", icon=":material/rule:"),
]
# The Compare page's ?ticket= names a ticket of its two routers' split, not the sidebar router's picked ticket: the
# pick is neither read from nor written to its URL, and its sidebar shows no picked ticket.
OWN_TICKET_PAGES = ("compare",)

FORMULA_PAGES = [
    st.Page(ROOT / "pages" / "formula.py", title="The formula", icon=":material/functions:"),
    st.Page(ROOT / "pages" / "verification.py", title="Verification", icon=":material/fact_check:"),
    st.Page(ROOT / "pages" / "cost.py", title="Cost", icon=":material/speed:"),
]

signed_in = sign_in.require_sign_in()        # with sign-in on, nothing below runs for anyone it does not admit
sessions.forget_stale_widgets()              # before any widget of this run is drawn
page = st.navigation({"Inspect the router": PAGES, "Decide": DECISION_PAGES, "How attention works": FORMULA_PAGES})
sign_in.signed_in_sidebar(signed_in)          # who is signed in, under the page list, where it is seen first
router_choice.router_picker()                 # before anything reads the router: the page, the picked ticket
picks_ticket = page.url_path not in OWN_TICKET_PAGES
if picks_ticket:
    state.sync_with_url()
for notice in (router_choice.router_notice(), state.url_notice() if picks_ticket else None):
    if notice:                                # what a link named that this server could not open, on every page
        st.warning(md_escape(notice), icon=":material/link_off:")
view.run_page(page)                           # a page that ends early comes back here
if picks_ticket:
    ui.sidebar()                              # after the page, so a pick made on this run is already shown
model.warm_model()                            # torch and the model code, in the background once the page is out
idle.watch_idle()                             # per-ticket results and freed memory given back once everyone has left
