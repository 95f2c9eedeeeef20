"""background_priority lowers the calling thread's priority only, and only inside the block."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from ticketnet._runtime.priority import BACKGROUND_NICE, background_priority

linux = pytest.mark.skipif(sys.platform != "linux", reason="per-thread niceness is Linux's")


def nice_of(tid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, tid)


@linux
def test_only_the_calling_thread_and_its_children_go_lower_and_it_comes_back_as_root():
    seen = {}

    def background():
        tid = threading.get_native_id()
        seen["before"] = nice_of(tid)
        with background_priority() as lowered:
            seen["lowered"] = lowered
            seen["inside"] = nice_of(tid)
            child = threading.Thread(target=lambda: seen.setdefault("child", nice_of(threading.get_native_id())))
            child.start()
            child.join()
            seen["main"] = nice_of(main_tid)
        seen["after"] = nice_of(tid)

    main_tid = threading.get_native_id()
    t = threading.Thread(target=background)
    t.start()
    t.join()
    assert seen["lowered"] and seen["inside"] == max(seen["before"], BACKGROUND_NICE)
    assert seen["child"] == seen["inside"]                   # threads started inside inherit it
    assert seen["main"] == nice_of(main_tid) == seen["before"]    # the rest of the process keeps its own
    if os.geteuid() == 0:                                   # raising it back needs the privilege
        assert seen["after"] == seen["before"]


def test_the_split_niceness_is_read_from_the_environment_within_bounds(monkeypatch):
    from ticketnet import paths

    for value, want in (("", 10), ("0", 0), ("5", 5), ("40", 19), ("-3", 0), ("soon", 10)):
        monkeypatch.setenv(paths.SPLIT_NICE_ENV, value)
        assert paths.split_nice() == want, value
    for value, want in (("", 0), ("2", 2), ("-1", 0), ("two", 0)):
        monkeypatch.setenv(paths.WORKERS_ENV, value)
        assert paths.interpret_workers() == want, value
