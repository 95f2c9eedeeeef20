"""Two routers compared on the same tickets: metrics with paired intervals, McNemar's test, flips, and corpus scans."""

from ticketnet.compare.scans import compare_scans
from ticketnet.compare.summary import compare_tables, flip_table, p_text
from ticketnet.compare.tables import compare_routers, routed_split, router_teams, split_csv

__all__ = ["compare_routers", "compare_scans", "compare_tables", "flip_table", "p_text", "routed_split", "router_teams",
           "split_csv"]

# -- for the Compare page: per head and per token (heads.py), per-team differences (deltas.py) -----------------------
from ticketnet.compare.deltas import team_deltas  # noqa: E402
from ticketnet.compare.heads import (  # noqa: E402
    DeletionAgreement, SharedReading, attention_divergence, check_same_shape, deletion_agreement, head_changes,
    head_importance_on, jensen_shannon, shape_mismatch, shape_of, shared_reading,
)

__all__ += ["DeletionAgreement", "SharedReading", "attention_divergence", "check_same_shape", "deletion_agreement",
            "head_changes", "head_importance_on", "jensen_shannon", "shape_mismatch", "shape_of", "shared_reading",
            "team_deltas"]
