"""Larkfield's ticket splits: the teams, the hard slice, and a strict CSV loader."""

from __future__ import annotations

import csv
import io
from pathlib import Path

TEAMS: tuple[str, ...] = ("payments", "delivery", "returns", "product", "account")
REQUIRED_COLUMNS: tuple[str, ...] = ("ticket_id", "text", "team")

# The hard slice: tickets whose request is negated, shares the ticket with another topic, or is ambiguous.
HARD_PATTERNS: tuple[str, ...] = ("negated", "two_topics", "ambiguous")


def is_hard(row) -> bool:
    """Whether a ticket row (a dict or a pandas row with a `pattern` column) belongs to the hard slice."""
    return row.get("pattern", "") in HARD_PATTERNS


class DataError(ValueError):
    """A ticket file that cannot be used; the message names the file and, where it can, the line."""


def _read_text(path: Path) -> str:
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
        raise DataError(f"{path}: empty file; expected a header line with {', '.join(REQUIRED_COLUMNS)}")
    return text


def parse_tickets(text: str, source: str, required: tuple[str, ...] = REQUIRED_COLUMNS) -> list[dict[str, str]]:
    """Rows of a ticket CSV given as text; `source` names the file in errors."""
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
            if "team" in required and row["team"] not in TEAMS:
                raise DataError(f"{source}, line {line}: unknown team {row['team']!r} for ticket {tid}; "
                                f"expected one of {', '.join(TEAMS)}")
            row["ticket_id"] = tid
            rows.append(row)
    except csv.Error as exc:
        raise DataError(f"{source}, line {row_start}: malformed CSV ({exc})") from None
    if not rows:
        raise DataError(f"{source}: no tickets after the header line")
    return rows


def load_split(path: str | Path) -> list[dict[str, str]]:
    """Rows of a labelled split as dicts (`ticket_id`, `text`, `team`, `evidence`, ...); raises `DataError`."""
    path = Path(path)
    return parse_tickets(_read_text(path), str(path))


def load_unlabelled(path: str | Path) -> list[dict[str, str]]:
    """Rows of a `ticket_id,text` CSV (a `team` column is allowed but not checked); raises `DataError`."""
    path = Path(path)
    return parse_tickets(_read_text(path), str(path), required=("ticket_id", "text"))
