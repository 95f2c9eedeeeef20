"""Split-wide work at a lower scheduling priority than the sessions' interactive runs (Linux: per-thread nice)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

BACKGROUND_NICE = 10        # the dashboard's default ($TICKETNET_SPLIT_NICE, ticketnet.paths.split_nice)


@contextmanager
def background_priority(nice: int = BACKGROUND_NICE) -> Iterator[bool]:
    """Run the block with the calling thread (and the threads it starts meanwhile, which inherit it) at niceness
    `nice` or lower priority; yields whether the priority was lowered. On Linux niceness belongs to each thread, so
    the other sessions' script threads keep theirs and get the cores first when both want them. Back to the old
    value afterwards where the process may raise it again (root); else the thread keeps it, and a Streamlit script
    thread ends with its run."""
    if sys.platform != "linux" or not hasattr(os, "setpriority"):
        yield False
        return
    tid = threading.get_native_id()
    try:
        before = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, max(before, nice))
    except OSError:
        yield False
        return
    try:
        yield True
    finally:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, before)
        except OSError:
            pass
