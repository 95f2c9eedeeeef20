"""`python -m ticketnet.data.synth.phrasebook.check [team]`: every phrasebook entry uses known slots and balanced marks."""

from __future__ import annotations

import re
import sys

from ticketnet.data.synth import phrasebook

SLOTS = {"order", "ref", "amount", "amount2", "date", "days", "card", "paymethod", "courier", "code", "email", "colour",
         "size", "wearable", "model", "part", "seeds", "gear", "name", "surname", "town", "street", "house", "tracking",
         "serial", "phone", "tool", "kit", "product", "product2"}
_SLOT = re.compile(r"\{(\w*)\}")


def problems(team: str) -> list[str]:
    """What is wrong with one team module's entries, as readable lines (empty: all fine)."""
    m = phrasebook._module(team)
    out = []

    def text(where: str, s: str, evidence: str) -> None:
        if not isinstance(s, str) or not s.strip():
            out.append(f"{where}: not a non-empty string: {s!r}")
            return
        for name in _SLOT.findall(s):
            if name not in SLOTS:
                out.append(f"{where}: unknown slot {{{name}}} in {s!r}")
        if s.count("{") != s.count("}"):
            out.append(f"{where}: unbalanced braces in {s!r}")
        opened = re.findall(r"\[", s)
        if len(opened) != s.count("]") or re.search(r"\[[^\]]*\[", s):
            out.append(f"{where}: unbalanced [evidence] marks in {s!r}")
        if evidence == "required" and not opened:
            out.append(f"{where}: no [evidence] marked in {s!r}")
        if evidence == "forbidden" and opened:
            out.append(f"{where}: [brackets] are only for evidence in requests: {s!r}")

    for name, parts in getattr(m, "SUBINTENTS", ()):
        if not re.fullmatch(r"[a-z_]+", name):
            out.append(f"SUBINTENTS: bad name {name!r}")
        for kind, items in parts.items():
            if kind not in phrasebook.KINDS:
                out.append(f"SUBINTENTS {name}: unknown kind {kind!r}")
                continue
            if isinstance(items, str):
                out.append(f"SUBINTENTS {name}.{kind}: a tuple of strings, not one string (missing comma?)")
                continue
            for s in items:
                text(f"SUBINTENTS {name}.{kind}", s, "required" if kind == "direct" else "forbidden")
    for attribute, evidence in (("SHORT", "required"), ("ASIDES", "forbidden"), ("TOPICS", "forbidden"),
                                ("NEG_WANT_NOUNS", "forbidden"), ("NEG_WANT_VERBS", "forbidden"),
                                ("DETAILS", "forbidden")):
        items = getattr(m, attribute, ())
        if isinstance(items, str):
            out.append(f"{attribute}: a tuple of strings, not one string (missing comma?)")
            continue
        for s in items:
            text(attribute, s, evidence)
    return out


def main(argv: list[str] | None = None) -> int:
    teams = (argv if argv is not None else sys.argv[1:]) or list(phrasebook.TEAM_MODULES)
    bad = [f"{t}: {p}" for t in teams for p in problems(t)]
    print("\n".join(bad) if bad else f"phrasebook OK: {', '.join(teams)}")
    if not bad:
        from ticketnet.data.synth.generator import generate

        rows = generate(sizes=(3000, 100, 100))["train"]
        print(f"generated {len(rows)} tickets without error")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
