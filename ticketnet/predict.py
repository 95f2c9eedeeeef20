"""Route tickets for real use: a CSV (or one --text) in, team, confidence and per-team probabilities out, streamed."""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterator
from typing import TextIO

from ticketnet.data.thread import split_thread
from ticketnet.data.tickets import DataError
from ticketnet.policy.policy import load_policy
from ticketnet.router import Router


def read_tickets(stream: TextIO, source: str) -> Iterator[tuple[int, str, str]]:
    """Yield (line, ticket_id, text) from a `ticket_id,text` CSV, one row at a time; raises DataError."""
    reader = csv.DictReader(stream, strict=True)
    try:
        header = reader.fieldnames
        if not header:
            raise DataError(f"{source}: empty input; expected a header line ticket_id,text")
        missing = [c for c in ("ticket_id", "text") if c not in header]
        if missing:
            raise DataError(f"{source}, line 1: missing column(s) {', '.join(missing)}; the header must include ticket_id,text")
        for row in reader:
            if None in row or any(v is None for v in row.values()):
                raise DataError(f"{source}, line {reader.line_num}: wrong number of fields (expected {len(header)})")
            yield reader.line_num, row["ticket_id"], row["text"]
    except csv.Error as exc:
        raise DataError(f"{source}, line {reader.line_num}: malformed CSV ({exc})") from None
    except UnicodeDecodeError:
        raise DataError(f"{source}, line {reader.line_num + 1}: not UTF-8 text; save the file as UTF-8") from None


def predict_stream(router: Router, stream: TextIO, out: TextIO, source: str, batch_size: int = 512) -> dict:
    """Route every ticket of `stream` into CSV rows on `out`, `batch_size` tickets in memory at a time. A router
    with a stored policy (`ticketnet policy`) adds the columns auto (1: skips the person) and team_set."""
    policy = load_policy(router.meta)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["ticket_id", "team", "confidence", *(f"p_{t}" for t in router.teams), "truncated",
                     "set_aside_chars", *(("auto", "team_set") if policy is not None else ())])
    stats = {"tickets": 0, "truncated": 0, "threads": 0, **({"auto": 0} if policy is not None else {})}
    batch: list[tuple[str, object]] = []

    def flush() -> None:
        probs = router.predict_encoded([e for _, e in batch])
        decided = policy.columns(probs.double().numpy(), router.teams) if policy is not None else None
        for i, ((tid, enc), p) in enumerate(zip(batch, probs)):
            k = int(p.argmax())
            row = [tid, router.teams[k], f"{p[k]:.4f}", *(f"{v:.4f}" for v in p.tolist()), int(enc.truncated),
                   enc.set_aside_chars]
            if decided is not None:
                row += [int(decided[0][i]), decided[1][i]]
                stats["auto"] += int(decided[0][i])
            writer.writerow(row)
            stats["truncated"] += enc.truncated
            stats["threads"] += enc.set_aside_chars > 0
        stats["tickets"] += len(batch)
        batch.clear()

    for line, tid, text in read_tickets(stream, source):
        try:
            enc = router.encode(text)
        except ValueError as exc:
            raise DataError(f"{source}, line {line}: ticket {tid!r}: {exc}") from None
        batch.append((tid, enc))
        if len(batch) == batch_size:
            flush()
    if batch:
        flush()
    if stats["tickets"] == 0:
        raise DataError(f"{source}: no tickets after the header line")
    return stats


def format_single(router: Router, text: str) -> tuple[str, list[str]]:
    """One ticket: a line for the team and one per probability; plus notices (truncation, unknown words)."""
    enc = router.encode(text)
    p = router.predict_encoded([enc])[0]
    k = int(p.argmax())
    lines = [f"{router.teams[k]}  (confidence {p[k]:.3f})"]
    lines += [f"  {t:<9} {v:.3f}" for t, v in sorted(zip(router.teams, p.tolist()), key=lambda x: -x[1])]
    notes = []
    if enc.set_aside_chars:
        notes.append(f"note: {split_thread(text).reason[:-1].replace('Set aside', 'set aside', 1)} "
                     f"({enc.set_aside_chars:,} characters); the router read the new message only")
    if enc.truncated:
        notes.append(f"note: the ticket has {enc.n_total} tokens; only the first {len(enc.ids)} were read")
    if enc.unknown == len(enc.ids):
        notes.append("note: none of the ticket's words were seen in training; the prediction is a guess")
    found = router.assess_encoded(enc, p)
    if found.flagged:
        notes.append("note: " + found.message)
    policy = load_policy(router.meta)
    if policy is not None:
        auto, labels = policy.columns(p.double().numpy()[None, :], router.teams)
        threshold = policy.thresholds.thresholds.get(router.teams[k], float("inf"))
        rule = "never auto-routed" if threshold == float("inf") else f"threshold {threshold:.4f}"
        lines.append(f"policy: {'auto-routed' if auto[0] else 'to a person'} ({router.teams[k]}: {rule}); "
                     f"set at alpha {policy.conformal.alpha:g}: {labels[0] or '(empty)'}")
    return "\n".join(lines), notes


def open_input(path: str | None) -> tuple[TextIO, str]:
    if path in (None, "-"):
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", newline=""), "<stdin>"
    try:
        return open(path, encoding="utf-8-sig", newline=""), path
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a folder, not a CSV file") from None

