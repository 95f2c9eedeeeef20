"""The Corpus page's data: scans found on disk, opened once per change, ticket queries cached per filter set."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
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


def shipped_inputs() -> list[Path]:
    return [model.data_folder() / "valid.csv", model.data_folder() / "test.csv"]


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


# -- what the reader chose on the page: kept for the session, mirrored in the URL with readable values ---------------
# Streamlit drops a widget's state when a run does not draw it, so a visit to Heads would reset the Corpus page's
# filters; each run keeps the widgets' values under a plain session key and seeds any key Streamlit dropped from it.
# The URL carries the values that differ from the defaults (`?scan=shipped&team=delivery&pred=payments&misrouted=1
# &conf=0-0.6&sort=least-confident-first`); a link is adopted when it differs from what this session last wrote.

MIN_TICKETS = 5                          # the reliance view's default "tokens seen in at least … tickets"
MIN_TICKETS_MAX = 100_000
ANY = "any"
FOLDER_KEY = "corpus_folder"
VIEW_DEFAULTS: dict[str, object] = {     # widget key -> default ("" for the team: the scan's first team)
    "corpus_team": "",
    "corpus_min_tickets": MIN_TICKETS,
    "corpus_token": "",
    "corpus_pred": ANY,
    "corpus_true": ANY,
    "corpus_misrouted": False,
    "corpus_conf": (0.0, 1.0),
    "corpus_disagree": (0.0, 1.0),
    "corpus_sort": next(iter(SORTS)),
}
URL_NAMES = {FOLDER_KEY: "scan", "corpus_team": "team", "corpus_min_tickets": "min", "corpus_token": "word",
             "corpus_pred": "pred", "corpus_true": "true", "corpus_misrouted": "misrouted", "corpus_conf": "conf",
             "corpus_disagree": "disagree", "corpus_sort": "sort"}
CELL_NAMES = {"true": "cell_true", "predicted": "cell_pred"}          # the confusion cell that filters the tickets
WORD_URL_LIMIT = 80                      # a longer word stays in the session only
_KEPT = "_corpus_view"                   # the values of the last Corpus run (a plain key: survives other pages)
_WROTE = "_corpus_view_url"              # the parameters this session last wrote to the URL
_ADOPT = "_corpus_view_adopt"            # parameters of a new link, applied once the scan they name is open
_CELL = "_corpus_cell"                   # {"true", "predicted"}: the confusion cell that filters the tickets
_CELL_SEEN = "_corpus_cell_seen"         # the chart's selection on the previous run


def sort_slug(sort: str) -> str:
    """A sort order as it reads in a URL: "least confident first" -> "least-confident-first"."""
    return sort.replace(" ", "-")


def _range(text: str | None) -> tuple[float, float] | None:
    """"0-0.6" as (0.0, 0.6), clipped to [0, 1] and ordered; None if it does not read as a range."""
    try:
        lo, hi = (round(min(1.0, max(0.0, float(x))), 2) for x in str(text).split("-", 1))
    except ValueError:
        return None
    return min(lo, hi), max(lo, hi)


def view_to_query(values: Mapping[str, object], cell: Mapping[str, str] | None, first_scan: str,
                  first_team: str) -> dict[str, str]:
    """The URL parameters for the page's choices: only those that differ from their defaults, in readable words."""
    defaults = {**VIEW_DEFAULTS, "corpus_team": first_team, FOLDER_KEY: first_scan}
    out: dict[str, str] = {}
    for key, name in URL_NAMES.items():
        v = values.get(key, defaults[key])
        if v == defaults[key] or v in (None, ""):
            continue
        if key == FOLDER_KEY:
            out[name] = Path(str(v)).name
        elif key == "corpus_misrouted":
            out[name] = "1"
        elif key in ("corpus_conf", "corpus_disagree"):
            lo, hi = v
            out[name] = f"{lo:g}-{hi:g}"
        elif key == "corpus_token":
            if len(str(v)) <= WORD_URL_LIMIT:
                out[name] = str(v)
        elif key == "corpus_sort":
            out[name] = sort_slug(str(v))
        else:
            out[name] = str(v)
    if cell:
        out.update({name: cell[part] for part, name in CELL_NAMES.items()})
    return out


def scan_from_query(params: Mapping[str, str], scans: Sequence[str]) -> str | None:
    """The scan folder (one of `scans`, full paths) a URL names by its folder name, or None."""
    name = params.get(URL_NAMES[FOLDER_KEY])
    return next((s for s in scans if Path(s).name == name), None)


