"""With the network cut, the dashboard still works: every page renders, charts and fonts included, and the browser
asks nothing of any host but the server.

Runs tests.e2e.offline_walk (a real server and chromium) inside a new network namespace that has only loopback:
`unshare --net sh -c 'ip link set lo up && exec python -m tests.e2e.offline_walk'`. Needs chromium and permission to
create a network namespace (root, or unprivileged user namespaces); without them the test is skipped, except under
CI (environment variable CI set), where that is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.e2e.browser import ROOT, require_chromium

pytestmark = pytest.mark.browser
require_chromium()
pytest.importorskip("playwright.sync_api")

NO_NETWORK = "ip link set lo up && exec \"$0\" \"$@\""


def _can_cut_the_network() -> str | None:
    """None if `unshare --net` with a loopback works here, else why not."""
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (util-linux / iproute2)"
    try:
        probe = subprocess.run(["unshare", "--net", "sh", "-c", "ip link set lo up"], capture_output=True, text=True,
                               timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"`unshare --net` failed: {exc}"
    if probe.returncode != 0:
        return f"`unshare --net` is not permitted here: {probe.stderr.strip()[:200]}"
    return None


def test_every_page_renders_with_the_network_cut(small_data, tmp_path):
    reason = _can_cut_the_network()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    # small_data points TICKETNET_DATA at 40-ticket splits (and TICKETNET_WEIGHTS at the router); the walk inherits it.
    proc = subprocess.run(["unshare", "--net", "sh", "-c", NO_NETWORK, sys.executable, "-m", "tests.e2e.offline_walk",
                           str(tmp_path)], cwd=ROOT, env={**os.environ, "TICKETNET_SCANS": str(tmp_path / "scans")},
                          capture_output=True, text=True, timeout=240)
    report = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, report
    for title in ("Tickets", "Heads", "Interpretation", "The formula", "Verification", "Cost", "Corpus"):
        assert title in proc.stdout, report
    assert ", 0 for other hosts" in proc.stdout, report
