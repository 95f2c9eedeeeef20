"""Two corpus scans of one input by two routers, compared in DuckDB over their Parquet files (the rows stay on disk)."""

# Every figure comes from SQL over SCAN/tickets/*.parquet and SCAN/tokens.parquet; only results of a few hundred rows
# (the team-by-team change matrix, a sample of changed tickets, the words per team) ever reach Python.

from __future__ import annotations

import time
from pathlib import Path

from ticketnet.corpus.query import Scan, open_scan

MIN_WORD_TICKETS = 5                      # a word's mean effect needs this many tickets in both scans to be ranked
SAMPLE_TEXT = 200                         # characters of each sampled ticket's text


def _connect(threads: int | None):
    import duckdb

    con = duckdb.connect()
    if threads:
        con.execute(f"SET threads TO {int(threads)}")
    return con


def _same_input(a: Scan, b: Scan) -> dict:
    ia, ib = a.manifest.get("input", {}), b.manifest.get("input", {})
    if not ia.get("sha256") or ia.get("sha256") != ib.get("sha256") or ia.get("tickets") != ib.get("tickets"):
        raise ValueError(f"the scans read different inputs ({a.folder}: {ia.get('path')}, {ia.get('tickets')} "
                         f"tickets; {b.folder}: {ib.get('path')}, {ib.get('tickets')} tickets): compare two scans "
                         f"of the same input")
    return {"path": ia.get("path"), "sha256": ia["sha256"], "tickets": ia.get("tickets")}


def _side(scan: Scan) -> dict:
    w = scan.manifest.get("weights", {})
    return {"scan": str(scan.folder), "router": w.get("path"), "weights_sha256": w.get("sha256"),
            "level": scan.level, "teams": list(scan.summary.get("teams", [])),
            "accuracy": scan.summary.get("accuracy")}


def _words(con, a: Scan, b: Scan, per_team: int, min_tickets: int) -> dict | None:
    ta, tb = a.folder / "tokens.parquet", b.folder / "tokens.parquet"
    if not (ta.is_file() and tb.is_file()):
        return None                         # a route-level scan has no deletion effects
    rows = con.execute(
        """SELECT team, token, a.tickets AS tickets_a, b.tickets AS tickets_b,
                  a.mean_effect AS effect_a, b.mean_effect AS effect_b, b.mean_effect - a.mean_effect AS delta
           FROM read_parquet(?) a JOIN read_parquet(?) b USING (team, token)
           WHERE a.tickets >= ? AND b.tickets >= ? AND b.mean_effect <> a.mean_effect
           QUALIFY row_number() OVER (PARTITION BY team ORDER BY abs(b.mean_effect - a.mean_effect) DESC, token) <= ?
           ORDER BY team, abs(delta) DESC, token""",
        [str(ta), str(tb), int(min_tickets), int(min_tickets), int(per_team)]).fetchall()
    out: dict[str, list] = {}
    for team, token, n_a, n_b, e_a, e_b, delta in rows:
        out.setdefault(team, []).append({"token": token, "tickets_a": int(n_a), "tickets_b": int(n_b),
                                         "effect_a": round(e_a, 4), "effect_b": round(e_b, 4),
                                         "delta": round(delta, 4)})
    return out


