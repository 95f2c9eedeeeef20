"""ticketnet: Larkfield's tiny transformer ticket router, its from-scratch attention, and tools to inspect it."""

from ticketnet.data.text import Vocab, tokenize
from ticketnet.data.tickets import TEAMS, DataError, load_split
from ticketnet.nn.attention import MultiHead, attention, causal_mask, padding_mask
from ticketnet.nn.lens import Inspection, act_name, inspect_ticket, run_with_cache
from ticketnet.nn.transformer import TinyConfig, TinyTransformer, pad_batch
from ticketnet.paths import WEIGHTS, data_dir
from ticketnet.router import Router, WeightsError

# The interpretation pulls in scipy, pandas and Captum; it is imported on first use, so `import ticketnet` (and the
# dashboard's first page) stays quick.
_LAZY = {"interpret_ticket": "ticketnet.interpret.ticket", "interpret_split": "ticketnet.interpret.split"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ticketnet' has no attribute {name!r}")


__all__ = [
    "TEAMS", "WEIGHTS", "DataError", "Inspection", "MultiHead", "Router", "TinyConfig", "TinyTransformer",
    "Vocab", "WeightsError", "act_name", "attention", "causal_mask", "data_dir", "inspect_ticket",
    "interpret_split", "interpret_ticket", "load_split", "pad_batch", "padding_mask", "run_with_cache", "tokenize",
]
