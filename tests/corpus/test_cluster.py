"""The worker task hands each partition's freed memory back, so a worker's memory does not grow partition by partition."""

from __future__ import annotations

import pytest

from ticketnet._runtime import allocator
from ticketnet.corpus import cluster


def test_each_partition_task_releases_the_freed_memory_after_it_ran(monkeypatch):
    calls = []
    monkeypatch.setattr(cluster, "scan_partition", lambda *a: calls.append("scan") or {"tickets": 1})
    monkeypatch.setattr(cluster, "release_freed_memory", lambda: calls.append("release") or True)
    assert cluster.scan_and_release(None, None, "route", "out") == {"tickets": 1}
    assert calls == ["scan", "release"]


def test_a_failed_partition_still_releases_its_memory(monkeypatch):
    calls = []

    def fail(*_a):
        raise OSError("disk full")

    monkeypatch.setattr(cluster, "scan_partition", fail)
    monkeypatch.setattr(cluster, "release_freed_memory", lambda: calls.append("release") or True)
    with pytest.raises(OSError):
        cluster.scan_and_release(None, None, "route", "out")
    assert calls == ["release"]


def test_release_freed_memory_answers_without_failing():
    assert isinstance(allocator.release_freed_memory(), bool)
