"""ticketnet: Larkfield's tiny transformer ticket router, its from-scratch attention, and tools to inspect it."""

from ticketnet.attention import MultiHead, attention, causal_mask, padding_mask
from ticketnet.data import TEAMS, WEIGHTS, DataError, data_dir, load_split
from ticketnet.lens import Inspection, inspect_ticket, run_with_cache
from ticketnet.model import TinyConfig, TinyTransformer, pad_batch
from ticketnet.router import Router, WeightsError
from ticketnet.text import Vocab, tokenize

__all__ = [
    "TEAMS", "WEIGHTS", "DataError", "Inspection", "MultiHead", "Router", "TinyConfig", "TinyTransformer",
    "Vocab", "WeightsError", "attention", "causal_mask", "data_dir", "inspect_ticket", "load_split",
    "pad_batch", "padding_mask", "run_with_cache", "tokenize",
]
