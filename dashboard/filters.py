"""The Tickets page's filters, sort and split: kept for the session across page changes, mirrored in the URL."""

# Streamlit forgets a widget's state when a run does not draw it, so a visit to Heads would reset the Tickets
# page's triage list (misrouted, confidence ≤ 0.6: 9 tickets) to all 1,500. Each run of the Tickets page copies the
# widgets' values to a plain session key (`_KEPT`), and `restore` seeds any widget key Streamlit dropped from it
# before the widgets are drawn (the widgets take no default of their own, so seeding never clashes with one).
# The URL carries the values that differ from the defaults, in short parameters with readable values
# (`?misrouted=1&conf=0-0.6&sort=confidence-lowest-first&cell=delivery,payments`); a link with filters is adopted
# when it differs from what this session last wrote there, as `state.sync_with_url` does for the ticket. Page
# switches clear the query string: a URL with no filter parameter at all changes nothing.

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import streamlit as st

from dashboard import state
from ticketnet.interpret.signals import DISAGREEMENT

SORTS = ("table order", "confidence, lowest first", "confidence, highest first", "longest first",
         "attention disagrees with effect")
DISAGREEMENT_SORT = SORTS[-1]


def sort_slug(sort_by: str) -> str:
    """A sort order as the URL writes it: "confidence, lowest first" → "confidence-lowest-first"."""
    return re.sub(r"[^a-z0-9]+", "-", sort_by.lower()).strip("-")


SORT_SLUGS = {sort_slug(s): s for s in SORTS}
CELL_URL = "cell"                # the confusion cell in the URL: "true,predicted" (?cell=delivery,payments)

DEFAULTS: dict[str, object] = {
    "split": "valid",
    "true_filter": "any",
    "pred_filter": "any",
    "pattern_filter": [],
    "misrouted": False,
    "confidence_range": (0.0, 1.0),
    "ticket_search": "",
    "sort_by": SORTS[0],
}
URL_NAMES = {"split": "split", "true_filter": "true", "pred_filter": "pred", "pattern_filter": "pattern",
             "misrouted": "misrouted", "confidence_range": "conf", "ticket_search": "q", "sort_by": "sort"}
SEARCH_URL_LIMIT = 80            # a longer search stays in the session only
_KEPT = "_tickets_filters"       # the values of the last Tickets run (a plain key: survives other pages)
_WROTE = "_tickets_filters_url"  # the filter parameters this session last wrote to the URL
_CELL = "_tickets_confusion_cell"  # the confusion-matrix cell that filters the table: {split, true, predicted}


def to_query(values: Mapping[str, object]) -> dict[str, str]:
    """The URL parameters for `values`: only those that differ from DEFAULTS, and only short ones."""
    out: dict[str, str] = {}
    for key, name in URL_NAMES.items():
        v = values.get(key, DEFAULTS[key])
        if v == DEFAULTS[key] or (key == "pattern_filter" and not v):
            continue
        if key == "pattern_filter":
            out[name] = ",".join(v)
        elif key == "misrouted":
            out[name] = "1"
        elif key == "confidence_range":
            lo, hi = v
            out[name] = f"{lo:g}-{hi:g}"
        elif key == "ticket_search":
            if len(v) <= SEARCH_URL_LIMIT:
                out[name] = v
        elif key == "sort_by":
            if v in SORTS:
                out[name] = sort_slug(v)
        else:
            out[name] = str(v)
    return out


def from_query(params: Mapping[str, str], splits: Sequence[str], teams: Sequence[str]) -> dict[str, object]:
    """The filter values a URL names (every other one at its default); values that make no sense are dropped."""
    values = {k: (list(v) if isinstance(v, list) else v) for k, v in DEFAULTS.items()}
    get = {key: params.get(name) for key, name in URL_NAMES.items()}
    if get["split"] in splits:
        values["split"] = get["split"]
    for key in ("true_filter", "pred_filter"):
        if get[key] in teams:
            values[key] = get[key]
    if get["pattern_filter"]:
        values["pattern_filter"] = [p for p in dict.fromkeys(get["pattern_filter"].split(",")) if p.strip()]
    values["misrouted"] = get["misrouted"] in ("1", "true", "yes")
    if get["confidence_range"]:
        try:
            lo, hi = (round(min(1.0, max(0.0, float(x))), 2) for x in get["confidence_range"].split("-", 1))
        except ValueError:
            pass
        else:
            values["confidence_range"] = (min(lo, hi), max(lo, hi))
    if get["ticket_search"]:
        values["ticket_search"] = get["ticket_search"][:SEARCH_URL_LIMIT]
    sort_by = (get["sort_by"] or "").strip().lower()
    if sort_by in SORT_SLUGS:
        values["sort_by"] = SORT_SLUGS[sort_by]
    elif sort_by.isdigit() and int(sort_by) < len(SORTS):      # links written before sorts were named
        values["sort_by"] = SORTS[int(sort_by)]
    return values


def cell_to_query(cell: Mapping[str, str] | None) -> dict[str, str]:
    """The URL parameter of a confusion cell ({} when none is picked)."""
    return {CELL_URL: f"{cell['true']},{cell['predicted']}"} if cell else {}


