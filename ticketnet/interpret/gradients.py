"""Gradient attributions of p(target) at the token embeddings, through Captum."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from ticketnet.interpret.counterfactual import check_eval, check_ticket


def _probability_of_ids(model: nn.Module) -> Callable[[Tensor], Tensor]:
    # Baselines are id 0, which the model would read as padding (and refuse as an all-padding row); every
    # row here is a full ticket, so padding is pinned to "none" and the <pad> vector acts as a zero input.
    def forward(ids: Tensor) -> Tensor:
        return torch.softmax(model(ids, torch.zeros_like(ids, dtype=torch.bool)), dim=-1)
    return forward


def _embedding_layer(model: nn.Module) -> nn.Module:
    if not isinstance(getattr(model, "embed", None), nn.Embedding):
        raise ValueError("gradient attributions need a model with an nn.Embedding called `embed`")
    return model.embed


def integrated_gradients(model: nn.Module, ids: Tensor, target: int, steps: int = 32) -> tuple[Tensor, float]:
    """Integrated gradients of p(target) for one ticket `ids` (n,) -> (attributions (n,), convergence delta).

    Captum's LayerIntegratedGradients on the token embeddings, from the <pad> vector (id 0, zero) at every
    position to the real tokens, position vectors unchanged; summed over d. Attributions add up to
    p(target | ticket) − p(target | all-<pad>) up to the returned delta, in probability units like removal.
    """
    from captum.attr import LayerIntegratedGradients

    check_eval(model)
    if steps < 2:
        raise ValueError(f"integrated gradients needs at least 2 steps along the path, got {steps}")
    with torch.inference_mode(False), torch.enable_grad():
        x = check_ticket(ids).clone()[None]                           # a normal tensor even if made in inference mode
        ig = LayerIntegratedGradients(_probability_of_ids(model), _embedding_layer(model))
        attr, delta = ig.attribute(x, baselines=torch.zeros_like(x), target=target, n_steps=steps,
                                   return_convergence_delta=True)
    return attr[0].sum(-1).detach(), float(delta.reshape(-1)[0])


def gradient_x_input(model: nn.Module, ids: Tensor, target: int) -> Tensor:
    """Gradient × input of p(target) at the token embeddings for one ticket `ids` (n,) -> (n,), summed over d."""
    from captum.attr import LayerGradientXActivation

    check_eval(model)
    with torch.inference_mode(False), torch.enable_grad():
        x = check_ticket(ids).clone()[None]
        gxa = LayerGradientXActivation(_probability_of_ids(model), _embedding_layer(model))
        attr = gxa.attribute(x, target=target)
    return attr[0].sum(-1).detach()
