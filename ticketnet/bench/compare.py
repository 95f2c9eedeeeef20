"""Large scans for timing compare-scans: a real small scan's rows replicated into a scan of a million tickets."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

PARTITION = 50_000                      # rows per Parquet part, as `python -m ticketnet scan` writes them


def replicate_scan(source: Path, out: Path, tickets: int, partition: int = PARTITION) -> Path:
    """A finished scan in `out` whose row r is the source scan's row r mod n, with ticket id R-<r>: the source's
    real predictions, confidences and effects repeated, written as Parquet parts of `partition` rows with pyarrow.
    Two sources that scanned one input give replicas of one input (its hash is derived from the source's)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    source, out = Path(source), Path(out)
    rows = pa.concat_tables([pq.read_table(p) for p in sorted((source / "tickets").glob("*.parquet"))])
    rows = rows.sort_by("row")
    n0 = rows.num_rows
    if out.exists():
        shutil.rmtree(out)
    (out / "tickets").mkdir(parents=True)
    routing: dict[str, int] = {}
    parts = []
    for k, start in enumerate(range(0, tickets, partition)):
        stop = min(tickets, start + partition)
        index = np.arange(start, stop) % n0
        part = rows.take(pa.array(index))
        part = part.set_column(part.schema.get_field_index("row"), "row", pa.array(np.arange(start, stop)))
        ids = pa.array([f"R-{r:08d}" for r in range(start, stop)], type=pa.large_string())
        part = part.set_column(part.schema.get_field_index("ticket_id"), "ticket_id", ids)
        pq.write_table(part, out / "tickets" / f"part-{k:05d}.parquet")
        for team, count in zip(*np.unique(part.column("predicted").to_numpy(zero_copy_only=False),
                                          return_counts=True)):
            routing[team] = routing.get(team, 0) + int(count)
        parts.append({"index": k, "rows": [start, stop], "state": "done"})
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256(f"{manifest['input']['sha256']} x {tickets}".encode()).hexdigest()
    manifest["input"] = {**manifest["input"], "path": f"{manifest['input']['path']} replicated to {tickets:,} rows",
                         "sha256": digest, "tickets": tickets}
    manifest["partitions"], manifest["partition_size"] = parts, partition
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    summary = json.loads((source / "summary.json").read_text(encoding="utf-8"))
    summary["tickets"] = tickets
    summary["routing"] = {t: routing.get(t, 0) for t in summary["teams"]}
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    if (source / "tokens.parquet").is_file():       # the per-word aggregates: the source's means, counts scaled
        tokens = pq.read_table(source / "tokens.parquet")
        scaled = pa.array((tokens.column("tickets").to_numpy() * (tickets // n0)).astype("int64"))
        tokens = tokens.set_column(tokens.schema.get_field_index("tickets"), "tickets", scaled)
        pq.write_table(tokens, out / "tokens.parquet")
    return out


def time_compare_scans(scan_a: Path, scan_b: Path, repeats: int = 3) -> dict:
    """compare_scans on two (large) scans: the median and every run's seconds, and what it found."""
    import statistics

    from ticketnet.compare import compare_scans

    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = compare_scans(scan_a, scan_b)
        times.append(time.perf_counter() - t0)
    return {"tickets": result["tickets"], "changed": result["changed"]["count"], "seconds": statistics.median(times),
            "runs": times, "target_s": 10.0}
