"""One ticket through the shared router, cached per text and weights: its inspection and its interpretation."""

from __future__ import annotations

import copy
from dataclasses import replace

from dashboard.data.model import cached_on_weights, router


@cached_on_weights(show_spinner="Running the ticket through the from-scratch attention…", max_entries=256)
def inspection(text: str):
    """ticketnet.inspect_ticket for this text, computed once per text (block/query changes reuse it)."""
    from ticketnet.lens.inspection import inspect_ticket

    return inspect_ticket(router(), text)


@cached_on_weights(show_spinner="Measuring what each token does (removal, <unk>, gradients, ERASER)…", max_entries=128)
def interpretation(text: str, target: int | None = None, evidence: str = ""):
    """ticketnet.interpret.interpret_ticket, once per (text, target, evidence)."""
    from ticketnet.interpret import interpret_ticket

    r = router()
    # Captum's gradient attributions register forward hooks on the model's embedding layer while they run, and a
    # hook on the shared model would fire inside other sessions' forward passes ("size of tensor a (28) must match
    # the size of tensor b (41)"). They get a private copy of the model (about 8 ms).
    return interpret_ticket(replace(r, model=copy.deepcopy(r.model)), text, target=target, evidence=evidence or "",
                            inspection=inspection(text))
