"""A support team's own export (one CSV or Parquet file): read, checked, and split into train, valid and test."""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ticketnet.data.tickets import MAX_TEAMS, MIN_TEAMS, DataError, read_text, rows_csv, team_list

MAX_EXPORT_BYTES = 4 * 1024**3         # larger exports are sampled first (a router of this size learns no more)
SPLITS = ("train", "valid", "test")
KEPT_COLUMNS = ("evidence", "pattern", "distractor", "style")   # optional columns the pages read where they exist


@dataclass(frozen=True)
class ExportColumns:
    """Which columns of the export hold what; several text columns are joined, one per line."""

    text: tuple[str, ...] = ("text",)
    team: str = "team"
    ticket_id: str = "ticket_id"
    id_given: bool = False             # the id column was named by the user, so it must exist
    text_given: bool = False           # the text columns were named by the user; else `text`, or the usual others


# Without --text-column and without a `text` column, these are read where the export has them, in this order.
USUAL_TEXT_COLUMNS = ("subject", "title", "summary", "body", "description", "message", "content")


def parse_fractions(text: str) -> tuple[float, float, float]:
    """`0.8,0.1,0.1` as (train, valid, test) fractions; each above 0, summing to 1."""
    try:
        parts = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"--split {text!r}: expected three fractions such as 0.8,0.1,0.1") from None
    if len(parts) != 3 or min(parts) <= 0 or abs(sum(parts) - 1) > 1e-6:
        raise ValueError(f"--split {text!r}: expected three fractions above 0 that sum to 1, such as 0.8,0.1,0.1")
    return parts  # type: ignore[return-value]


def _frame(path: Path):
    import pandas as pd

    if not path.is_file():
        raise DataError(f"{path}: file not found" if not path.exists() else f"{path}: not a file")
    size = path.stat().st_size
    if size > MAX_EXPORT_BYTES:
        raise DataError(f"{path}: {size / 1024**3:.1f} GiB, over the {MAX_EXPORT_BYTES / 1024**3:.0f} GiB limit; "
                        f"sample the export first")
    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            return pd.read_parquet(path).astype(object)
        except Exception as exc:  # pyarrow raises several types for a damaged or foreign file
            raise DataError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0][:160]})") from None
    text = read_text(path, "a header line naming the text and team columns")
    try:
        return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False)
    except Exception as exc:  # pandas' ParserError, EmptyDataError
        raise DataError(f"{path}: malformed CSV ({str(exc).strip().splitlines()[0][:160]})") from None


@dataclass(frozen=True)
class Export:
    rows: list[dict[str, str]]
    ids_made_up: bool                  # the file had no id column: ids are R-000001, R-000002, ... in file order
    text_columns: tuple[str, ...]      # the columns the text was read from


def read_export(path: str | Path, columns: ExportColumns = ExportColumns()) -> Export:
    """The export's tickets as rows (`ticket_id`, `text`, `team`, and the optional columns of KEPT_COLUMNS);
    ids are made up when the file has no id column and none was named. Raises DataError."""
    path = Path(path)
    df = _frame(path)
    found = [str(c) for c in df.columns]
    columns = replace(columns, text=_text_columns(found, columns.text, columns.text_given))
    wanted = [*columns.text, columns.team] + ([columns.ticket_id] if columns.id_given else [])
    missing = [c for c in wanted if c not in found]
    if missing:
        raise DataError(f"{path}: no column {', '.join(repr(c) for c in missing)} (columns found: "
                        f"{', '.join(found) or 'none'}); name them with --text-column, --team-column, --id-column")
    if df.empty:
        raise DataError(f"{path}: no tickets after the header")
    has_ids = columns.ticket_id in found
    kept = [c for c in KEPT_COLUMNS if c in found]
    rows, seen = [], {}
    for i, record in enumerate(df.to_dict("records")):
        where = f"{path}, row {i + 1}"
        tid = _cell(record[columns.ticket_id]) if has_ids else f"R-{i + 1:06d}"
        if not tid:
            raise DataError(f"{where}: empty ticket id")
        if tid in seen:
            raise DataError(f"{where}: duplicate ticket id {tid!r} (first on row {seen[tid]})")
        seen[tid] = i + 1
        text = _joined(record, columns.text)
        if not text:
            raise DataError(f"{where}: empty text for ticket {tid}")
        team = _cell(record[columns.team])
        if not team:
            raise DataError(f"{where}: empty team for ticket {tid}")
        rows.append({"ticket_id": tid, "text": text, "team": team, **{c: _cell(record[c]) for c in kept}})
    return Export(rows, not has_ids, columns.text)


