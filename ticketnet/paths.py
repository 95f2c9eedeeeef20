"""Where things are: the repository's folders, the environment variables that move them, and the fixed seeds."""

from __future__ import annotations

import os
from pathlib import Path

ROOT: Path = Path(__file__).resolve().parent.parent      # the repository (ticketnet is installed editable)
WEIGHTS: Path = ROOT / "weights" / "router.pt"            # the shipped router; vocab.json and router.json beside it
DATA: Path = ROOT / "data"                                # the shipped train.csv, valid.csv, test.csv

ROUTERS: Path = ROOT / "routers"                          # routers trained on other exports (ignored by git)

ROUTER_ENV = "TICKETNET_ROUTER"                           # the router folder to open (router.pt, vocab.json, ...)
ROUTERS_ENV = "TICKETNET_ROUTERS"                         # the folder whose subfolders the dashboard lists as routers
WEIGHTS_ENV = "TICKETNET_WEIGHTS"                         # older: a router.pt (its vocab.json, router.json beside it)
DATA_ENV = "TICKETNET_DATA"                               # a folder of train/valid/test CSVs for a router without data/
ROUTER_DATA = "data"                                      # a router folder's own splits, written by `train --data FILE`
THREADS_ENV = "TICKETNET_TORCH_THREADS"                   # intra-op threads per dashboard computation
WORKERS_ENV = "TICKETNET_WORKERS"                         # worker processes for the dashboard's interpretations
SPLIT_NICE_ENV = "TICKETNET_SPLIT_NICE"                   # niceness of the dashboard's split-wide runs (0: none)
CACHE_ENV = "TICKETNET_CACHE"                             # where results outlive a restart (default ~/.cache/ticketnet)
SCANS_ENV = "TICKETNET_SCANS"                             # the Corpus page's scans and uploads (default artifacts/scans)
MEMORY_LOG_ENV = "TICKETNET_MEMORY_LOG"                   # a file each dashboard server appends its memory's census to

SYNTH_SEED = 20261129                                     # the generator's seed for the shipped splits
TRAIN_SEED = 1                                            # the shipped weights' seed, picked by `train --seeds 0-4`
CORPUS_SEED = 20270101                                    # `synth --corpus`: its own seeds, ids C-NNNNNNNN


def data_dir() -> Path:
    """Folder holding the shipped `train.csv`, `valid.csv` and `test.csv`."""
    return DATA


def weights_dir() -> Path:
    """Folder holding the shipped router: `router.pt`, `vocab.json`, `router.json`."""
    return WEIGHTS.parent


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def weights_path() -> Path:
    """The router.pt to load: router.pt in $TICKETNET_ROUTER, else $TICKETNET_WEIGHTS, else the shipped one."""
    folder = _env_path(ROUTER_ENV)
    return folder / WEIGHTS.name if folder is not None else _env_path(WEIGHTS_ENV) or WEIGHTS


def router_dir() -> Path:
    """The router folder to open: the folder of `weights_path()`."""
    return weights_path().parent


def router_data(folder: Path) -> Path:
    """The splits a router is read with: its own data/ when it has one (a router trained on an export), else
    $TICKETNET_DATA, else the shipped data/."""
    own = Path(folder) / ROUTER_DATA
    return own if own.is_dir() else (_env_path(DATA_ENV) or DATA)


def data_path() -> Path:
    """The folder of ticket CSVs to read for the router of `router_dir()`."""
    return router_data(router_dir())


def routers_dir() -> Path:
    """Where the dashboard looks for more routers, one per subfolder: $TICKETNET_ROUTERS, else routers/."""
    return _env_path(ROUTERS_ENV) or ROUTERS


def cache_dir() -> Path:
    """Where results outlive a server restart: $TICKETNET_CACHE, else ~/.cache/ticketnet (outside the repository)."""
    return _env_path(CACHE_ENV) or Path.home() / ".cache" / "ticketnet"


def _int_env(name: str, default: int, low: int, high: int | None = None) -> int:
    """$`name` as an integer clamped to [low, high], else `default` when it is unset, empty or not an integer."""
    try:
        value = int(os.environ.get(name, "").strip() or default)
    except ValueError:
        return default
    return max(low, value if high is None else min(high, value))


def torch_threads() -> int:
    """Intra-op threads per dashboard computation: $TICKETNET_TORCH_THREADS (a positive integer), else 1."""
    return _int_env(THREADS_ENV, 1, 1)


def interpret_workers() -> int:
    """Worker processes that run a dashboard server's interpretations: $TICKETNET_WORKERS (an integer ≥ 0), else 0,
    every interpretation in the server's own process."""
    return _int_env(WORKERS_ENV, 0, 0)


def split_nice(default: int = 10) -> int:
    """Niceness of the dashboard's split-wide runs: $TICKETNET_SPLIT_NICE (0 to 19; 0 runs them like any page),
    else `default`."""
    return _int_env(SPLIT_NICE_ENV, default, 0, 19)


def memory_log() -> Path | None:
    """The file a dashboard server appends a line of its memory's census to every 30 s: $TICKETNET_MEMORY_LOG, else
    None (no census)."""
    return _env_path(MEMORY_LOG_ENV)


def scans_dir() -> Path:
    """Where the Corpus page keeps its scans and uploads: $TICKETNET_SCANS, else artifacts/scans/ in the repository
    (ignored by git)."""
    return _env_path(SCANS_ENV) or ROOT / "artifacts" / "scans"
