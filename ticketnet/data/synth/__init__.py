"""The deterministic generator of Larkfield's ticket splits (`generator`) and its phrase tables (`phrases`, in TOML)."""

from ticketnet.data.synth.generator import (
    COLUMNS, DEFAULT_SIZES, FIXED_ID, FIXED_ROW, MAX_TOKENS, PATTERNS, SPLITS, generate, main, to_csv, write_splits,
)
from ticketnet.data.synth.teams import TEAMS
from ticketnet.data.synth.phrases import AMBIGUOUS, FRAMES, INTENTS, SHORT, SUBINTENTS, TOPICS

__all__ = ["AMBIGUOUS", "COLUMNS", "DEFAULT_SIZES", "FIXED_ID", "FIXED_ROW", "FRAMES", "INTENTS", "MAX_TOKENS",
           "PATTERNS", "SHORT", "SPLITS", "SUBINTENTS", "TEAMS", "TOPICS", "generate", "main", "to_csv", "write_splits"]
