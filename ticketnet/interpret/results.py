"""Long result tables, one row per (ticket_id, signal, metric, value): built, read and averaged with pandas alone."""

# No torch here: the Tickets page reads a stored split table before torch has loaded.

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ticketnet.interpret import signals


def long_frame(rows: Sequence[tuple]) -> pd.DataFrame:
    """Long rows as the result table: ticket_id, signal, metric, value (float)."""
    frame = pd.DataFrame(list(rows), columns=list(signals.LONG_COLUMNS))
    frame[signals.VALUE] = frame[signals.VALUE].astype(float)
    return frame


def mean_aopc(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean AOPC comprehensiveness and sufficiency per signal over a split's long table: signal,
    comprehensiveness, sufficiency, in the order the table lists the signals; one-token tickets are left out."""
    long = frame[frame[signals.METRIC].isin(signals.ERASER_METRICS)].dropna(subset=[signals.VALUE])
    order = list(dict.fromkeys(long[signals.SIGNAL]))
    means = long.pivot_table(index=signals.SIGNAL, columns=signals.METRIC, values=signals.VALUE, aggfunc="mean")
    means = means.reindex(order).reset_index()
    means.columns.name = None
    return means[[signals.SIGNAL, *signals.ERASER_METRICS]]


def values_of(frame: pd.DataFrame, metric: str, signal: str | None = None) -> pd.DataFrame | pd.Series:
    """One metric of a split's long table: a (ticket × signal) table, or one signal's values per ticket (a Series
    indexed by ticket_id) when `signal` is given; tickets in the table's order, nan where a value is missing."""
    part = frame[frame[signals.METRIC] == metric]
    if signal is not None:
        return part[part[signals.SIGNAL] == signal].set_index(signals.TICKET_ID)[signals.VALUE]
    order = list(dict.fromkeys(part[signals.SIGNAL]))
    out = part.pivot(index=signals.TICKET_ID, columns=signals.SIGNAL, values=signals.VALUE)
    out = out.reindex(index=list(dict.fromkeys(part[signals.TICKET_ID])), columns=order)
    out.columns.name = None
    return out
