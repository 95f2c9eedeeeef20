"""The phrasebook files: every entry well-formed, a bad file refused with its file and key named, and used."""

import random
import shutil
import tomllib
from collections import Counter
from fnmatch import fnmatch
from pathlib import Path
from types import MappingProxyType

import pytest

from ticketnet.data.synth import generator, phrases, slots
from ticketnet.data.synth.phrases import (
    MINOR_TAILS, PHRASEBOOK, SHORT, SLOTS, SUBINTENTS, PhrasebookError, load, problems,
)
from ticketnet.data.synth import TEAMS

ROOT = Path(__file__).resolve().parents[2]
FILES = ("shared.toml", *(f"{team}.toml" for team in TEAMS))


@pytest.fixture
def book(tmp_path) -> Path:
    """A copy of the shipped phrasebook to break."""
    for name in FILES:
        shutil.copyfile(PHRASEBOOK.joinpath(name), tmp_path / name)
    return tmp_path


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.mark.parametrize("name", FILES)
def test_every_phrasebook_entry_uses_known_slots_and_marks_evidence_where_it_must(name):
    assert problems(PHRASEBOOK, name) == []


def test_the_checker_reports_what_is_wrong(book):
    _append(book / "payments.toml", '\n[subintents.x]\nyou = ["pay {nope}"]\ndirect = ["no marks"]\nodd = []\n')
    text = (book / "payments.toml").read_text(encoding="utf-8")
    (book / "payments.toml").write_text(text.replace('short = [\n', 'short = [\n    "[unclosed",\n', 1)
                                        .replace("asides = [", 'asides = "one string"\nold_asides = [', 1),
                                        encoding="utf-8")
    found = "\n".join(problems(book, "payments.toml"))
    for expected in ("payments.toml: subintents.x.you[0]: unknown slot {nope}",
                     "payments.toml: subintents.x.direct[0]: no [evidence] marked",
                     "payments.toml: subintents.x: unknown kind 'odd'",
                     "payments.toml: short[0]: unbalanced [evidence]",
                     "payments.toml: asides: a non-empty list of strings",
                     "payments.toml: the file: unknown key 'old_asides'"):
        assert expected in found
    with pytest.raises(PhrasebookError, match=r"payments\.toml: subintents\.x\.you\[0\]: unknown slot \{nope\}"):
        load(book)


def test_a_file_that_is_not_toml_or_is_missing_is_named(book):
    _append(book / "returns.toml", "\nshort = [unquoted\n")
    (book / "shared.toml").unlink()
    with pytest.raises(PhrasebookError) as caught:
        load(book)
    message = str(caught.value)
    assert "returns.toml: " in message and "line" in message
    assert "shared.toml: " in message
    assert "payments.toml" not in message


def test_shared_tables_are_checked_too(book):
    text = (book / "shared.toml").read_text(encoding="utf-8")
    text = text.replace('you = [\n    "Could you @?"', 'you = [\n    "Could you?"', 1)
    text = text.replace('convention = "returns", other = "delivery"', 'convention = "returns", other = "returns"', 1)
    text = text.replace("[frame_kind_weights]\nyou = 4", "[frame_kind_weights]\nyou = 0", 1)
    (book / "shared.toml").write_text(text, encoding="utf-8")
    found = "\n".join(problems(book, "shared.toml"))
    assert "shared.toml: frames.you[0]: a frame holds its part as exactly one of '@' and '^'" in found
    assert "shared.toml: ambiguous[0]: the same team twice" in found
    assert "shared.toml: frame_kind_weights.you: a positive integer, not 0" in found


def test_unknown_kinds_are_refused_and_a_sub_intent_belongs_to_one_team(book):
    _append(book / "payments.toml", '\n[subintents.declined_again]\nyours = ["x"]\n')
    with pytest.raises(PhrasebookError, match="unknown kind 'yours'"):
        load(book)
    _append(book / "delivery.toml", '\n[subintents.declined_again]\nyou = ["retry my card"]\n')
    (book / "payments.toml").write_text((book / "payments.toml").read_text(encoding="utf-8")
                                        .replace('yours = ["x"]', 'you = ["retry my card"]'), encoding="utf-8")
    with pytest.raises(PhrasebookError, match="delivery.toml: subintents.declined_again: already a sub-intent of "
                                              "payments"):
        load(book)


def test_the_tables_are_read_only_and_keep_the_files_order():
    frames = phrases.FRAMES
    assert isinstance(frames, MappingProxyType) and isinstance(frames["you"], tuple)
    with pytest.raises(TypeError):
        frames["you"] = ()
    document = tomllib.loads(PHRASEBOOK.joinpath("payments.toml").read_text(encoding="utf-8"))
    assert [name for team, name, _ in SUBINTENTS if team == "payments"] == list(document["subintents"])
    assert [team for team, _ in SHORT] == list(TEAMS)


def test_every_slot_the_files_may_name_is_one_the_generator_fills():
    rng = random.Random(0)
    for name in sorted(SLOTS):
        value = slots.fill("{" + name + "}", {}, rng)
        assert value and value[0][0].strip() and "{" not in value[0][0], name


def test_the_phrasebook_files_install_with_the_package():
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    patterns = package_data["package-data"]["ticketnet.data.synth"]
    shipped = sorted(p.name for p in PHRASEBOOK.iterdir() if p.name.endswith(".toml"))
    assert shipped == sorted(FILES)
    assert all(any(fnmatch(f"phrasebook/{name}", pattern) for pattern in patterns) for name in shipped)


def test_every_team_has_a_wide_charter_with_many_ways_to_ask():
    for team in TEAMS:
        subs = [parts for t, _, parts in SUBINTENTS if t == team]
        assert len(subs) >= 18, team
        assert sum(len(items) for parts in subs for items in parts.values()) >= 400, team
        assert len(dict(SHORT)[team]) >= 30, team


def test_two_topic_tickets_mark_the_minor_request_before_after_and_from_behind():
    rng = random.Random(1)
    orders, tails = Counter(), 0
    for i in range(600):
        team = TEAMS[i % 5]
        core = generator._secondary_core(rng, team, TEAMS[(i + 1) % 5], {})
        orders[core[0][0]] += 1
        minor = next(segments for kind, segments in core if kind == "aside")
        tails += any(t and t.strip(" ,-") in minor[-1][0] for t in MINOR_TAILS)
    assert 0.4 <= orders["request"] / 600 <= 0.75, orders          # the main request first or second, both common
    assert tails >= 150, "a softener after the minor request ('..., but that can wait') in a good share"


def test_every_team_needs_its_settled_matters_and_the_shared_frames_their_slot(book):
    text = (book / "account.toml").read_text(encoding="utf-8")
    (book / "account.toml").write_text(text[:text.index("\n[settled]")] + "\n", encoding="utf-8")
    assert "account.toml: the file: missing settled" in problems(book, "account.toml")
    text = (book / "shared.toml").read_text(encoding="utf-8")
    (book / "shared.toml").write_text(text.replace('"Thanks for {a}."', '"Thanks for {b}."', 1), encoding="utf-8")
    assert any(p.startswith("shared.toml: settled.settled_thanks_frames[0]: unknown slot {b}")
               for p in problems(book, "shared.toml"))
