"""interpret_ticket in worker processes gives the in-process result, on the router whose files it was given."""

from __future__ import annotations

import pytest
import torch

from ticketnet.interpret.workers import InterpretPool


def test_a_worker_interprets_as_the_server_would(artifacts):
    from ticketnet.interpret import interpret_ticket
    from ticketnet.predictions import weights_files
    from ticketnet.router import Router

    weights = str(artifacts.weights)
    stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in weights_files(artifacts.weights))
    text = "My card was charged twice for the leaf blower, but the parcel never came. Please refund one payment."
    here = interpret_ticket(Router.load(weights), text, target=1)
    pool = InterpretPool(1)
    try:
        assert all(f.result(timeout=120) for f in pool.warm(weights, stamp))
        there = pool.submit(weights, stamp, text, target=1).result(timeout=120)
        again = pool.submit(weights, stamp, text, target=2).result(timeout=120)   # from the worker's memo
    finally:
        pool.shutdown()
    assert there.tokens == here.tokens and there.target == 1 and again.target == 2
    for name, s in here.signals.items():
        assert torch.allclose(there.signals[name], s, atol=1e-5), name
    cols = ["comprehensiveness", "sufficiency"]
    assert (there.aopc[cols] - here.aopc[cols]).abs().max().max() <= 1e-5
    assert again.probs.tolist() == pytest.approx(there.probs.tolist(), abs=1e-6)


def test_a_pool_needs_a_worker():
    with pytest.raises(ValueError, match="at least 1"):
        InterpretPool(0)
