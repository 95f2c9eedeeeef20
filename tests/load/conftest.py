# tests/load/: the browser-free load client's tests on one real server (test_client.py, test_faults.py), the heavy
# ones marked `load`, skipped unless asked for (`pytest -m load tests/load`; the hook is in tests/conftest.py), and
# load_test.py, the browser load test, a script run by `make load-test-browser` that pytest does not collect.
from __future__ import annotations

import asyncio
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

collect_ignore = ["load_test.py"]


@dataclass
class LiveServer:
    url: str
    proc: subprocess.Popen
    log: Path
    scans: Path                  # its $TICKETNET_SCANS: empty until a test puts a scan there (`with_scan`)
    cache: Path                  # its $TICKETNET_CACHE: the tables and results it keeps on disk

    def with_scan(self, scan: Path) -> None:
        """Make `scan` one of the server's corpus scans (the Corpus page lists the folder on every run)."""
        link = self.scans / scan.name
        if not link.exists():
            link.symlink_to(scan, target_is_directory=True)


@pytest.fixture(scope="session")
def live_server(artifacts, tmp_path_factory):
    """One real dashboard server for the load tests, with its own cache and scans folders."""
    from ticketnet.bench.load.run import memory_log_path
    from ticketnet.bench.load.server import dashboard_server
    from ticketnet.paths import MEMORY_LOG_ENV

    log = tmp_path_factory.mktemp("load_server") / "server.log"
    scans, cache = tmp_path_factory.mktemp("load_scans"), tmp_path_factory.mktemp("load_cache")
    env = {"TICKETNET_CACHE": str(cache), "TICKETNET_SCANS": str(scans),
           "TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data),
           MEMORY_LOG_ENV: str(memory_log_path(log))}
    with dashboard_server(log, env) as (url, proc):
        yield LiveServer(url, proc, log, scans, cache)


def run(coro):
    """Run one coroutine to its end (the tests are plain functions; the client is asyncio)."""
    return asyncio.run(coro)
