"""The page's lazy queries: filters pushed down to the Parquet files, one ticket read back whole."""

from __future__ import annotations

import pandas as pd
import pytest

from ticketnet.corpus.manifest import ScanError
from ticketnet.corpus.query import Filters, is_scan, open_scan, ticket, tickets


def test_filters_match_pandas_on_the_ticket_rows(full_scan):
    scan = open_scan(full_scan)
    assert is_scan(full_scan) and scan.level == "full" and scan.tokens is not None
    rows = pd.read_parquet(full_scan / "tickets")
    f = Filters(token="refund", team="payments", confidence=(0.5, 1.0), disagreement=(0.3, 1.0),
                sort="attention disagrees with effect")
    got, total = tickets(scan, f, limit=5)
    want = rows[rows["tokens"].map(lambda t: "refund" in t) & (rows["predicted"] == "payments")
                & rows["confidence"].between(0.5, 1.0) & rows["disagreement"].between(0.3, 1.0)]
    assert total == len(want) > 0
    assert got["ticket_id"].tolist() == want.sort_values(["disagreement", "row"], ascending=[False, True])["ticket_id"].head(5).tolist()
    mis, n_mis = tickets(scan, Filters(misrouted=True))
    assert n_mis == int((rows["correct"] == False).sum()) and not mis["correct"].any()  # noqa: E712
    one = ticket(scan, got["ticket_id"][0])
    assert one["text"] == want.set_index("ticket_id").loc[got["ticket_id"][0], "text"]
    assert ticket(scan, "nope") is None


def test_an_unfinished_or_missing_scan_is_refused(tmp_path):
    with pytest.raises(ScanError, match="no scan here"):
        open_scan(tmp_path)
    assert not is_scan(tmp_path)


def test_the_listing_carries_the_characters_set_aside_where_the_scan_has_them(full_scan):
    rows = pd.read_parquet(full_scan / "tickets").set_index("ticket_id")
    assert "set_aside_chars" in rows.columns
    got, _ = tickets(open_scan(full_scan), Filters(), limit=10)
    assert "set_aside_chars" in got.columns
    assert got.set_index("ticket_id")["set_aside_chars"].tolist() == rows.loc[got["ticket_id"], "set_aside_chars"].tolist()
