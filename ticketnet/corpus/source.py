"""What a scan reads: a CSV, a Parquet file or a folder of them, validated whole before any work is sent out."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ticketnet._runtime.hashing import files_hash
from ticketnet.data.text import tokenize
from ticketnet.data.tickets import DataError, team_list

SUFFIXES = (".csv", ".parquet")
COLUMNS = ("ticket_id", "text", "team")          # team is optional: with it the scan reports accuracy
BATCH = 65_536                                   # rows validated at a time: memory stays flat for any input
_ANY_TOKEN = re.compile(r"[^\W_]|[^\w\s]|_")     # what tokenize() would keep, for printable text


@dataclass(frozen=True)
class Partition:
    """One task's worth of tickets: rows start..stop−1 of a Parquet file (the input's own, or a CSV staged)."""

    index: int
    path: str
    start: int
    stop: int
    row0: int                                    # the first row's place in the whole input (seeds, row numbers)
    source: str                                  # the file the user gave, for messages


@dataclass(frozen=True)
class Source:
    files: tuple[str, ...]
    tickets: int
    labelled: bool
    sha256: str
    partitions: tuple[Partition, ...]


def input_files(path: str | Path | list) -> list[Path]:
    """The ticket files of `path`: the file itself, or every .csv/.parquet under the folder (sorted, hidden
    and underscore names skipped), or those of each path of a list in its order; raises DataError when there is none."""
    if isinstance(path, (list, tuple)):
        return [f for p in path for f in input_files(p)]
    path = Path(path)
    if path.is_file():
        if path.suffix.lower() not in SUFFIXES:
            raise DataError(f"{path}: not a .csv or .parquet file")
        return [path]
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                       and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts))
        if not found:
            raise DataError(f"{path}: no .csv or .parquet files in this folder")
        return found
    raise DataError(f"{path}: file not found")


def input_hash(files: list[Path]) -> str:
    """SHA-256 over every file's name and bytes: a resumed scan must read exactly the same tickets."""
    return files_hash(files, missing_ok=False)


def has_tokens(text: str) -> bool:
    """Whether the router would read at least one token (the regex is enough for printable text)."""
    return bool(_ANY_TOKEN.search(text)) if text.isprintable() else bool(tokenize(text))


class _Checker:
    """Row checks shared by CSV and Parquet input; duplicate ids are caught across all files of the input.

    An id is remembered as one integer (its row in the whole input), not as text, so the client's memory for a
    large input stays small (docs/corpus.md, "Worker memory")."""

    def __init__(self, teams: Sequence[str]) -> None:
        self.teams = frozenset(teams)
        self.named = tuple(teams)
        self.seen: dict[str, int] = {}
        self.files: list[tuple[int, str]] = []     # (first global row, file) of each file begun
        self.rows = 0
        self.labelled = False

    def begin(self, path: Path) -> None:
        self.files.append((self.rows, str(path)))

    def _first(self, at: int) -> str:
        start, name = max((f for f in self.files if f[0] <= at), key=lambda f: f[0])
        return f"{name}, row {at - start + 1}"

    def row(self, where: str, tid, text, team) -> tuple[str, str, str | None]:
        tid = "" if tid is None else str(tid).strip()
        if not tid:
            raise DataError(f"{where}: empty ticket_id")
        if tid in self.seen:
            raise DataError(f"{where}: duplicate ticket_id {tid!r} (first at {self._first(self.seen[tid])})")
        self.seen[tid] = self.rows
        self.rows += 1
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"{where}: empty text for ticket {tid}")
        if not has_tokens(text):
            raise DataError(f"{where}: ticket {tid} has no words, numbers or punctuation to read")
        team = None if team is None or str(team).strip() == "" else str(team).strip()
        if team is not None:
            if team not in self.teams:
                raise DataError(f"{where}: unknown team {team!r} for ticket {tid}; this router's teams are "
                                f"{team_list(self.named)} (or leave it empty)")
            self.labelled = True
        return tid, text, team


