"""Open any router by its weights file: the Tiny router's router.pt or an encoder router's encoder.safetensors."""

from __future__ import annotations

from pathlib import Path

from ticketnet.card import RouterCard, load_card
from ticketnet.catalog import CLASSIFIER_WEIGHTS, is_encoder
from ticketnet.interface import TicketRouter


def load_router(weights: str | Path) -> TicketRouter:
    """A Router or an EncoderRouter, by the kind of its weights file; raises WeightsError."""
    weights = Path(weights)
    if is_encoder(weights):
        from ticketnet.encoder.router import EncoderRouter

        return EncoderRouter.load(weights.parent)
    from ticketnet.router import Router

    return Router.load(weights)


def load_any_card(weights: str | Path) -> RouterCard:
    """The router's card without its weights (an encoder router's tokenizer and router.json); raises WeightsError."""
    weights = Path(weights)
    if weights.name == CLASSIFIER_WEIGHTS:
        from ticketnet.encoder.card import load_classifier_card

        return load_classifier_card(weights.parent)
    if is_encoder(weights):
        from ticketnet.encoder.card import load_encoder_card

        return load_encoder_card(weights.parent)
    return load_card(weights)

