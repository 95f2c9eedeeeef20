"""The Corpus page's data: scans found on disk, opened once per change, ticket queries cached per filter set."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.data import model
from dashboard.data.store import stamp
from ticketnet import paths
from ticketnet._runtime.atomic import write_atomic
from ticketnet.corpus import query
from ticketnet.corpus.query import SORTS, Filters  # noqa: F401  (the page's sort orders and filters)

SHIPPED = "shipped"                      # the scan of the shipped valid and test splits (`make corpus-demo`)
UPLOAD_LIMIT_MB = 50                     # .streamlit/config.toml maxUploadSize: about 250,000 tickets of 200 bytes


ROUTER_SCANS = "routers"                 # scans of the routers other than the default: <scans>/routers/<name>/


def scans_root() -> Path:
    """This session's router's scans and uploads: $TICKETNET_SCANS (else artifacts/scans) for the default router,
    its routers/<name>/ subfolder for another, so a scan is only ever read with the router that made it."""
    name = model.router_name()
    return paths.scans_dir() if name == model.DEFAULT_ROUTER else paths.scans_dir() / ROUTER_SCANS / name


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


@st.cache_data(show_spinner=False, max_entries=8)
def _policy_summary(folder: str, key: tuple) -> dict | None:
    return query.policy_summary(query.open_scan(folder))


def policy_summary(scan: query.Scan) -> dict | None:
    """The automation rate and set sizes of a scan made by a router with a stored policy (None otherwise)."""
    return _policy_summary(str(scan.folder), stamp(scan.folder / "summary.json"))


@st.cache_data(show_spinner=False, max_entries=16)
def _has_label_confidence(folder: str, key: tuple) -> bool:
    return query.has_label_confidence(query.open_scan(folder))


def has_label_confidence(scan: query.Scan) -> bool:
    """Whether the scan's tickets carry the router's probability of their given team (for "labels it doubts")."""
    return _has_label_confidence(str(scan.folder), stamp(scan.folder / "summary.json"))


# Tickets a second on two cores (a local cluster of two workers), by router kind and level: what the page's time
# estimates read. The Tiny router's from `make corpus-demo`; the encoder router's from `bench --corpus --corpus-encoder`
# on larkfield-minilm (docs/corpus.md), whose word removals make effects the slow level.
RATES = {"tiny": {"full": 50.0}, "encoder": {"route": 40.0, "effects": 0.9}}
ENCODER_LEVELS = ("route", "effects")    # an encoder router's scan has no level full (ERASER: the Tiny router only)


def scan_levels() -> tuple[str, ...]:
    """The levels the page scans this session's router at: full for the Tiny router, route or effects for an encoder."""
    return ENCODER_LEVELS if model.is_encoder_router() else ("full",)


def seconds_for(tickets: int, level: str) -> int:
    """About how long the page's scan of `tickets` takes on two cores."""
    rate = RATES["encoder" if model.is_encoder_router() else "tiny"].get(level, RATES["tiny"]["full"])
    return max(1, round(tickets / rate))


def is_encoder_scan(scan: query.Scan) -> bool:
    """Whether an encoder router made the scan: its tokens are the encoder's words, and it carries the card's flags."""
    return scan.summary.get("router_kind") == "encoder"


def shipped_inputs() -> list[Path]:
    return [model.data_folder() / "valid.csv", model.data_folder() / "test.csv"]


def rows_in(csv: Path) -> int:
    """How many tickets a split CSV holds (0 when it is missing), read with the splits' own reader."""
    from dashboard.data import splits

    name = csv.stem
    try:
        return len(splits.split_rows(name)) if name in splits.available() else 0
    except Exception:                                           # noqa: BLE001 - unreadable: the scan will say why
        return 0


def run_scan(inputs, out: Path, progress: Callable[[float, str], None], level: str = "full") -> dict:
    """A scan on a local cluster (one worker per core), reporting progress as (fraction, words)."""
    from ticketnet.corpus.engine import run_scan as scan

    def report(p) -> None:
        eta = f", about {p.eta:,.0f} s left" if p.eta is not None else ""
        progress(p.tickets_done / max(1, p.tickets_total),
                 f"{p.tickets_done:,} of {p.tickets_total:,} tickets ({p.rate:,.0f}/s{eta})")

    progress(0.0, "checking the input and starting a local Dask cluster…")
    return scan(inputs, out, level=level, weights=model.weights_path(), progress=report, overwrite=False,
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


# -- what the page offers ------------------------------------------------------------------------------------------
MIN_TICKETS = 5                          # the reliance view's default "tokens seen in at least … tickets"
MIN_TICKETS_MAX = 100_000
ANY = "any"
WORD_URL_LIMIT = 80                      # a longer word stays in the session only


# -- compare with another scan of the same input --------------------------------------------------------
def comparable_scans(scan: query.Scan) -> dict[str, Path]:
    """Other finished scans of the same input (same SHA-256 and size), by any router: label → folder. The default
    router's scans sit in the scans folder, another router's in its routers/<name>/ subfolder."""
    from ticketnet.corpus import manifest as mf

    own = scan.manifest.get("input", {})
    roots = [(model.DEFAULT_ROUTER, paths.scans_dir())]
    try:
        roots += [(p.name, p) for p in sorted((paths.scans_dir() / ROUTER_SCANS).iterdir()) if p.is_dir()]
    except OSError:
        pass
    found: dict[str, Path] = {}
    for router, root in roots:
        try:
            children = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            continue
        for folder in children:
            if folder.resolve() == Path(scan.folder).resolve() or not query.is_scan(folder):
                continue
            other = (mf.read(folder) or {}).get("input", {})
            if other.get("sha256") == own.get("sha256") and other.get("tickets") == own.get("tickets"):
                found[f"{router} · {folder.name}"] = folder
    return found


@st.cache_data(show_spinner="Comparing the two scans…", max_entries=8)
def _compare_scans(folder_a: str, folder_b: str, key_a: tuple, key_b: tuple) -> dict:
    from ticketnet.compare import compare_scans

    return compare_scans(Path(folder_a), Path(folder_b), sample=20, words=5, threads=2)


def compare_scans(scan: query.Scan, other: Path) -> dict:
    """`ticketnet.compare.compare_scans(scan, other)`, once per version of both scans; raises ValueError."""
    return _compare_scans(str(scan.folder), str(other), stamp(Path(scan.folder) / "summary.json"),
                          stamp(Path(other) / "summary.json"))


def comparison_frames(comparison: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The comparison's sample of tickets that change team, and its words per team, as tables."""
    words = [{"team": t, **w} for t, ws in (comparison["words"] or {}).items() for w in ws]
    return pd.DataFrame(comparison["changed"]["sample"]), pd.DataFrame(words)