def _bad_utf8_line(path: Path) -> int:
    with open(path, "rb") as fh:
        for number, line in enumerate(fh, 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return 1


def _csv_batches(path: Path, check: _Checker) -> Iterator[dict[str, list]]:
    """Checked rows of a CSV in batches of BATCH; raises DataError naming the file, row and line."""
    try:
        fh = open(path, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror})") from None
    with fh:
        reader = csv.DictReader(fh, strict=True)
        try:
            header = reader.fieldnames or []
            missing = [c for c in COLUMNS[:2] if c not in header]
            if missing:
                raise DataError(f"{path}, line 1: missing column(s) {', '.join(missing)}; the header must include "
                                f"ticket_id,text (team optional; found: {', '.join(header) or 'nothing'})")
            batch: dict[str, list] = {c: [] for c in COLUMNS}
            row_start, number = reader.line_num + 1, 0
            for row in reader:
                number += 1
                where = f"{path}, row {number} (line {row_start})"
                row_start = reader.line_num + 1
                if None in row or any(v is None for v in row.values()):
                    raise DataError(f"{where}: wrong number of fields (expected {len(header)})")
                for c, v in zip(COLUMNS, check.row(where, row["ticket_id"], row["text"], row.get("team"))):
                    batch[c].append(v)
                if len(batch["text"]) == BATCH:
                    yield batch
                    batch = {c: [] for c in COLUMNS}
            if batch["text"]:
                yield batch
            elif number == 0:
                raise DataError(f"{path}: no tickets after the header line")
        except UnicodeDecodeError:
            raise DataError(f"{path}, line {_bad_utf8_line(path)}: not UTF-8 text; save the file as UTF-8") from None
        except csv.Error as exc:
            raise DataError(f"{path}, line {row_start}: malformed CSV ({exc})") from None


def _parquet_file(path: Path):
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # not Parquet, truncated, unreadable: pyarrow raises several kinds
        raise DataError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0][:120]})") from None


def _check_parquet(path: Path, check: _Checker) -> int:
    f = _parquet_file(path)
    names = f.schema_arrow.names
    missing = [c for c in COLUMNS[:2] if c not in names]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}; a ticket file needs ticket_id and text "
                        f"(team optional; found: {', '.join(names)})")
    cols = [c for c in COLUMNS if c in names]
    number = 0
    for batch in f.iter_batches(batch_size=BATCH, columns=cols):
        data = {c: batch.column(c).to_pylist() for c in cols}
        for k in range(batch.num_rows):
            number += 1
            check.row(f"{path}, row {number}", data["ticket_id"][k], data["text"][k],
                      data["team"][k] if "team" in data else None)
    if number == 0:
        raise DataError(f"{path}: no tickets in this file")
    return number


def _stage_csv(path: Path, staged: Path, check: _Checker, partition_size: int) -> int:
    """Validate a CSV and write it as Parquet (one row group per partition), so workers read row ranges cheaply."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    staged.parent.mkdir(parents=True, exist_ok=True)
    tmp = staged.with_name(f".{staged.name}.tmp")
    schema = pa.schema([(c, pa.string()) for c in COLUMNS])
    rows = 0
    try:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            for batch in _csv_batches(path, check):
                writer.write_table(pa.table(batch, schema=schema), row_group_size=partition_size)
                rows += len(batch["text"])
        tmp.replace(staged)
    finally:
        tmp.unlink(missing_ok=True)
    return rows


def open_source(path: str | Path | list, staging: Path, partition_size: int, teams: Sequence[str],
                progress: Callable[[str], None] | None = None, files: list[Path] | None = None,
                sha256: str | None = None) -> Source:
    """Check every row of the input (columns, empty texts, duplicate ids across files, UTF-8) and cut it into
    partitions of at most `partition_size` rows; CSVs are staged as Parquet under `staging`. Raises DataError."""
    if partition_size < 1:
        raise ValueError(f"partition size must be at least 1, got {partition_size}")
    files = files or input_files(path)
    sha256 = sha256 or input_hash(files)
    check = _Checker(teams)
    parts: list[Partition] = []
    total = 0
    for k, f in enumerate(files):
        if progress is not None:
            progress(f"checking {f}")
        check.begin(f)
        if f.suffix.lower() == ".csv":
            target = staging / f"{k:05d}-{f.stem}.parquet"
            rows = _stage_csv(f, target, check, partition_size)
        else:
            target, rows = f, _check_parquet(f, check)
        for start in range(0, rows, partition_size):
            stop = min(rows, start + partition_size)
            parts.append(Partition(len(parts), str(target.resolve()), start, stop, total + start, str(f)))
        total += rows
    return Source(tuple(str(f) for f in files), total, check.labelled, sha256, tuple(parts))


def read_partition(part: Partition) -> list[dict]:
    """The partition's rows as dicts (ticket_id, text, team or None), read from the row groups that hold them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = pq.ParquetFile(part.path)
    names = f.schema_arrow.names
    cols = [c for c in COLUMNS if c in names]
    groups, first, at = [], None, 0
    for g in range(f.metadata.num_row_groups):
        rows = f.metadata.row_group(g).num_rows
        if at + rows > part.start and at < part.stop:
            groups.append(g)
            first = at if first is None else first
        at += rows
    table = f.read_row_groups(groups, columns=cols).slice(part.start - first, part.stop - part.start)
    data = {c: table.column(c).cast(pa.string()).to_pylist() for c in cols}
    teams = data.get("team") or [None] * table.num_rows
    return [{"ticket_id": str(t).strip(), "text": x, "team": (m.strip() or None) if isinstance(m, str) else None}
            for t, x, m in zip(data["ticket_id"], data["text"], teams)]
