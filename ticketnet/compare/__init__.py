"""Two routers compared on the same tickets: metrics with paired intervals, McNemar's test, flips, and corpus scans."""

from ticketnet.compare.summary import compare_tables, flip_table

__all__ = ["compare_tables", "flip_table"]

# -- for the Compare page: per head and per token (heads.py), per-team differences (deltas.py) -----------------------
from ticketnet.compare.heads import (  # noqa: E402
    DeletionAgreement, SharedReading, attention_divergence, check_same_shape, deletion_agreement, head_changes,
    head_importance_on, jensen_shannon, shape_mismatch, shape_of, shared_reading,
)

from ticketnet.compare.deltas import team_deltas  # noqa: E402

__all__ += ["team_deltas", "DeletionAgreement", "SharedReading", "attention_divergence", "check_same_shape", "deletion_agreement",
            "head_changes", "head_importance_on", "jensen_shannon", "shape_mismatch", "shape_of", "shared_reading"]
