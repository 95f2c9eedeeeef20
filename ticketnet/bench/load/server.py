"""A real dashboard server (`python -m dashboard`) on a free localhost port, for the load client to drive."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from ticketnet.bench.browser import free_port, wait_healthy
from ticketnet.paths import ROOT

TRACEBACK = re.compile(r"Traceback \(most recent call last\):[\s\S]{0,600}")


def server_command(port: int) -> list[str]:
    """What `make run` starts, bound to localhost, no telemetry."""
    return [sys.executable, "-m", "dashboard", "--server.port", str(port), "--server.headless", "true",
            "--server.address", "localhost", "--browser.gatherUsageStats", "false"]


def team_command(port: int, processes: int, secrets: Path | None = None) -> list[str]:
    """`processes` dashboard servers behind HAProxy (`python -m dashboard.team`), the proxy on `port`; `secrets`:
    the sign-in file for all of them."""
    return [sys.executable, "-m", "dashboard.team", "--processes", str(processes), "--port", str(port),
            *(["--secrets", str(secrets)] if secrets else [])]


@contextlib.contextmanager
def dashboard_server(log: Path, env: dict[str, str] | None = None, timeout: float = 120,
                     processes: int = 0, port: int | None = None,
                     secrets: Path | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """The dashboard on `port` (default: a free one), run from the repository root so .streamlit/config.toml
    applies, its output appended to `log`; yields (url, process) once healthy and stops it afterwards.
    `processes` ≥ 1: that many servers behind HAProxy (the process is their launcher, the parent of them all).
    `secrets`: the sign-in file (a team's, or the one server's)."""
    port = port or free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    command = (team_command(port, processes, secrets) if processes else
               [*server_command(port), *(["--secrets", str(secrets)] if secrets else [])])
    with open(log, "ab") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    try:
        url = f"http://localhost:{port}" if not processes else f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, timeout * max(1, processes), detail=lambda: ":\n" + log.read_text(errors="replace")[-3000:])
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def tracebacks(log: Path, start: int = 0) -> list[str]:
    """The tracebacks the server wrote to `log` from byte `start` on, each cut to its first lines."""
    if not log.is_file():
        return []
    with open(log, "rb") as fh:
        fh.seek(start)
        text = fh.read().decode(errors="replace")
    return [m.group(0)[:600] for m in TRACEBACK.finditer(text)]


def healthy(url: str, timeout: float = 10) -> bool:
    """Whether Streamlit's health endpoint answers "ok" now."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


CACHE_LINE = re.compile(r'^cache_memory_bytes\{cache_type="(\w+)",cache="([^"]+)"\} (\d+)$')


def cache_bytes(url: str, timeout: float = 5) -> dict[str, int]:
    """What each of the server's st.cache_data caches holds, in bytes, from Streamlit's own metrics endpoint (its
    `cache_memory_bytes` family; st.cache_resource entries are not sized there and are left out); {} when the
    server does not answer."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/_stcore/metrics?families=cache_memory_bytes", timeout=timeout) as r:
            text = r.read().decode(errors="replace")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        m = CACHE_LINE.match(line)
        if m and m.group(1) == "st_cache_data":
            out[m.group(2)] = int(m.group(3))
    return out
