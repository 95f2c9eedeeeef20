"""Two routers compared on the same tickets: metrics with paired intervals, McNemar's test, flips, and corpus scans."""

from ticketnet.compare.summary import compare_tables, flip_table

__all__ = ["compare_tables", "flip_table"]
