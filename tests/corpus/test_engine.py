"""Whole scans: a cluster losing a worker mid-scan or its uncollected results, a killed scan resumed, other folders."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.corpus.conftest import same_files, sync_scan, write_csv
from ticketnet.corpus.manifest import ScanError

ROOT = Path(__file__).resolve().parents[2]


def _markers(out: Path) -> int:
    return len(list((out / "parts").glob("part-*.json"))) if (out / "parts").is_dir() else 0


def _wait_until(done: Callable[[], bool], timeout: float = 240) -> None:
    """Poll every 50 ms until done() holds or the timeout passes (the assertions that follow tell which)."""
    deadline = time.time() + timeout
    while not done() and time.time() < deadline:
        time.sleep(0.05)


@contextmanager
def _two_worker_cluster() -> Iterator[tuple]:
    """A LocalCluster of two one-thread worker processes, and a client of the test's own (the current one)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=50) as cluster, Client(cluster) as client:
        yield cluster, client


def test_a_worker_killed_mid_scan_is_replaced_and_the_scan_completes(corpus_csv, effects_scan, artifacts, tmp_path):
    out = tmp_path / "scan"
    with _two_worker_cluster() as (cluster, client):
        killed: list[int] = []
        pid = next(iter(client.run(os.getpid).values()))              # asked here: clients stay on this thread

        def kill_one_worker() -> None:
            _wait_until(lambda: _markers(out) >= 1)                  # once work is under way ...
            os.kill(pid, signal.SIGKILL)                              # ... SIGKILL one worker process
            killed.append(pid)

        killer = threading.Thread(target=kill_one_worker)
        killer.start()
        summary = sync_scan(corpus_csv, out, artifacts.weights, "effects", 30, scheduler=cluster.scheduler_address)
        killer.join()
        assert killed and summary["tickets"] == 240
        assert killed[0] not in client.run(os.getpid).values()       # the nanny started a new worker
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["state"] == "complete" and {p["state"] for p in manifest["partitions"]} == {"done"}
    same_files(out, effects_scan)                                     # the same bytes as an in-process run


def test_results_lost_with_their_worker_before_gathering_are_recomputed(corpus_csv, effects_scan, artifacts, tmp_path):
    # The scan's own client is not the current one here (the test's is), as in a notebook with a client of its own.
    out = tmp_path / "scan"
    with _two_worker_cluster() as (cluster, client):
        pids = client.run(os.getpid)
        lost: list[str] = []

        def kill_a_holder(progress) -> None:
            if lost:
                return
            _wait_until(lambda: _markers(out) >= 8)                   # every partition computed, one gathered
            held = client.who_has()
            holders = [w for keys in held.values() for w in keys]
            victim = max(set(holders), key=holders.count)              # the worker holding the most results
            lost.extend(k for k, ws in held.items() if ws == (victim,))
            os.kill(pids[victim], signal.SIGKILL)
            _wait_until(lambda: victim not in client.scheduler_info()["workers"])   # the scheduler knows they are gone

        summary = sync_scan(corpus_csv, out, artifacts.weights, "effects", 30, scheduler=cluster.scheduler_address,
                            progress=kill_a_holder)
        assert lost and summary["tickets"] == 240                     # results were lost and computed again
    same_files(out, effects_scan)


def test_a_scan_killed_with_sigkill_resumes_and_ends_identical(corpus_csv, effects_scan, artifacts, tmp_path):
    out = tmp_path / "scan"
    command = [sys.executable, "-m", "ticketnet", "scan", str(corpus_csv), "--out", str(out), "--level", "effects",
               "--scheduler", "synchronous", "--partition-size", "30", "--weights", str(artifacts.weights)]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        _wait_until(lambda: _markers(out) >= 2 or proc.poll() is not None)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)                           # the scan and anything it started
        proc.wait()
    finished = _markers(out)
    assert 2 <= finished < 8, "the scan was not caught mid-way"
    assert json.loads((out / "manifest.json").read_text())["state"] == "running"
    assert not (out / "summary.json").exists()
    redone: list[int] = []
    sync_scan(corpus_csv, out, artifacts.weights, "effects", 30,
              progress=lambda p: redone.append(p.partitions_done))
    assert redone[0] == finished + 1 and redone[-1] == 8             # only the unfinished partitions ran
    assert not list(out.rglob(".*.tmp"))
    same_files(out, effects_scan)


def test_a_folder_of_another_scan_is_refused_unless_overwritten(corpus_csv, effects_scan, artifacts, tmp_path, valid_rows):
    other = write_csv(tmp_path / "other.csv", valid_rows[300:310])
    with pytest.raises(ScanError, match="another input"):
        sync_scan(other, effects_scan, artifacts.weights, "effects", 30)
    with pytest.raises(ScanError, match="level effects"):
        sync_scan(corpus_csv, effects_scan, artifacts.weights, "full", 30)
    out = tmp_path / "copy"
    sync_scan(other, out, artifacts.weights, "route", 30)
    assert sync_scan(corpus_csv, out, artifacts.weights, "route", 100, overwrite=True)["tickets"] == 240
    assert len(list((out / "tickets").glob("*.parquet"))) == 3        # nothing left of the first scan
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ScanError, match="holds no scan"):
        sync_scan(other, tmp_path / "busy", artifacts.weights, "route", 30)


def test_several_inputs_in_one_scan_and_every_output_names_its_level(artifacts, tmp_path, valid_rows):
    import pyarrow.parquet as pq

    a = write_csv(tmp_path / "a.csv", valid_rows[:20])
    b = write_csv(tmp_path / "b.csv", valid_rows[20:30], ("ticket_id", "text"))
    out = tmp_path / "scan"
    summary = sync_scan([a, b], out, artifacts.weights, "effects", 15)
    assert summary["tickets"] == 30 and summary["labelled"] == 20 and summary["level"] == "effects"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["level"] == "effects" and [p["rows"] for p in manifest["partitions"]] == [[0, 15], [15, 20], [20, 30]]
    assert manifest["versions"]["dask"] and manifest["weights"]["sha256"] and manifest["run"]["tickets"] == 30
    for f in [*(out / "tickets").glob("*.parquet"), out / "tokens.parquet"]:
        assert pq.read_schema(f).metadata[b"ticketnet.level"] == b"effects"


def test_a_scan_in_an_older_format_is_refused_not_resumed(tmp_path):
    # Its partitions' sums are keyed another way: merged with new ones they would be misread.
    from ticketnet.corpus import manifest as mf

    new = {"format": mf.FORMAT, "weights": {"sha256": "w"}, "input": {"sha256": "i"}, "level": "full",
           "partition_size": 30}
    mf.check_same_scan(tmp_path, dict(new), new)
    with pytest.raises(ScanError, match=f"format {mf.FORMAT - 1} "):
        mf.check_same_scan(tmp_path, {**new, "format": mf.FORMAT - 1}, new)
