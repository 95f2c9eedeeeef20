"""Helpers for the corpus tests (the shared scan fixtures live in tests/conftest.py): CSVs, in-process scans, file checks."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

N_TICKETS = 240
PARTITION = 80


def write_csv(path: Path, rows: list[dict], columns=("ticket_id", "text", "team")) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow([r.get(c, "") for c in columns])
    return path


def sync_scan(input_path: Path, out: Path, weights: Path, level: str, partition_size: int, **kw) -> dict:
    """run_scan in this process with one torch thread (what each worker uses), so files compare byte for byte."""
    import torch

    from ticketnet.corpus.engine import run_scan

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return run_scan(input_path, out, level=level, scheduler=kw.pop("scheduler", "synchronous"),
                        partition_size=partition_size, weights=weights, **kw)
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def effects_scan(corpus_csv, artifacts, tmp_path_factory) -> Path:
    """An uninterrupted effects-level scan in 8 partitions: what resumed and cluster runs must reproduce."""
    out = tmp_path_factory.mktemp("corpus_effects") / "scan"
    sync_scan(corpus_csv, out, artifacts.weights, "effects", 30)
    return out


def same_files(a: Path, b: Path) -> None:
    """The scan's results (tickets, tokens, summary) are byte for byte the same in both folders."""
    names = sorted(p.relative_to(a).as_posix() for p in [*(a / "tickets").glob("*.parquet"), a / "summary.json"]
                   + ([a / "tokens.parquet"] if (a / "tokens.parquet").exists() else []))
    assert names == sorted(p.relative_to(b).as_posix() for p in [*(b / "tickets").glob("*.parquet"), b / "summary.json"]
                           + ([b / "tokens.parquet"] if (b / "tokens.parquet").exists() else []))
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
