"""Gradient attributions of p(target) at the token embeddings, through Captum."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor, nn

from ticketnet.interpret.methods.counterfactual import check_eval, check_ticket


def _token_vectors(model: nn.Module, ids: Tensor) -> tuple[Tensor, Tensor]:
    """The ticket's token vectors and the baseline's, <pad> (id 0) at every position: 2 × (1, n, d)."""
    if not isinstance(getattr(model, "embed", None), nn.Embedding):
        raise ValueError("gradient attributions need a model with an nn.Embedding called `embed`")
    for name in ("add_positions", "forward_embeddings"):
        if not callable(getattr(model, name, None)):
            raise ValueError(f"gradient attributions need a model with a `{name}` method (as TinyTransformer has)")
    with torch.no_grad():
        return model.embed(ids[None]), model.embed(torch.zeros_like(ids)[None])


def _probability_of_token_vectors(model: nn.Module) -> Callable[[Tensor], Tensor]:
    # The attributions are taken at the token vectors, the input of `forward_embeddings` less the position vectors,
    # rather than by hooking the embedding layer (Captum's layer methods): a hook on a model that other sessions
    # share would fire inside their forward passes. Padding is pinned to "none": the baseline is a full row of
    # <pad> vectors, which the model would otherwise refuse as an all-padding ticket.
    def forward(tokens: Tensor) -> Tensor:                               # (B, n, d) -> (B, n_classes)
        is_pad = torch.zeros(tokens.shape[:2], dtype=torch.bool, device=tokens.device)
        return torch.softmax(model.forward_embeddings(model.add_positions(tokens), is_pad), dim=-1)
    return forward


class IntegratedGradients(NamedTuple):
    """Integrated gradients of one ticket with their own error, so a page can show how far to trust them."""

    attributions: Tensor    # (n,) per token, in probability units like removal
    delta: float            # Σ attributions − change: the completeness gap (Captum's convergence delta)
    steps: int              # points on the path the quadrature used
    change: float           # p(target | ticket) − p(target | all-<pad>), what the attributions must add up to

    @property
    def relative_gap(self) -> float:
        """|delta| / |change|: the share of the change the attributions miss (inf when nothing changes)."""
        return abs(self.delta) / abs(self.change) if self.change else (0.0 if self.delta == 0 else math.inf)


STEP_TOKENS = 32_768   # path points × tokens per forward pass: bounds memory on long tickets (n = 256: 128 points)
START_STEPS = 32       # path points integrated gradients try first (see `integrated_gradients`)


def integrated_gradients(model: nn.Module, ids: Tensor, target: int, steps: int = START_STEPS, rtol: float = 0.01,
                         atol: float = 1e-6, max_steps: int = 1024) -> IntegratedGradients:
    """Integrated gradients of p(target) for one ticket `ids` (n,), refined until they add up.

    Captum's IntegratedGradients on the token vectors, from the <pad> vector (id 0, zero) at every position to
    the real tokens, position vectors unchanged; summed over d. The attributions add up to
    p(target | ticket) − p(target | all-<pad>) up to a quadrature error; the step count starts at `steps`
    and doubles until |error| ≤ max(rtol·|change|, atol) or `max_steps` is reached. `START_STEPS` is enough for
    nearly every ticket, and far fewer steps miss much of the change (docs/performance.md, "One ticket: inspection
    and interpretation").
    """
    check_eval(model)
    with torch.inference_mode(False), torch.enable_grad():
        x, baseline = _token_vectors(model, check_ticket(ids).clone())   # normal tensors even in inference mode
        return refined_integrated_gradients(_probability_of_token_vectors(model), x, baseline, target, steps, rtol,
                                            atol, max_steps)


def refined_integrated_gradients(forward: Callable[[Tensor], Tensor], x: Tensor, baseline: Tensor, target: int,
                                 steps: int, rtol: float, atol: float, max_steps: int) -> IntegratedGradients:
    """Captum's IntegratedGradients of `forward` (B, n, e) -> (B, C) from `baseline` to `x` (1, n, e), summed over e,
    with the step count doubled from `steps` until the completeness gap is within max(rtol·|change|, atol)."""
    from captum.attr import IntegratedGradients as CaptumIntegratedGradients

    if steps < 2 or max_steps < steps:
        raise ValueError(f"integrated gradients needs 2 ≤ steps ≤ max_steps along the path, got {steps} and {max_steps}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"tolerances must be non-negative, got rtol={rtol} and atol={atol}")
    ig = CaptumIntegratedGradients(forward)
    while True:
        attr, delta = ig.attribute(x, baselines=baseline, target=target, n_steps=steps,
                                   internal_batch_size=max(1, min(steps, STEP_TOKENS // x.shape[1])),
                                   return_convergence_delta=True)
        attr, delta = attr[0].sum(-1).detach(), float(delta.reshape(-1)[0])
        change = float(attr.double().sum()) - delta
        if abs(delta) <= max(rtol * abs(change), atol) or steps >= max_steps:
            return IntegratedGradients(attr, delta, steps, change)
        steps = min(2 * steps, max_steps)


def gradient_x_input(model: nn.Module, ids: Tensor, target: int) -> Tensor:
    """Gradient × input of p(target) at the token embeddings for one ticket `ids` (n,) -> (n,), summed over d."""
    from captum.attr import InputXGradient

    check_eval(model)
    with torch.inference_mode(False), torch.enable_grad():
        x, _ = _token_vectors(model, check_ticket(ids).clone())
        attr = InputXGradient(_probability_of_token_vectors(model)).attribute(x.requires_grad_(), target=target)
    return attr[0].sum(-1).detach()
