"""Two routers side by side: their figures on one split, their flips, and how their heads and deletions differ."""

# -- per head and per token (heads.py) --------------------------------------------------------------------------------
from ticketnet.compare.heads import (  # noqa: F401
    DeletionAgreement, SharedReading, attention_divergence, check_same_shape, deletion_agreement, head_changes,
    head_importance_on, jensen_shannon, shape_of, shared_reading,
)
