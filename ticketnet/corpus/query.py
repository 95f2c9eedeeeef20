"""Reading a finished scan lazily: the small aggregates whole, the ticket rows through DuckDB with filters pushed down."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ticketnet.corpus import manifest as mf
from ticketnet.corpus.manifest import ScanError
from ticketnet.interpret.signals import DISAGREEMENT

LIST_COLUMNS = ("ticket_id", "text", "predicted", "label", "confidence", "correct", "n", "truncated", DISAGREEMENT,
                "top_effect_1", "top_effect_1_value", "top_rollout_1", "top_rollout_1_value")
SORTS = {"input order": "row", "attention disagrees with effect": "disagreement DESC NULLS LAST, row",
         "least confident first": "confidence, row", "most confident first": "confidence DESC, row"}


@dataclass(frozen=True)
class Scan:
    folder: Path
    manifest: dict
    summary: dict
    tokens: pd.DataFrame | None      # None at level route

    @property
    def level(self) -> str:
        return self.summary["level"]

    @property
    def glob(self) -> str:
        return str(self.folder / "tickets" / "*.parquet")


@dataclass(frozen=True)
class Filters:
    token: str = ""                  # tickets containing this token (as the router reads it: lowercased)
    team: str = ""                   # predicted team
    label: str = ""                  # true team
    misrouted: bool = False
    confidence: tuple[float, float] = (0.0, 1.0)
    disagreement: tuple[float, float] = (0.0, 1.0)
    sort: str = "input order"
    label_confidence_below: float = 1.0  # labels the router doubts: its probability of the given team below this


def is_scan(folder: str | Path) -> bool:
    folder = Path(folder)
    m = mf.read(folder)
    return bool(m and m.get("state") == "complete" and (folder / "summary.json").is_file())


def open_scan(folder: str | Path) -> Scan:
    """The scan's manifest, summary and per-token table; the ticket rows stay on disk. Raises ScanError."""
    folder = Path(folder)
    m = mf.read(folder)
    if m is None:
        raise ScanError(f"{folder}: no scan here (manifest.json is missing); run `python -m ticketnet scan`")
    if m.get("state") != "complete" or not (folder / "summary.json").is_file():
        raise ScanError(f"{folder}: the scan is unfinished; run the same scan command again to complete it")
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    tokens = pd.read_parquet(folder / "tokens.parquet") if (folder / "tokens.parquet").is_file() else None
    return Scan(folder, m, summary, tokens)


def _where(scan: Scan, f: Filters) -> tuple[str, list]:
    clauses, params = [], []
    if f.token.strip():
        clauses.append("list_contains(tokens, ?)")
        params.append(f.token.strip().lower())
    if f.team:
        clauses.append("predicted = ?")
        params.append(f.team)
    if f.label:
        clauses.append("label = ?")
        params.append(f.label)
    if f.misrouted:
        clauses.append("correct = false")
    lo, hi = f.confidence
    if (lo, hi) != (0.0, 1.0):
        clauses.append("confidence BETWEEN ? AND ?")
        params += [float(lo), float(hi)]
    lo, hi = f.disagreement
    if scan.level != "route" and (lo, hi) != (0.0, 1.0):
        clauses.append("disagreement BETWEEN ? AND ?")
        params += [float(lo), float(hi)]
    if f.label_confidence_below < 1.0 and has_label_confidence(scan):
        clauses.append("label_confidence < ?")
        params.append(float(f.label_confidence_below))
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def has_label_confidence(scan: Scan) -> bool:
    """Whether the scan's ticket rows carry `label_confidence` (scans made before it was added do not)."""
    return LABEL_CONFIDENCE in _ticket_columns(scan)


def _ticket_columns(scan: Scan) -> list[str]:
    """The columns of the scan's ticket rows (from its first file; [] when it has none)."""
    import pyarrow.parquet as pq

    first = next(iter(sorted((scan.folder / "tickets").glob("*.parquet"))), None)
    return [] if first is None else list(pq.read_schema(first).names)