def compare_scans(scan_a: Path, scan_b: Path, sample: int = 10, words: int = 5,
                  min_word_tickets: int = MIN_WORD_TICKETS, threads: int | None = None) -> dict:
    """Scan A (the reference router) against scan B (the candidate) of the same input: tickets that change team
    (count, team-to-team matrix, fixed / broken where labelled, a sample), the routing mix per team and its delta
    (B minus A), and per team the `words` words whose mean deletion effect on the team moved most (tokens.parquet:
    tickets each router routes to the team, words seen in at least `min_word_tickets` of them in both). ValueError,
    one line, for a folder that is no finished scan or scans of different inputs."""
    t0 = time.perf_counter()
    a, b = open_scan(scan_a), open_scan(scan_b)
    source = _same_input(a, b)
    glob_a, glob_b = a.glob, b.glob
    con = _connect(threads)
    try:
        # One join on the input row: per (A's team, B's team, label) the tickets, and whether ids line up.
        matrix = con.execute(
            """SELECT a.predicted, b.predicted, coalesce(a.label, b.label) AS label, count(*) AS tickets,
                      count(*) FILTER (WHERE a.ticket_id <> b.ticket_id) AS mismatched
               FROM read_parquet(?) a JOIN read_parquet(?) b USING (row)
               GROUP BY ALL""", [glob_a, glob_b]).fetchall()
        total = sum(r[3] for r in matrix)
        if total != source["tickets"] or any(r[4] for r in matrix):
            raise ValueError(f"{a.folder} and {b.folder}: the scans' ticket rows do not line up ({total:,} paired "
                             f"of {source['tickets']:,}); rescan one of them")
        changed_sample = con.execute(
            f"""SELECT a.ticket_id, substr(a.text, 1, {SAMPLE_TEXT}), coalesce(a.label, b.label),
                       a.predicted, a.confidence, b.predicted, b.confidence
                FROM read_parquet(?) a JOIN read_parquet(?) b USING (row)
                WHERE a.predicted <> b.predicted ORDER BY row LIMIT ?""", [glob_a, glob_b, int(sample)]).fetchall()
        word_changes = _words(con, a, b, words, min_word_tickets)
    finally:
        con.close()

    changed = [r for r in matrix if r[0] != r[1]]
    labelled = [r for r in matrix if r[2] is not None]
    teams = list(dict.fromkeys([*a.summary.get("teams", []), *b.summary.get("teams", [])]))
    count_a = {t: 0 for t in teams}
    count_b = {t: 0 for t in teams}
    flows: dict[tuple[str, str], int] = {}
    for pa, pb, _label, n, _ in matrix:
        count_a[pa] = count_a.get(pa, 0) + n
        count_b[pb] = count_b.get(pb, 0) + n
        if pa != pb:
            flows[(pa, pb)] = flows.get((pa, pb), 0) + n
    routing = {t: {"a": count_a.get(t, 0), "b": count_b.get(t, 0), "delta": count_b.get(t, 0) - count_a.get(t, 0),
                   "share_a": round(count_a.get(t, 0) / total, 4), "share_b": round(count_b.get(t, 0) / total, 4),
                   "share_delta": round((count_b.get(t, 0) - count_a.get(t, 0)) / total, 4)} for t in count_a}
    n_labelled = sum(r[3] for r in labelled)
    changes = {
        "count": sum(r[3] for r in changed), "share": round(sum(r[3] for r in changed) / total, 4),
        "labelled": sum(r[3] for r in changed if r[2] is not None),
        "fixed": sum(r[3] for r in changed if r[2] is not None and r[1] == r[2]),
        "broken": sum(r[3] for r in changed if r[2] is not None and r[0] == r[2]),
        "both_wrong": sum(r[3] for r in changed if r[2] is not None and r[2] not in (r[0], r[1])),
        "flows": [{"from": pa, "to": pb, "tickets": n}
                  for (pa, pb), n in sorted(flows.items(), key=lambda kv: (-kv[1], kv[0]))],
        "sample": [{"ticket_id": tid, "text": text, "label": label, "predicted_a": pa, "confidence_a": round(ca, 4),
                    "predicted_b": pb, "confidence_b": round(cb, 4)}
                   for tid, text, label, pa, ca, pb, cb in changed_sample],
    }
    accuracy = None
    if n_labelled:
        accuracy = {"labelled": n_labelled,
                    "a": round(sum(r[3] for r in labelled if r[0] == r[2]) / n_labelled, 4),
                    "b": round(sum(r[3] for r in labelled if r[1] == r[2]) / n_labelled, 4)}
    return {"input": source, "tickets": total, "a": _side(a), "b": _side(b), "changed": changes,
            "routing": routing, "accuracy": accuracy, "words": word_changes, "min_word_tickets": int(min_word_tickets),
            "seconds": round(time.perf_counter() - t0, 3)}
