"""Two routers compared on the same tickets: metrics with paired intervals, McNemar's test, flips, and corpus scans."""

from ticketnet.compare.scans import compare_scans
from ticketnet.compare.summary import compare_tables, flip_table
from ticketnet.compare.tables import compare_routers, routed_split, router_teams, split_csv

__all__ = ["compare_routers", "compare_scans", "compare_tables", "flip_table", "routed_split", "router_teams", "split_csv"]
