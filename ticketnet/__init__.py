"""ticketnet: Larkfield's tiny transformer ticket router, its from-scratch attention, and tools to inspect it."""

# Every name is imported on first use: `import ticketnet.paths` (or the card, the data, the metrics) must not import
# torch, so the dashboard's first page can draw from stored predictions while torch is still loading.
_LAZY = {
    "Vocab": "ticketnet.data.text", "tokenize": "ticketnet.data.text",
    "DataError": "ticketnet.data.tickets", "load_split": "ticketnet.data.tickets",
    "RouterCard": "ticketnet.card", "WeightsError": "ticketnet.card", "load_card": "ticketnet.card",
    "WEIGHTS": "ticketnet.paths", "data_dir": "ticketnet.paths",
    "MultiHead": "ticketnet.nn.attention", "attention": "ticketnet.nn.attention",
    "causal_mask": "ticketnet.nn.attention", "padding_mask": "ticketnet.nn.attention",
    "Inspection": "ticketnet.lens.inspection", "act_name": "ticketnet.lens.inspection", "inspect_ticket": "ticketnet.lens.inspection",
    "run_with_cache": "ticketnet.lens.inspection",
    "TinyConfig": "ticketnet.nn.transformer", "TinyTransformer": "ticketnet.nn.transformer",
    "pad_batch": "ticketnet.nn.transformer",
    "Router": "ticketnet.router",
    "interpret_ticket": "ticketnet.interpret.ticket", "interpret_split": "ticketnet.interpret.split",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ticketnet' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = list(_LAZY)