LABEL_CONFIDENCE = "label_confidence"
SET_ASIDE = "set_aside_chars"        # characters of quoted history and signature the router did not read
FLAG_COLUMNS = ("low_confidence", "unfamiliar", "distance")   # written by an encoder router's scan (the last two
                                                             # where it stores its training tickets' statistics)


def _connect():
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads TO 2")  # the page shares the machine with the server's other sessions
    return con


def tickets(scan: Scan, f: Filters, limit: int = 500) -> tuple[pd.DataFrame, int]:
    """The first `limit` tickets matching `f` in its sort order, and how many match in all."""
    where, params = _where(scan, f)
    cols = [c for c in LIST_COLUMNS if scan.level != "route" or not c.startswith((DISAGREEMENT, "top_"))]
    present = _ticket_columns(scan)
    if LABEL_CONFIDENCE in present:
        cols.insert(cols.index("confidence") + 1, LABEL_CONFIDENCE)
    if SET_ASIDE in present:                       # scans made before threads were split have no such column
        cols.insert(cols.index("n") + 1, SET_ASIDE)
    at = cols.index(LABEL_CONFIDENCE if LABEL_CONFIDENCE in cols else "confidence") + 1
    cols[at:at] = [c for c in FLAG_COLUMNS if c in present]   # an encoder router's card flags
    order = SORTS.get(f.sort, "row")
    if scan.level == "route":
        order = order.replace("disagreement DESC NULLS LAST, ", "")
    con = _connect()
    try:
        src = "read_parquet(?)"
        total = con.execute(f"SELECT count(*) FROM {src}{where}", [scan.glob, *params]).fetchone()[0]
        df = con.execute(f"SELECT {', '.join(cols)} FROM {src}{where} ORDER BY {order} LIMIT {int(limit)}",
                         [scan.glob, *params]).df()
    finally:
        con.close()
    return df, int(total)


def ticket(scan: Scan, ticket_id: str) -> dict | None:
    """Every column of one ticket (text included), or None."""
    con = _connect()
    try:
        df = con.execute("SELECT * FROM read_parquet(?) WHERE ticket_id = ? LIMIT 1", [scan.glob, ticket_id]).df()
    finally:
        con.close()
    return None if df.empty else df.iloc[0].to_dict()


POLICY_COLUMNS = ("auto", "team_set", "set_size")   # written by a scan of a router with a stored policy


def policy_summary(scan: Scan) -> dict | None:
    """The stored policy's effect on a scan made with one (None otherwise): tickets, auto-routed, the precision of
    the auto-routed among the labelled ones, auto-routed per predicted team, and how many tickets had each set size."""
    con = _connect()
    try:
        src = "read_parquet(?)"
        columns = set(con.execute(f"SELECT * FROM {src} LIMIT 0", [scan.glob]).df().columns)
        if not set(POLICY_COLUMNS) <= columns:
            return None
        n, auto, labelled, good = con.execute(
            f"SELECT count(*), count(*) FILTER (WHERE auto), count(*) FILTER (WHERE auto AND correct IS NOT NULL), "
            f"count(*) FILTER (WHERE auto AND correct) FROM {src}", [scan.glob]).fetchone()
        sizes = con.execute(f"SELECT set_size, count(*) AS tickets FROM {src} GROUP BY set_size ORDER BY set_size",
                            [scan.glob]).df()
        teams = con.execute(f"SELECT predicted, count(*) AS tickets, count(*) FILTER (WHERE auto) AS auto_routed "
                            f"FROM {src} GROUP BY predicted ORDER BY predicted", [scan.glob]).df()
    finally:
        con.close()
    return {"tickets": int(n), "auto_routed": int(auto), "coverage": auto / n if n else 0.0,
            "labelled_auto_routed": int(labelled), "precision": good / labelled if labelled else None,
            "set_sizes": {int(s): int(c) for s, c in zip(sizes["set_size"], sizes["tickets"])},
            "mean_set_size": float((sizes["set_size"] * sizes["tickets"]).sum() / n) if n else 0.0,
            "per_team": {str(t): {"tickets": int(c), "auto_routed": int(a)}
                         for t, c, a in zip(teams["predicted"], teams["tickets"], teams["auto_routed"])}}
