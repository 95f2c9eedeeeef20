"""The Corpus page's data: scans found on disk, opened once per change, ticket queries cached per filter set."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.data.store import stamp
from ticketnet import paths
from ticketnet._runtime.atomic import write_atomic
from ticketnet.corpus import query
from ticketnet.corpus.query import SORTS, Filters  # noqa: F401  (the page's sort orders and filters)

SHIPPED = "shipped"                      # the scan of the shipped valid and test splits (`make corpus-demo`)
UPLOAD_LIMIT_MB = 50                     # .streamlit/config.toml maxUploadSize: about 250,000 tickets of 200 bytes


scans_root = paths.scans_dir           # $TICKETNET_SCANS, else artifacts/scans


def shipped_folder() -> Path:
    return scans_root() / SHIPPED


def found_scans() -> list[Path]:
    """Finished scans directly under the scans folder, the shipped one first."""
    root = scans_root()
    if not root.is_dir():
        return []
    found = [p for p in sorted(root.iterdir()) if p.is_dir() and query.is_scan(p)]
    return sorted(found, key=lambda p: (p.name != SHIPPED, p.name))


@st.cache_data(show_spinner="Opening the scan…", max_entries=8)
def _open(folder: str, key: tuple) -> query.Scan:
    return query.open_scan(folder)


def open_scan(folder: Path) -> query.Scan:
    """The scan's summary and per-token table (the ticket rows stay on disk); raises ScanError."""
    return _open(str(folder), stamp(folder / "summary.json"))


@st.cache_data(show_spinner=False, max_entries=64)
def _tickets(folder: str, key: tuple, filters: query.Filters, limit: int) -> tuple[pd.DataFrame, int]:
    return query.tickets(query.open_scan(folder), filters, limit)


def tickets(scan: query.Scan, filters: query.Filters, limit: int = 500) -> tuple[pd.DataFrame, int]:
    return _tickets(str(scan.folder), stamp(scan.folder / "summary.json"), filters, limit)


def ticket(scan: query.Scan, ticket_id: str) -> dict | None:
    return query.ticket(scan, ticket_id)


def shipped_inputs() -> list[Path]:
    return [paths.data_path() / "valid.csv", paths.data_path() / "test.csv"]


def run_scan(inputs, out: Path, progress: Callable[[float, str], None], level: str = "full") -> dict:
    """A scan on a local cluster (one worker per core), reporting progress as (fraction, words)."""
    from ticketnet.corpus.engine import run_scan as scan

    def report(p) -> None:
        eta = f", about {p.eta:,.0f} s left" if p.eta is not None else ""
        progress(p.tickets_done / max(1, p.tickets_total),
                 f"{p.tickets_done:,} of {p.tickets_total:,} tickets ({p.rate:,.0f}/s{eta})")

    progress(0.0, "checking the input and starting a local Dask cluster…")
    return scan(inputs, out, level=level, weights=paths.weights_path(), progress=report, overwrite=False,
                partition_size=5_000, workers=os.cpu_count() or 1)


def save_upload(name: str, data: bytes) -> Path:
    """Keep an uploaded file under the scans folder (outside git), named by its content's hash."""
    digest = hashlib.sha256(data).hexdigest()[:16]
    suffix = ".parquet" if name.lower().endswith(".parquet") else ".csv"
    path = scans_root() / "uploads" / f"{digest}{suffix}"
    if not path.exists():
        write_atomic(path, data)
    return path


def upload_scan_folder(upload: Path) -> Path:
    return scans_root() / f"upload-{upload.stem}"
