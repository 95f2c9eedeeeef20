"""More phrase material per team (one module each), merged into the generator's tables by `ticketnet.data.synth.phrases`."""

# Each team module may define, all optional:
#   SUBINTENTS      ((name, {kind: parts}), ...): a name already in phrases.SUBINTENTS adds parts to it, a new name
#                   adds a sub-intent; kinds are "you", "me", "ask", "state", "direct" (see phrases.py)
#   SHORT           terse tickets with their [evidence] marked
#   ASIDES          the team's topic mentioned in passing, no request (the minor topic of two-topic tickets)
#   TOPICS          noun phrases naming the team's territory (to set it aside: "it's not about ...")
#   NEG_WANT_NOUNS, NEG_WANT_VERBS   what a customer says they do not want from the team
#   DETAILS         context after a request that leans towards the team, no evidence

from __future__ import annotations

import importlib
from types import ModuleType

TEAM_MODULES = ("payments", "delivery", "returns", "product", "account")
KINDS = ("you", "me", "ask", "state", "direct")


def _module(team: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{team}")


def extend_subintents(base: tuple) -> tuple:
    """`base` ((team, name, parts), ...) with every team module's SUBINTENTS merged in, by name."""
    merged = {(team, name): {k: tuple(v) for k, v in parts.items()} for team, name, parts in base}
    for team in TEAM_MODULES:
        for name, parts in getattr(_module(team), "SUBINTENTS", ()):
            unknown = set(parts) - set(KINDS)
            if unknown:
                raise ValueError(f"phrasebook.{team}: sub-intent {name!r} has unknown kinds {sorted(unknown)}")
            have = merged.setdefault((team, name), {})
            for kind, items in parts.items():
                have[kind] = tuple(dict.fromkeys(have.get(kind, ()) + tuple(items)))
    return tuple((team, name, parts) for (team, name), parts in merged.items())


def extend_table(base: tuple, attribute: str) -> tuple:
    """`base` ((team, items), ...) with each team module's `attribute` added to its team's items (duplicates dropped)."""
    rows = dict(base)
    for team in TEAM_MODULES:
        rows[team] = tuple(dict.fromkeys(tuple(rows.get(team, ())) + tuple(getattr(_module(team), attribute, ()))))
    return tuple(rows.items())


def extend_wants(base: tuple) -> tuple:
    """NEG_WANTS ((team, nouns, verbs), ...) with each module's NEG_WANT_NOUNS and NEG_WANT_VERBS added."""
    out = []
    for team, nouns, verbs in base:
        m = _module(team)
        out.append((team, tuple(dict.fromkeys(nouns + tuple(getattr(m, "NEG_WANT_NOUNS", ())))),
                    tuple(dict.fromkeys(verbs + tuple(getattr(m, "NEG_WANT_VERBS", ()))))))
    return tuple(out)
