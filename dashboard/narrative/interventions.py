"""The Heads and Interpretation pages' interventions in words: the disagreeing edges, and when a share means nothing."""

from __future__ import annotations

import pandas as pd

from dashboard.data.interventions import negligible_change
from dashboard.narrative import UNIT_NAMES, effect, fmt
from ticketnet.interpret import Knockout, edge_disagreements, support_title
from ticketnet.interpret.signals import NEGLIGIBLE_EFFECT

HIGH_SUPPORT_EDGE = "low weight, high support"


def edge_rows(ko: Knockout, tokens, unit: str, team: str | None = None, k: int = 3) -> pd.DataFrame:
    """The row's edges where weight and support disagree most (`edge_disagreements`) as a small table to show:
    which way they disagree, key position and token, weight, support (text, never "+0.00"), headed by
    `support_title`. A "high support" edge has a support of at least `signals.NEGLIGIBLE_EFFECT` in `unit` (however
    it ranks on the row): a row of negligible effects lists none (see `edge_note`)."""
    found = edge_disagreements(ko, tokens, unit, k)
    floor = NEGLIGIBLE_EFFECT[unit]
    rows = [(label, int(pos), tok, fmt(w), effect(d))
            for key, label in (("high_attention_low_effect", "high weight, low support"),
                               ("low_attention_high_effect", HIGH_SUPPORT_EDGE))
            for pos, tok, w, d in found[key] if label != HIGH_SUPPORT_EDGE or abs(float(d)) >= floor]
    return pd.DataFrame(rows, columns=["edge", "key", "token", "weight", support_title(unit, team)])


def edge_note(ko: Knockout, unit: str, team: str | None = None) -> str | None:
    """"No edge of this row has a support above X" when every edge's support is under the negligible effect of
    `unit` (what `edge_rows` then lists no high-support edge for), else None."""
    floor = NEGLIGIBLE_EFFECT[unit]
    largest = float(ko.support[unit].abs().max()) if ko.support[unit].numel() else 0.0
    if largest >= floor:
        return None
    return (f"No edge of this row has a {support_title(unit, team)} above {fmt(floor)} either way (the largest is "
            f"{fmt(largest)}): cutting any one of them changes next to nothing, so no edge is listed as "
            f"\"{HIGH_SUPPORT_EDGE}\".")


def share_note(change: float, unit: str, team: str, flips: bool) -> str | None:
    """A warning when the edit's change of the target's score is negligible (`negligible_change`): a share recovered
    is then a ratio of two numbers near 0, whatever it reads; None when the change is large enough."""
    if not negligible_change(change, unit):
        return None
    flip = "and the team flips" if flips else "and no team flips"
    return (f"The edit changes the {UNIT_NAMES[unit]} of {team} by only {fmt(change)} (under "
            f"{fmt(NEGLIGIBLE_EFFECT[unit])} either way) {flip}: the shares recovered below divide by that small "
            "change and are unreliable, however large they read.")
