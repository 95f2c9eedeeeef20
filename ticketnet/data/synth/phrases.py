"""The generator's phrase tables, read from the TOML files in `phrasebook/` and checked against their schema on load."""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from types import MappingProxyType

from ticketnet.data.synth.teams import TEAMS

# The placeholders a template may name: the slots the generator fills ({order}, {amount}, ...).
SLOTS = frozenset({"order", "ref", "amount", "amount2", "date", "days", "card", "paymethod", "courier", "code", "email",
                   "colour", "size", "wearable", "model", "part", "seeds", "gear", "name", "surname", "town", "street",
                   "house", "tracking", "serial", "phone", "tool", "kit", "product", "product2"})
# The kinds of sub-intent parts: the first four are put into frames, "direct" sentences bring their own marks.
KINDS = ("you", "me", "ask", "state", "direct")
FRAME_KINDS = KINDS[:-1]
# The shipped phrasebook: shared.toml and one <team>.toml per team, installed with the package.
PHRASEBOOK = resources.files("ticketnet.data.synth") / "phrasebook"
_PLACEHOLDER = re.compile(r"\{(\w*)\}")
_NAME = re.compile(r"[a-z_]+")


class PhrasebookError(ValueError):
    """A phrasebook file that does not match its schema: every problem, each naming the file and the key."""


# ---------------------------------------------------------------------------------------------------
# Rules: each reads one TOML value, reports what is wrong with it, and returns it immutable (tuples, read-only maps).
# ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Strings:
    """A non-empty list of strings. `evidence`: whether [brackets] must ("required") or must not ("forbidden") mark
    evidence; `placeholders`: the {names} allowed; `empty`: "" allowed (a lead that adds nothing, drawn by weight);
    `frame`: a frame holding its part as exactly one of '@' (as written) and '^' (capitalised)."""
    evidence: str = "forbidden"
    placeholders: frozenset[str] = SLOTS
    empty: bool = False
    frame: bool = False

    def read(self, value: object, where: str, problems: list[str]) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            problems.append(f"{where}: a non-empty list of strings, not {value!r}")
            return ()
        for i, s in enumerate(value):
            self.check(s, f"{where}[{i}]", problems)
        return tuple(value)

    def check(self, s: object, where: str, problems: list[str]) -> None:
        if not isinstance(s, str) or not (s.strip() or (self.empty and s == "")):
            problems.append(f"{where}: not a non-empty string: {s!r}")
            return
        for name in _PLACEHOLDER.findall(s):
            if name not in self.placeholders:
                problems.append(f"{where}: unknown slot {{{name}}} in {s!r}")
        if s.count("{") != s.count("}"):
            problems.append(f"{where}: unbalanced braces in {s!r}")
        if s.count("[") != s.count("]") or re.search(r"\[[^\]]*\[", s):
            problems.append(f"{where}: unbalanced [evidence] marks in {s!r}")
        if self.evidence == "required" and "[" not in s:
            problems.append(f"{where}: no [evidence] marked in {s!r}")
        if self.evidence == "forbidden" and "[" in s:
            problems.append(f"{where}: [brackets] are only for evidence in requests: {s!r}")
        if self.frame and ("@" in s) == ("^" in s):
            problems.append(f"{where}: a frame holds its part as exactly one of '@' and '^': {s!r}")


@dataclass(frozen=True)
class Section:
    """A table with these keys (called `noun`s in messages), each read by its rule; `optional`: keys may be left
    out, as long as one is given."""
    fields: Mapping[str, Rule]
    optional: bool = False
    noun: str = "key"

    def read(self, value: object, where: str, problems: list[str]) -> Mapping[str, object]:
        if not isinstance(value, dict):
            problems.append(f"{where or 'the file'}: a table, not {value!r}")
            return MappingProxyType({})
        prefix = f"{where}." if where else ""
        for key in value:
            if key not in self.fields:
                problems.append(f"{where or 'the file'}: unknown {self.noun} {key!r} "
                                f"(expected {', '.join(self.fields)})")
        missing = [key for key in self.fields if key not in value]
        if missing and not self.optional or len(missing) == len(self.fields):
            problems.append(f"{where or 'the file'}: missing {', '.join(missing)}")
        return MappingProxyType({key: self.fields[key].read(item, prefix + key, problems)
                                 for key, item in value.items() if key in self.fields})