def view_from_query(params: Mapping[str, str], teams: Sequence[str], sorts: Sequence[str]
                    ) -> tuple[dict[str, object], dict[str, str] | None]:
    """The page's choices a URL names (every other at its default) and its confusion cell; nonsense is dropped."""
    values: dict[str, object] = {**VIEW_DEFAULTS, "corpus_team": teams[0] if teams else ""}
    get = {key: params.get(name) for key, name in URL_NAMES.items()}
    if get["corpus_team"] in teams:
        values["corpus_team"] = get["corpus_team"]
    if get["corpus_min_tickets"] and get["corpus_min_tickets"].isdigit():
        values["corpus_min_tickets"] = min(MIN_TICKETS_MAX, max(1, int(get["corpus_min_tickets"])))
    if get["corpus_token"]:
        values["corpus_token"] = get["corpus_token"][:WORD_URL_LIMIT]
    for key in ("corpus_pred", "corpus_true"):
        if get[key] in teams:
            values[key] = get[key]
    values["corpus_misrouted"] = get["corpus_misrouted"] in ("1", "true", "yes")
    for key in ("corpus_conf", "corpus_disagree"):
        if get[key] and (bounds := _range(get[key])) is not None:
            values[key] = bounds
    wanted = (get["corpus_sort"] or "").replace("-", " ").strip()
    if wanted in sorts:
        values["corpus_sort"] = wanted
    cell = {part: params.get(name) for part, name in CELL_NAMES.items()}
    return values, (cell if all(v in teams for v in cell.values()) else None)


def _url_view() -> dict[str, str]:
    names = [*URL_NAMES.values(), *CELL_NAMES.values()]
    return {name: st.query_params[name] for name in names if name in st.query_params}


def restore_scan(scans: Sequence[str]) -> None:
    """Before the scan selectbox: adopt a new link (its scan now, the rest once the scan is open), and keep the
    chosen scan one of those on disk."""
    ss = st.session_state
    url = _url_view()
    if url and url != ss.get(_WROTE):
        ss[_ADOPT] = url
        ss[_WROTE] = url                 # adopted once, whatever the page writes back later
        ss[FOLDER_KEY] = scan_from_query(url, scans) or scans[0]
    if ss.get(FOLDER_KEY) not in scans:
        kept = ss.get(_KEPT, {}).get(FOLDER_KEY)
        ss[FOLDER_KEY] = kept if kept in scans else scans[0]


def restore_view(teams: Sequence[str], sorts: Sequence[str]) -> None:
    """Once the scan is open, before its widgets: apply a new link's choices, then seed every widget key Streamlit
    dropped with the session's kept value, and drop values this scan cannot take (another scan's team)."""
    ss = st.session_state
    adopt = ss.pop(_ADOPT, None)
    if adopt is not None:
        values, cell = view_from_query(adopt, teams, sorts)
        ss.update(values)
        ss[_CELL] = cell
    kept = ss.get(_KEPT, {})
    for key, default in VIEW_DEFAULTS.items():
        if key not in ss:
            ss[key] = kept.get(key, default)
    if ss["corpus_team"] not in teams:
        ss["corpus_team"] = teams[0]
    for key in ("corpus_pred", "corpus_true"):
        if ss[key] != ANY and ss[key] not in teams:
            ss[key] = ANY
    if ss["corpus_sort"] not in sorts:
        ss["corpus_sort"] = sorts[0]
    cell = ss.get(_CELL)
    if cell and not all(cell.get(part) in teams for part in CELL_NAMES):
        ss.pop(_CELL, None)


def confusion_cell(picked: Sequence[Mapping[str, str]], fresh: bool) -> dict[str, str] | None:
    """The confusion cell that filters the tickets. Only a change of the chart's selection sets it (a click) or
    clears it (a double-click); a chart drawn afresh (`fresh`: after another page, or from a link) starts with no
    selection, and the session's cell, from a click or a link, stays."""
    ss = st.session_state
    chosen = {"true": picked[0].get("true"), "predicted": picked[0].get("predicted")} if picked else None
    if fresh:
        ss[_CELL_SEEN] = None
    if chosen != ss.get(_CELL_SEEN):
        ss[_CELL_SEEN] = chosen
        ss[_CELL] = chosen
    return ss.get(_CELL)


def clear_confusion_cell() -> None:
    st.session_state.pop(_CELL, None)


def remember(first_scan: str, first_team: str) -> None:
    """After the widgets: keep the page's choices for the session and write the non-default ones to the URL."""
    from dashboard import state

    ss = st.session_state
    values = {key: ss.get(key, default) for key, default in {**VIEW_DEFAULTS, FOLDER_KEY: first_scan}.items()}
    for key in ("corpus_conf", "corpus_disagree"):
        values[key] = tuple(values[key])
    ss[_KEPT] = values
    query = view_to_query(values, ss.get(_CELL), first_scan, first_team)
    state.write_query([*URL_NAMES.values(), *CELL_NAMES.values()], query)
    ss[_WROTE] = query


# -- compare with another scan of the same input (issue 25) --------------------------------------------------------
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