def read_texts(path: str | Path, text_columns: Sequence[str] = ("text",)) -> tuple[list[str], tuple[str, ...]]:
    """The non-empty texts of a CSV or Parquet file with no teams (unrouted tickets), and the columns they were read
    from: `text_columns` joined one per line, else, where the file has no `text`, its usual text columns. Rows with
    no text are skipped. Raises DataError."""
    path = Path(path)
    df = _frame(path)
    found = [str(c) for c in df.columns]
    columns = _text_columns(found, text_columns, given=False)
    missing = [c for c in columns if c not in found]
    if missing:
        raise DataError(f"{path}: no column {', '.join(repr(c) for c in missing)} (columns found: "
                        f"{', '.join(found) or 'none'}); name the text column(s) with --unlabelled-column")
    texts = [t for t in (_joined(record, columns) for record in df[list(columns)].to_dict("records")) if t]
    if not texts:
        raise DataError(f"{path}: no text in column(s) {', '.join(columns)}")
    return texts, columns


def _text_columns(found: Sequence[str], columns: Sequence[str], given: bool) -> tuple[str, ...]:
    """`columns`, or, where none was named and the file has no `text` column, the usual text columns it has."""
    if not given and tuple(columns) == ("text",) and "text" not in found:
        return tuple(c for c in USUAL_TEXT_COLUMNS if c in found) or tuple(columns)
    return tuple(columns)


def _joined(record: dict, columns: Sequence[str]) -> str:
    """A row's text: its non-empty cells of `columns`, one per line."""
    return "\n".join(part for part in (_cell(record[c]) for c in columns) if part)


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def min_per_team(fractions: Sequence[float]) -> int:
    """The fewest tickets a team needs so a stratified split puts at least one in every split."""
    return max(2, math.ceil(round(1 / min(fractions), 9)))


def split_export(rows: list[dict[str, str]], fractions: Sequence[float] = (0.8, 0.1, 0.1),
                 seed: int = 0) -> dict[str, list[dict[str, str]]]:
    """Train, valid and test, stratified by team and seeded (scikit-learn), every team in every split.
    Raises DataError for one team only, more than MAX_TEAMS, or a team too small for the split."""
    from sklearn.model_selection import train_test_split

    counts = Counter(r["team"] for r in rows)
    if len(counts) < MIN_TEAMS:
        raise DataError(f"only one team ({team_list(list(counts))}) in the export; a router needs at least "
                        f"{MIN_TEAMS} teams to choose between")
    if len(counts) > MAX_TEAMS:
        raise DataError(f"{len(counts)} teams in the export; ticketnet reads at most {MAX_TEAMS}")
    need = min_per_team(fractions)
    small = sorted((n, t) for t, n in counts.items() if n < need)
    if small:
        n, team = small[0]
        more = f" (and {len(small) - 1} more team(s) under {need})" if len(small) > 1 else ""
        raise DataError(f"team {team!r} has {n} ticket(s); a {'/'.join(f'{f:g}' for f in fractions)} split needs "
                        f"at least {need} per team{more}: merge or drop it, or change --split")
    train_f, valid_f, test_f = fractions
    index = list(range(len(rows)))
    labels = [r["team"] for r in rows]
    rest, test = train_test_split(index, test_size=test_f, stratify=labels, random_state=seed)
    train, valid = train_test_split(rest, test_size=valid_f / (train_f + valid_f),
                                    stratify=[labels[i] for i in rest], random_state=seed)
    out = {name: [rows[i] for i in sorted(part)] for name, part in zip(SPLITS, (train, valid, test))}
    for name, part in out.items():
        absent = set(counts) - {r["team"] for r in part}
        if absent:
            raise DataError(f"the {name} split has no ticket of {team_list(sorted(absent))}; give those teams "
                            f"more tickets or change --split")
    return out


def splits_csv(rows: list[dict[str, str]]) -> bytes:
    """A split as the CSV `load_split` reads: ticket_id, text, team and the optional columns the rows carry."""
    return rows_csv(rows, ["ticket_id", "text", "team", *(c for c in KEPT_COLUMNS if rows and c in rows[0])])