def cell_from_query(raw: str | None, teams: Sequence[str]) -> dict[str, str] | None:
    """The confusion cell a URL names ("true,predicted", both teams), None for anything else."""
    parts = [p.strip() for p in (raw or "").split(",")]
    if len(parts) == 2 and all(p in teams for p in parts):
        return {"true": parts[0], "predicted": parts[1]}
    return None


def _url_filters() -> dict[str, str]:
    return {name: st.query_params[name] for name in (*URL_NAMES.values(), CELL_URL) if name in st.query_params}


def restore(splits: Sequence[str], teams: Sequence[str]) -> None:
    """Before the Tickets page draws its split and filter widgets: adopt filters from a new link, then seed every
    widget key Streamlit dropped (another page ran) with the session's kept value."""
    ss = st.session_state
    url = _url_filters()
    if url and url != ss.get(_WROTE):
        adopted = from_query(url, splits, teams)
        ss[_KEPT] = adopted
        for key, value in adopted.items():
            ss[key] = value
        cell = cell_from_query(url.get(CELL_URL), teams)
        if cell:                         # kept until a click on the chart or the clear button replaces it
            ss[_CELL] = {"split": adopted["split"], **cell, "from_link": True}
        else:
            ss.pop(_CELL, None)
    kept = ss.get(_KEPT, {})
    for key, default in DEFAULTS.items():
        if key not in ss:
            value = kept.get(key, default)
            ss[key] = list(value) if isinstance(value, list) else value


def allow(key: str, options: Sequence) -> None:
    """Before drawing a widget whose options change (patterns of a split, sorts once a split is interpreted): keep
    only the seeded values that are still options, so the widget never receives an impossible value."""
    ss = st.session_state
    value = ss.get(key, DEFAULTS[key])
    if isinstance(value, list):
        ss[key] = [v for v in value if v in options]
    elif value not in options:
        ss[key] = DEFAULTS[key] if DEFAULTS[key] in options else options[0]


def remember(cell: Mapping[str, str] | None = None) -> None:
    """After the widgets: keep their values for the session and write the non-default ones to the URL, with the
    confusion cell that filters the table."""
    ss = st.session_state
    values = {key: ss.get(key, DEFAULTS[key]) for key in DEFAULTS}
    values["pattern_filter"] = list(values["pattern_filter"])
    values["confidence_range"] = tuple(values["confidence_range"])
    ss[_KEPT] = values
    query = {**to_query(values), **cell_to_query(cell)}
    state.write_query((*URL_NAMES.values(), CELL_URL), query)
    ss[_WROTE] = query


def confusion_cell(split: str, picked: Sequence[Mapping[str, str]], returning: bool) -> dict[str, str] | None:
    """The confusion cell that filters the table. A click on the chart sets it (and an empty selection clears it);
    when the chart is drawn afresh after another page (`returning`: its widget state was dropped), the session's
    cell of this split is kept, so the triage list survives a visit to Heads. A cell a link named is no selection
    of the chart: it stays until a click or the clear button replaces it."""
    ss = st.session_state
    if picked:
        cell = {"true": picked[0].get("true"), "predicted": picked[0].get("predicted")}
        ss[_CELL] = {"split": split, **cell}
        return cell
    kept_cell = ss.get(_CELL)
    if (returning or (kept_cell or {}).get("from_link")) and kept_cell and kept_cell.get("split") == split:
        return {"true": kept_cell["true"], "predicted": kept_cell["predicted"]}
    ss.pop(_CELL, None)
    return None


def clear_confusion_cell() -> None:
    st.session_state.pop(_CELL, None)


def kept() -> dict[str, object]:
    """The filter values of the session's last Tickets run (DEFAULTS before any)."""
    return {**DEFAULTS, **st.session_state.get(_KEPT, {})}


def apply(table, values: Mapping[str, object], cell: Mapping[str, str] | None = None):
    """The rows of a split table (splits.split_table) that pass the filters, and a confusion cell if one is picked."""
    view = table
    if cell:
        view = view[(view["team"] == cell.get("true")) & (view["predicted"] == cell.get("predicted"))]
    if values["true_filter"] != "any":
        view = view[view["team"] == values["true_filter"]]
    if values["pred_filter"] != "any":
        view = view[view["predicted"] == values["pred_filter"]]
    if values["misrouted"]:
        view = view[~view["correct"]]
    if values["pattern_filter"]:
        view = view[view["pattern"].isin(values["pattern_filter"])]
    lo, hi = values["confidence_range"]
    view = view[(view["confidence"] >= lo) & (view["confidence"] <= hi)]
    needle = str(values["ticket_search"]).strip()
    if needle:
        view = view[view["ticket_id"].str.contains(needle, case=False, regex=False)
                    | view["text"].str.contains(needle, case=False, regex=False)]
    return view


def sort(view, sort_by: str):
    """The rows in the chosen order (stable; ties keep the table order)."""
    if sort_by == "confidence, lowest first":
        return view.sort_values("confidence", kind="stable")
    if sort_by == "confidence, highest first":
        return view.sort_values("confidence", ascending=False, kind="stable")
    if sort_by == "longest first":
        return view.sort_values("tokens", ascending=False, kind="stable")
    if sort_by == DISAGREEMENT_SORT and DISAGREEMENT in view.columns:
        return view.sort_values(DISAGREEMENT, ascending=False, kind="stable", na_position="last")
    return view
