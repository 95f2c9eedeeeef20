"""Which router this session reads: kept in the session, mirrored in the URL (`?router=mine`), picked in the sidebar."""

from __future__ import annotations

import streamlit as st

from dashboard.data import model
from ticketnet.card import WeightsError
from ticketnet.catalog import weights_in

_CHOSEN = "_router"               # the router this session reads
_WROTE = "_router_written"        # the value this session last wrote to ?router=
_NOTICE = "_router_notice"        # a router a link named that this server does not have (said once)
PICKER_KEY = "router_picker"


def chosen_router() -> str | None:
    """The router this session reads, as `sync_router` kept it (a link's ?router= before the first sync)."""
    return st.session_state.get(_CHOSEN) or st.query_params.get(model.ROUTER_PARAM)


model.read_router_choice_with(chosen_router)


def sync_router() -> str:
    """Adopt ?router= when a link brings a new one, else keep the session's router; write it back to the URL (the
    default router is left out of it). A switch of router forgets the session's other choices (ticket, filters,
    splits), which belong to the other router's data; a session opened from a link keeps its own. Returns the
    router's name."""
    ss, qp = st.session_state, st.query_params
    names = model.routers()
    url = qp.get(model.ROUTER_PARAM)
    chosen = ss.get(_CHOSEN, model.DEFAULT_ROUTER)
    if url != ss.get(_WROTE) and url is not None:
        chosen = url
    if chosen not in names:
        if chosen == url:
            ss[_NOTICE] = (f"The link names the router {url!r}, which is not among the routers on this server "
                           f"({', '.join(names)}); showing {model.DEFAULT_ROUTER} instead.")
        chosen = model.DEFAULT_ROUTER
    if _CHOSEN in ss and chosen != ss[_CHOSEN]:           # a switch, not a session opened from a link
        # Another router is another data set: its tickets, teams, splits and filters are not this one's.
        for key in [k for k in ss if k not in (_CHOSEN, _WROTE, PICKER_KEY)]:
            del ss[key]
        for name in [n for n in qp if n != model.ROUTER_PARAM]:
            del qp[name]
    ss[_CHOSEN] = chosen
    wanted = None if chosen == model.DEFAULT_ROUTER else chosen
    if qp.get(model.ROUTER_PARAM) != wanted:
        if wanted is None:
            qp.pop(model.ROUTER_PARAM, None)
        else:
            qp[model.ROUTER_PARAM] = wanted
    ss[_WROTE] = wanted
    return chosen


def router_notice() -> str | None:
    """A router a link named that could not be opened (shown once)."""
    return st.session_state.pop(_NOTICE, None)


def _describe(name: str, folder) -> str:
    try:
        teams = model.card_at(weights_in(folder)).teams
    except WeightsError:
        return f"{name} (cannot be read)"
    kind = " · encoder" if model.is_encoder(weights_in(folder)) else ""
    return f"{name} · {len(teams)} teams{kind}"


def router_picker() -> None:
    """The sidebar's router list, when there is more than one router to choose from."""
    current = sync_router()
    names = model.routers()
    if len(names) < 2:
        return
    labels = {name: _describe(name, folder) for name, folder in names.items()}
    picked = st.sidebar.selectbox("Router", list(names), index=list(names).index(current),
                                  format_func=labels.__getitem__, key=PICKER_KEY,
                                  help="The routers under routers/ (or $TICKETNET_ROUTERS) beside the default one; "
                                       "train one with `.venv/bin/python -m ticketnet train --data export.csv --out "
                                       "routers/NAME`.")
    if picked != current:
        st.query_params[model.ROUTER_PARAM] = picked
        st.rerun()