@dataclass(frozen=True)
class Named:
    """A non-empty table of names (lower case and underscores, or any word with `words`) to values of one rule."""
    item: Rule
    words: bool = False

    def read(self, value: object, where: str, problems: list[str]) -> Mapping[str, object]:
        if not isinstance(value, dict) or not value:
            problems.append(f"{where}: a non-empty table, not {value!r}")
            return MappingProxyType({})
        for key in value:
            if not (key.strip() if self.words else _NAME.fullmatch(key)):
                problems.append(f"{where}: bad name {key!r}")
        return MappingProxyType({key: self.item.read(item, f"{where}.{key}", problems) for key, item in value.items()})


@dataclass(frozen=True)
class Weights:
    """A table of these keys to positive integers, read as ((key, weight), ...) in the file's order."""
    keys: tuple[str, ...]

    def read(self, value: object, where: str, problems: list[str]) -> tuple[tuple[str, int], ...]:
        if not isinstance(value, dict) or set(value) != set(self.keys):
            problems.append(f"{where}: a table of exactly {', '.join(self.keys)}, not {value!r}")
            return ()
        for key, weight in value.items():
            if not isinstance(weight, int) or isinstance(weight, bool) or weight < 1:
                problems.append(f"{where}.{key}: a positive integer, not {weight!r}")
        return tuple(value.items())


@dataclass(frozen=True)
class Rows:
    """A non-empty list of records with these fields (inline tables, or arrays in field order with `arrays`), each
    read by its rule for one string; "team" fields must name different teams. Read as a tuple of tuples."""
    fields: Mapping[str, Strings | str]
    arrays: bool = False

    def read(self, value: object, where: str, problems: list[str]) -> tuple[tuple[str, ...], ...]:
        if not isinstance(value, list) or not value:
            problems.append(f"{where}: a non-empty list, not {value!r}")
            return ()
        rows = []
        for i, record in enumerate(value):
            at = f"{where}[{i}]"
            if self.arrays and isinstance(record, list) and len(record) == len(self.fields):
                record = dict(zip(self.fields, record))
            if not isinstance(record, dict) or set(record) != set(self.fields):
                problems.append(f"{at}: {'an array' if self.arrays else 'a table'} of {', '.join(self.fields)}, "
                                f"not {record!r}")
                continue
            for key, rule in self.fields.items():
                if rule == "team":
                    if record[key] not in TEAMS:
                        problems.append(f"{at}.{key}: not a team: {record[key]!r} (teams: {', '.join(TEAMS)})")
                else:
                    rule.check(record[key], f"{at}.{key}", problems)
            teams = [record[key] for key, rule in self.fields.items()
                     if rule == "team" and isinstance(record[key], str)]
            if len(set(teams)) != len(teams):
                problems.append(f"{at}: the same team twice: {record!r}")
            rows.append(tuple(record[key] for key in self.fields))
        return tuple(rows)


Rule = Strings | Section | Named | Weights | Rows

# ---------------------------------------------------------------------------------------------------
# The schema of the two kinds of file: shared.toml (what every team shares) and <team>.toml (one per team).
# ---------------------------------------------------------------------------------------------------

_TEXT = Strings()
_WORDS = Strings(placeholders=frozenset())
_LEADS = Strings(placeholders=frozenset(), empty=True)
_SET_ASIDE = Strings(placeholders=SLOTS | {"t"})
SHARED = Section({
    "ambiguous": Rows({"convention": "team", "other": "team", "template": Strings("required")}),
    "slots": Section({name: _WORDS for name in (
        "powered", "kits", "other_goods", "seeds", "wearables", "sizes", "parts", "models", "colours", "cards",
        "pay_methods", "couriers", "codes", "first_names", "surnames", "towns", "streets", "mail_domains", "months",
        "weekdays", "spans", "relative_dates")}),
    "frames": Section({kind: Strings(placeholders=frozenset(), frame=True) for kind in FRAME_KINDS}),
    "frame_kind_weights": Weights(KINDS),
    "wrapping": Section({"greetings": _WORDS, "fillers": _TEXT, "order_refs": _TEXT, "closings": _WORDS,
                         "signoffs": _TEXT, "short_tails": _LEADS}),
    "leads": Section({**{name: _LEADS for name in (
        "follow_up_leads", "aside_leads", "later_aside_leads", "main_leads", "main_leads_after", "minor_leads_after",
        "minor_leads_before")}, "paired_leads": Rows({"main": _LEADS, "minor": _LEADS}, arrays=True),
        "minor_tails": _LEADS}),
    "set_aside": Section({
        "neg_before": _SET_ASIDE, "neg_after": _SET_ASIDE, "neg_join": _SET_ASIDE, "neg_joiners": _LEADS,
        "content_frames": _SET_ASIDE, "team_word_frames": Strings(placeholders=frozenset({"w"})),
        "pair_frames": Strings(placeholders=SLOTS | {"t", "t2"}),
        "pair_want_frames": Strings(placeholders=frozenset({"w", "w2"})),
        "neg_want_noun_frames": Strings(placeholders=frozenset({"w"})),
        "neg_want_verb_frames": Strings(placeholders=frozenset({"w"}))}),
    "noise": Section({"droppable": _WORDS, "bent": Named(_WORDS, words=True), "texting": Named(_WORDS, words=True)}),
    "settled": Section({
        "settled_thanks_frames": Strings(placeholders=SLOTS | {"a"}),
        "settled_done_frames": Strings(placeholders=SLOTS | {"s"}),
        **{name: _LEADS for name in ("settled_turns", "settled_afterthoughts", "burst_greetings", "burst_thanks",
                                     "burst_turns")}}),
})
# Sections of shared.toml that only group tables: their keys name the tables ("slots.powered" is POWERED).
_GROUPS = ("slots", "wrapping", "leads", "set_aside", "noise", "settled")

