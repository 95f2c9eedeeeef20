"""Slot values ({order}, {amount}, ...), one per slot and ticket, and templates filled and split at [evidence]."""

from __future__ import annotations

import random
import re

from ticketnet.data.synth.phrases import (
    CARDS, CODES, COLOURS, COURIERS, FIRST_NAMES, KITS, MAIL_DOMAINS, MODELS, MONTHS, OTHER_GOODS, PARTS, PAY_METHODS,
    POWERED, RELATIVE_DATES, SEEDS, SIZES, SPANS, STREETS, SURNAMES, TOWNS, WEARABLES, WEEKDAYS,
)

_SLOT = re.compile(r"\{(\w+)\}")

# A filled template: its (text, is_evidence) segments.
Segments = list[tuple[str, bool]]


def _pick_product(rng: random.Random) -> str:
    pool = rng.choices((POWERED, KITS, OTHER_GOODS), weights=(5, 3, 2))[0]
    return rng.choice(pool)


def _order_ref(rng: random.Random) -> str:
    style = rng.randrange(4)
    if style == 0:
        return f"#LF-{rng.randint(100000, 999999)}"
    if style == 1:
        return f"LF-{rng.randint(100000, 999999)}"
    if style == 2:
        return str(rng.randint(10000, 99999))
    return f"#{rng.randint(10000, 99999)}"


def _amount(rng: random.Random) -> str:
    pounds = rng.choice((rng.randint(3, 60), rng.randint(20, 400), rng.randint(100, 1200)))
    pence = rng.choice(("99", "00", "49", "50", "95", f"{rng.randint(0, 99):02d}"))
    style = rng.randrange(5)
    if style == 0:
        return f"{pounds}.{pence} GBP"
    if style == 1 and pence == "00":
        return f"£{pounds}"
    return f"£{pounds}.{pence}"


def _date(rng: random.Random) -> str:
    style = rng.randrange(7)
    if style == 0:
        return f"on {rng.randint(1, 28)} {rng.choice(MONTHS)}"
    if style == 1:
        return f"on {rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}"
    if style == 2:
        return f"last {rng.choice(WEEKDAYS)}"
    if style == 3:
        return f"on {rng.choice(WEEKDAYS)}"
    return rng.choice(RELATIVE_DATES)


def _email(rng: random.Random) -> str:
    name = rng.choice(FIRST_NAMES).lower()
    return f"{name}{rng.choice(('', '.', '_'))}{rng.choice(SURNAMES).lower().replace(chr(39), '')}" \
           f"{rng.choice(('', str(rng.randint(1, 99))))}@{rng.choice(MAIL_DOMAINS)}"


def _new_slot(name: str, ctx: dict[str, str], rng: random.Random) -> str:
    """A fresh value for slot `name`; products stay consistent within one ticket."""
    if name in ("tool", "kit"):
        pool = POWERED if name == "tool" else KITS
        product = ctx.get("product")
        value = product if product in pool else rng.choice(pool)
        ctx.setdefault("product", value)
        return value
    if name == "product":
        return ctx.get("tool") or ctx.get("kit") or _pick_product(rng)
    if name == "product2":
        return rng.choice([p for p in POWERED + KITS + OTHER_GOODS if p != ctx.get("product")])
    if name == "amount2":
        value = _amount(rng)
        while value == ctx.get("amount"):
            value = _amount(rng)
        return value
    simple = {
        "order": lambda: f"order {_order_ref(rng)}", "ref": lambda: _order_ref(rng), "amount": lambda: _amount(rng),
        "date": lambda: _date(rng), "days": lambda: rng.choice(SPANS), "card": lambda: rng.choice(CARDS),
        "paymethod": lambda: rng.choice(PAY_METHODS), "courier": lambda: rng.choice(COURIERS),
        "code": lambda: rng.choice(CODES), "email": lambda: _email(rng), "colour": lambda: rng.choice(COLOURS),
        "size": lambda: rng.choice(SIZES), "wearable": lambda: rng.choice(WEARABLES),
        "model": lambda: rng.choice(MODELS), "part": lambda: rng.choice(PARTS), "seeds": lambda: rng.choice(SEEDS),
        "gear": lambda: rng.choice(OTHER_GOODS[:4]), "name": lambda: rng.choice(FIRST_NAMES),
        "surname": lambda: rng.choice(SURNAMES), "town": lambda: rng.choice(TOWNS),
        "street": lambda: rng.choice(STREETS), "house": lambda: str(rng.randint(1, 140)),
        "tracking": lambda: f"JD{rng.randint(10**9, 10**10 - 1)}",
        "serial": lambda: f"LF{rng.randint(10**6, 10**7 - 1)}",
        "phone": lambda: rng.choice(("07", "+44 7", "07")) + f"{rng.randint(100, 999)} {rng.randint(100000, 999999)}",
    }
    return simple[name]()


def _slot(name: str, ctx: dict[str, str], rng: random.Random) -> str:
    # The same slot name means the same thing within a ticket ("the mower" stays the same mower).
    if name not in ctx:
        ctx[name] = _new_slot(name, ctx, rng)
    return ctx[name]


def fill(template: str, ctx: dict[str, str], rng: random.Random) -> Segments:
    """Fill the slots of `template` and split it into (text, is_evidence) segments at its [brackets]."""
    text = _SLOT.sub(lambda m: _slot(m.group(1), ctx, rng), template)
    segments: Segments = []
    for i, part in enumerate(re.split(r"[\[\]]", text)):
        if part:
            segments.append((part, i % 2 == 1))
    return segments
