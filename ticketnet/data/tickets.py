"""Labelled ticket splits: a strict CSV loader, the teams a split names, and the hard slice where a split marks one."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

REQUIRED_COLUMNS: tuple[str, ...] = ("ticket_id", "text", "team")

MIN_TEAMS, MAX_TEAMS = 2, 200
TEAMS_FILE = "teams.txt"          # optional, in a data folder: the teams in the order a router keeps them

# The hard slice: tickets whose request is negated, shares the ticket with another topic (or follows a settled one),
# or is ambiguous.
HARD_PATTERNS: tuple[str, ...] = ("negated", "two_topics", "ambiguous", "settled")


def is_hard(row) -> bool:
    """Whether a ticket row (a dict or a pandas row with a `pattern` column) belongs to the hard slice."""
    return row.get("pattern", "") in HARD_PATTERNS


class DataError(ValueError):
    """A ticket file that cannot be used; the message names the file and, where it can, the line."""


def read_text(path: Path, expected: str = f"a header line with {', '.join(REQUIRED_COLUMNS)}") -> str:
    """The file as UTF-8 text (a BOM dropped); DataError naming the file, and the line where it can, when it is
    missing, a folder, unreadable, not UTF-8, binary, or empty (`expected` says what an empty file should hold)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a folder, not a CSV file") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}, line {line}: not UTF-8 text (byte {raw[exc.start]:#04x}); save the file as UTF-8") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise DataError(f"{path}, line {line}: contains a NUL byte; this is not a CSV text file")
    if not text.strip():
        raise DataError(f"{path}: empty file; expected {expected}")
    return text


def parse_tickets(text: str, source: str, required: tuple[str, ...] = REQUIRED_COLUMNS,
                  teams: Sequence[str] | None = None) -> list[dict[str, str]]:
    """Rows of a ticket CSV given as text; `source` names the file in errors. A `team` must be non-empty (surrounding
    spaces are dropped, the rest kept exactly) and, when `teams` is given, one of them."""
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        header = reader.fieldnames or []
    except csv.Error as exc:
        raise DataError(f"{source}, line 1: malformed CSV header ({exc})") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise DataError(f"{source}, line 1: missing column(s) {', '.join(missing)}; the header must include "
                        f"{', '.join(required)} (found: {', '.join(header) or 'nothing'})")
    rows: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    row_start = reader.line_num + 1                   # where the row being read begins, for csv.Error messages
    try:
        for row in reader:
            line = row_start
            row_start = reader.line_num + 1
            if None in row or any(v is None for v in row.values()):
                raise DataError(f"{source}, line {line}: wrong number of fields (expected {len(header)})")
            tid = row["ticket_id"].strip()
            if not tid:
                raise DataError(f"{source}, line {line}: empty ticket_id")
            if tid in seen:
                raise DataError(f"{source}, line {line}: duplicate ticket_id {tid!r} (first on line {seen[tid]})")
            seen[tid] = line
            if not row["text"].strip():
                raise DataError(f"{source}, line {line}: empty text for ticket {tid}")
            if "team" in required:
                row["team"] = row["team"].strip()
                if not row["team"]:
                    raise DataError(f"{source}, line {line}: empty team for ticket {tid}")
                if teams is not None and row["team"] not in teams:
                    raise DataError(f"{source}, line {line}: unknown team {row['team']!r} for ticket {tid}; "
                                    f"expected one of {team_list(teams)}")
            row["ticket_id"] = tid
            rows.append(row)
    except csv.Error as exc:
        raise DataError(f"{source}, line {row_start}: malformed CSV ({exc})") from None
    if not rows:
        raise DataError(f"{source}: no tickets after the header line")
    return rows


def rows_csv(rows: Sequence[Mapping[str, str]], columns: Sequence[str]) -> bytes:
    """Rows as the UTF-8 CSV `load_split` reads: a header of `columns`, `\\n` line endings, minimal quoting."""
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([row[c] for c in columns])
    return buf.getvalue().encode("utf-8")


def load_split(path: str | Path, teams: Sequence[str] | None = None) -> list[dict[str, str]]:
    """Rows of a labelled split as dicts (`ticket_id`, `text`, `team`, and `evidence`, `pattern`, ... where the file
    has them); with `teams`, every team must be one of them. Raises `DataError`."""
    path = Path(path)
    return parse_tickets(read_text(path), str(path), teams=teams)


def team_list(teams: Sequence[str], limit: int = 12) -> str:
    """The teams for a message: all of them, or the first `limit` and how many more."""
    shown = ", ".join(repr(t) for t in teams[:limit])
    return shown + (f" and {len(teams) - limit} more" if len(teams) > limit else "")


def teams_of(rows: Sequence[Mapping[str, str]], folder: Path | None = None) -> tuple[str, ...]:
    """The teams of a training split in a fixed order: the order of `teams.txt` in `folder` when there is one (every
    team of `rows` must be in it), else sorted by name. Raises DataError for fewer than 2 or more than 200 teams."""
    found = {r["team"] for r in rows}
    listed = Path(folder) / TEAMS_FILE if folder is not None else None
    if listed is not None and listed.is_file():
        order = tuple(t.strip() for t in read_text(listed).splitlines() if t.strip())
        if len(set(order)) != len(order):
            raise DataError(f"{listed}: a team is listed twice")
        missing = sorted(found - set(order))
        if missing:
            raise DataError(f"{listed}: does not list the team(s) {team_list(missing)} found in the training split")
    else:
        order = tuple(sorted(found))
    if len(order) < MIN_TEAMS:
        raise DataError(f"only one team ({team_list(order)}) in the training data; a router needs at least "
                        f"{MIN_TEAMS} teams to choose between")
    if len(order) > MAX_TEAMS:
        raise DataError(f"{len(order)} teams in the training data; ticketnet reads at most {MAX_TEAMS}")
    return order


def load_unlabelled(path: str | Path) -> list[dict[str, str]]:
    """Rows of a `ticket_id,text` CSV (a `team` column is allowed but not checked); raises `DataError`."""
    path = Path(path)
    return parse_tickets(read_text(path), str(path), required=("ticket_id", "text"))
