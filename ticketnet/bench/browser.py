"""Debian's Chromium and a real `streamlit run` server: the pieces the bench and the browser tests share."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ticketnet.paths import ROOT

APP = ROOT / "dashboard" / "app.py"
CHROMIUM = Path(os.environ.get("TICKETNET_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    """A TCP port on localhost that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60,
                 detail: Callable[[], str] = lambda: "") -> None:
    """Poll Streamlit's health endpoint until it answers; RuntimeError (with `detail()`) if the server exits first
    or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not become healthy{detail()}")
