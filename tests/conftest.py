"""Shared fixtures: the repository's paths and the router/data the dashboard tests run against."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "dashboard" / "app.py"
DEFAULT_TICKET = "T-65052"
HEADS = "../pages/heads.py"                  # AppTest names pages relative to the entry script, dashboard/app.py
INTERPRETATION = "../pages/interpretation.py"


def app_test(timeout: float = 90, **query):
    """An AppTest of the whole dashboard (entry script and navigation), with `query` as the URL's parameters."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at.query_params.update(query)
    return at


@dataclass(frozen=True)
class Artifacts:
    weights: Path          # router.pt (vocab.json and router.json beside it)
    data: Path             # folder with train.csv, valid.csv, test.csv
    shipped: bool          # True when these are the repository's own weights/ and data/


def _artifacts() -> Artifacts:
    env_w, env_d = os.environ.get("TICKETNET_WEIGHTS", "").strip(), os.environ.get("TICKETNET_DATA", "").strip()
    weights = Path(env_w) if env_w else ROOT / "weights" / "router.pt"
    data = Path(env_d) if env_d else ROOT / "data"
    return Artifacts(weights, data, shipped=not env_w and not env_d)


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own empty $TICKETNET_CACHE: split results stored on disk by one test (or by a dashboard
    run on this machine) never turn up in another, and nothing is written to ~/.cache."""
    folder = tmp_path_factory.mktemp("ticketnet_cache")
    monkeypatch.setenv("TICKETNET_CACHE", str(folder))
    return folder


@pytest.fixture(scope="session")
def artifacts() -> Artifacts:
    """The router and splits to test against ($TICKETNET_WEIGHTS / $TICKETNET_DATA, else the shipped ones).

    Missing files skip the test with the command that makes them, except under CI, where they fail it.
    """
    a = _artifacts()
    need = [a.weights, a.weights.parent / "vocab.json", a.weights.parent / "router.json",
            *(a.data / f"{s}.csv" for s in ("train", "valid", "test"))]
    missing = [str(p) for p in need if not p.is_file()]
    if missing:
        message = (f"router or data missing ({', '.join(missing)}); make them with `python -m ticketnet synth` "
                   "and `python -m ticketnet train`")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return a


@pytest.fixture(scope="session")
def router(artifacts):
    from ticketnet import Router

    return Router.load(artifacts.weights)


@pytest.fixture(scope="session")
def valid_rows(artifacts) -> list[dict]:
    from ticketnet import load_split

    return load_split(artifacts.data / "valid.csv")


@pytest.fixture
def app_env(artifacts, monkeypatch):
    """Environment for an in-process AppTest of the dashboard, pointed at `artifacts`."""
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(artifacts.weights))
    monkeypatch.setenv("TICKETNET_DATA", str(artifacts.data))
    return artifacts


@pytest.fixture
def small_data(artifacts, tmp_path, monkeypatch):
    """A data folder with the first 40 tickets of each split (the default ticket kept in valid), so split-wide
    computations finish in seconds; the environment points the dashboard at it and at `artifacts`' router."""
    import csv

    from ticketnet import load_split

    for split in ("train", "valid", "test"):
        rows = load_split(artifacts.data / f"{split}.csv")
        keep = rows[:40]
        if split == "valid" and not any(r["ticket_id"] == DEFAULT_TICKET for r in keep):
            keep = keep[:39] + [r for r in rows if r["ticket_id"] == DEFAULT_TICKET]
        with open(tmp_path / f"{split}.csv", "w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(keep)
    monkeypatch.setenv("TICKETNET_WEIGHTS", str(artifacts.weights))
    monkeypatch.setenv("TICKETNET_DATA", str(tmp_path))
    return tmp_path
