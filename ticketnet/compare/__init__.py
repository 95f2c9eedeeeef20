"""Two routers compared on the same tickets: metrics with paired intervals, McNemar's test, flips, and corpus scans."""

from ticketnet.compare.summary import compare_tables, flip_table

__all__ = ["compare_tables", "flip_table"]

# -- per head and per token (heads.py): attention divergence, head importance, deletion agreement ----------------------
from ticketnet.compare.heads import (  # noqa: E402
    DeletionAgreement, SharedReading, attention_divergence, check_same_shape, deletion_agreement, head_changes,
    head_importance_on, jensen_shannon, shape_of, shared_reading,
)

__all__ += ["DeletionAgreement", "SharedReading", "attention_divergence", "check_same_shape", "deletion_agreement",
            "head_changes", "head_importance_on", "jensen_shannon", "shape_of", "shared_reading"]