TEAM = Section({
    "short": Strings("required"), "details": _TEXT, "asides": _TEXT, "topics": _TEXT, "team_words": _WORDS,
    "neg_want_nouns": _TEXT, "neg_want_verbs": _TEXT,
    "negations": Section({"before": _TEXT, "after": _TEXT, "join": _TEXT}),
    "intents": Named(Strings("required")),
    "settled": Section({"thanks": _TEXT, "done": _TEXT}),
    "subintents": Named(Section({kind: _TEXT for kind in FRAME_KINDS} | {"direct": Strings("required")},
                                optional=True, noun="kind")),
})


# ---------------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------------

def _read(folder: Traversable, name: str, problems: list[str]) -> Mapping[str, object]:
    schema = SHARED if name == "shared.toml" else TEAM
    try:
        document = tomllib.loads(folder.joinpath(name).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        problems.append(f"{name}: {error}")
        return MappingProxyType({})
    found: list[str] = []
    tables = schema.read(document, "", found)
    problems += [f"{name}: {p}" for p in found]
    return tables


def problems(folder: Traversable, name: str) -> list[str]:
    """What is wrong with one file of the phrasebook in `folder` (shared.toml or <team>.toml), as readable lines
    "<file>: <key>: <what is wrong>" (empty: all fine)."""
    found: list[str] = []
    _read(folder, name, found)
    return found


def load(folder: Traversable) -> Mapping[str, object]:
    """Every phrase table of the files in `folder` (shared.toml and one <team>.toml per team), by the name the
    generator imports (POWERED, FRAMES, INTENTS, ...); team tables are tuples of (team, ...) rows in TEAMS order.
    Raises PhrasebookError listing every problem, one a line as "<file>: <key>: <what is wrong>", the first on the
    first line (the one line the command line prints)."""
    found: list[str] = []
    shared = _read(folder, "shared.toml", found)
    teams = {team: _read(folder, f"{team}.toml", found) for team in TEAMS}
    owner: dict[str, str] = {}
    for team, book in teams.items():
        for name in book.get("subintents", {}):
            if name in owner:
                found.append(f"{team}.toml: subintents.{name}: already a sub-intent of {owner[name]}")
            owner.setdefault(name, team)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise PhrasebookError("\n".join([f"phrasebook {found[0]}{more}", *found[1:]]))
    out: dict[str, object] = {}
    for key, value in shared.items():
        out |= {name.upper(): table for name, table in value.items()} if key in _GROUPS else {key.upper(): value}
    out["INTENTS"] = tuple((team, name, templates) for team, t in teams.items()
                           for name, templates in t["intents"].items())
    out["SUBINTENTS"] = tuple((team, name, parts) for team, t in teams.items()
                              for name, parts in t["subintents"].items())
    for key in ("short", "details", "asides", "topics", "team_words"):
        out[key.upper()] = tuple((team, t[key]) for team, t in teams.items())
    out["NEGATIONS"] = tuple((team, *(t["negations"][key] for key in ("before", "after", "join")))
                             for team, t in teams.items())
    out["NEG_WANTS"] = tuple((team, t["neg_want_nouns"], t["neg_want_verbs"]) for team, t in teams.items())
    out["SETTLED"] = tuple((team, t["settled"]["thanks"], t["settled"]["done"]) for team, t in teams.items())
    return MappingProxyType(out)


@functools.cache
def tables() -> Mapping[str, object]:
    """The shipped phrasebook's tables (read and checked once per process)."""
    return load(PHRASEBOOK)


def __getattr__(name: str) -> object:
    # The tables as module attributes (`from ticketnet.data.synth.phrases import FRAMES`), read on first use.
    if not name.startswith("__") and name in tables():
        return tables()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *tables()})
