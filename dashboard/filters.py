"""The Tickets page's filters and sorts: the rows of a split that pass them, in the order chosen."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from ticketnet.interpret.signals import DISAGREEMENT

SORTS = ("table order", "confidence, lowest first", "confidence, highest first", "longest first",
         "attention disagrees with effect")
DISAGREEMENT_SORT = SORTS[-1]
SEARCH_URL_LIMIT = 80            # a longer search stays in the session only
CELL_KEY = "tickets_cell"        # the confusion cell that filters the table: {true, predicted}, or None
CONFUSION_RESET = "_confusion_reset"   # part of the matrix's widget key: bumped to draw it with no selection


def clear_confusion_cell() -> None:
    """Drop the confusion cell, and draw the matrix afresh with no selection (its key changes)."""
    ss = st.session_state
    ss[CELL_KEY] = None
    ss[CONFUSION_RESET] = ss.get(CONFUSION_RESET, 0) + 1


def apply(table, values: Mapping[str, object], cell: Mapping[str, str] | None = None):
    """The rows of a split table (splits.split_table) that pass the filters, and a confusion cell if one is picked."""
    rows = table
    if cell:
        rows = rows[(rows["team"] == cell.get("true")) & (rows["predicted"] == cell.get("predicted"))]
    if values["true_filter"] != "any":
        rows = rows[rows["team"] == values["true_filter"]]
    if values["pred_filter"] != "any":
        rows = rows[rows["predicted"] == values["pred_filter"]]
    if values["misrouted"]:
        rows = rows[~rows["correct"]]
    if values["pattern_filter"]:
        rows = rows[rows["pattern"].isin(values["pattern_filter"])]
    lo, hi = values["confidence_range"]
    rows = rows[(rows["confidence"] >= lo) & (rows["confidence"] <= hi)]
    needle = str(values["ticket_search"]).strip()
    if needle:
        rows = rows[rows["ticket_id"].str.contains(needle, case=False, regex=False)
                    | rows["text"].str.contains(needle, case=False, regex=False)]
    return rows


def sort(rows, sort_by: str):
    """The rows in the chosen order (stable; ties keep the table order)."""
    if sort_by == "confidence, lowest first":
        return rows.sort_values("confidence", kind="stable")
    if sort_by == "confidence, highest first":
        return rows.sort_values("confidence", ascending=False, kind="stable")
    if sort_by == "longest first":
        return rows.sort_values("tokens", ascending=False, kind="stable")
    if sort_by == DISAGREEMENT_SORT and DISAGREEMENT in rows.columns:
        return rows.sort_values(DISAGREEMENT, ascending=False, kind="stable", na_position="last")
    return rows
