"""Freed memory handed back to the system while analysts work, and the per-ticket results too once they have left."""

# The caches are bounded (max_entries, and TICKET_TTL_S per entry); but what they hold, and what the
# allocator keeps for reuse (ticketnet._runtime.allocator.keep_freed_memory), stays after the last analyst has gone
# (docs/performance.md, "Memory"). A server idle for IDLE_S seconds drops the per-ticket caches (inspections,
# interpretations, chart specs, the tables st.cache_data copies out) and trims the heap; the router, the split-wide
# tables and the results on disk stay, so the next analyst waits only for the ticket they open.
#
# Under load the heap is trimmed every TRIM_S seconds too. The allocator keeps freed blocks where they were for
# speed (each one given back is a page fault when reused), so without a trim what a page run frees stays resident
# until the next quiet spell, and the resident size swings with the mix of page runs (docs/performance.md, "Memory").
# On jemalloc (the launcher's choice where it is installed) freed pages go back on their own within about 10 s,
# so only the idle release purges them.

from __future__ import annotations

import gc
import json
import os
import threading
import time
from collections.abc import Callable, Sequence

import streamlit as st

IDLE_S = 120.0           # no websocket connected for this long (sessions themselves go 30 s after theirs closed)
CHECK_S = 5.0
TRIM_S = 30.0            # while anyone is connected: freed heap handed back this often


def connected_sessions() -> int | None:
    """Sessions with a live websocket on this server; None when it cannot be read (no server, another Runtime)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    manager = getattr(Runtime.instance(), "_session_mgr", None)        # no public count in Streamlit 1.67
    try:
        return int(manager.num_active_sessions())
    except (AttributeError, TypeError):
        return None


def trim_heap() -> None:
    """Hand the heap's free pages back (glibc malloc_trim); the live objects and every cache stay."""
    from ticketnet._runtime import allocator

    allocator.release_freed_memory()


def release_idle_memory() -> None:
    """Drop the per-ticket results and hand the freed memory back (glibc malloc_trim)."""
    from dashboard.data import ticket
    from ticketnet._runtime.allocator import release_freed_memory

    st.cache_data.clear()
    for cached in (ticket.removal_variants, ticket.forward_memo):
        cached.clear()
    gc.collect()
    release_freed_memory()


class MemoryLog:
    """Every `every_s` seconds, one JSON line appended to `path`: the time, this server's pid, connected sessions,
    resident MB and its allocator's census (ticketnet._runtime.allocator.heap_stats: live heap against what the
    allocator holds). For whoever runs the server under load: where a growing resident size is. One write per
    line (O_APPEND), so the servers of a team can share one file; a line that cannot be written is skipped."""

    def __init__(self, path, count: Callable[[], int | None], every_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        from ticketnet._runtime.allocator import HEAP_CENSUS_S

        self.path, self.count, self.clock = path, count, clock
        self.every_s = HEAP_CENSUS_S if every_s is None else every_s
        self.logged_at: float | None = None

    def line(self) -> dict:
        from ticketnet._runtime.allocator import heap_stats
        from ticketnet._runtime.proc import status_kb

        stats = {k: round(v, 2) if isinstance(v, float) else v for k, v in heap_stats().items()}
        return {"t": round(time.time(), 2), "pid": os.getpid(), "sessions": self.count(),
                "rss_mb": round(status_kb(os.getpid(), "VmRSS") / 1024, 2), **stats}

    def __call__(self) -> None:
        now = self.clock()
        if self.logged_at is not None and now - self.logged_at < self.every_s:
            return
        self.logged_at = now
        data = (json.dumps(self.line()) + "\n").encode()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError:
            return
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


class IdleWatch:
    """Calls `release` once after `idle_s` seconds with no session connected (`count`), again only after analysts
    have come back and gone again; while anyone is connected, calls `trim` (if given) every `trim_s` seconds.
    `step(now)` does one check; `run` checks every `check_s` seconds forever, calling each of `every_check` first
    (the expired sessions' reaping: their memory is what the release then hands back)."""

    def __init__(self, count: Callable[[], int | None], release: Callable[[], None], idle_s: float = IDLE_S,
                 check_s: float = CHECK_S, every_check: Sequence[Callable[[], object]] = (),
                 trim: Callable[[], object] | None = None, trim_s: float = TRIM_S) -> None:
        self.count, self.release, self.idle_s, self.check_s = count, release, idle_s, check_s
        self.every_check = tuple(every_check)
        self.trim, self.trim_s = trim, trim_s
        self.idle_since: float | None = None
        self.trimmed_at: float | None = None
        self.released = False
        self.releases = 0
        self.trims = 0

    def step(self, now: float) -> None:
        n = self.count()
        if n is None or n > 0:
            self.idle_since, self.released = None, False
            if n and self.trim is not None:
                if self.trimmed_at is None:
                    self.trimmed_at = now             # the first trim a full interval after analysts arrive
                elif now - self.trimmed_at >= self.trim_s:
                    self.trimmed_at, self.trims = now, self.trims + 1
                    self.trim()
            return
        self.trimmed_at = None
        if self.idle_since is None:
            self.idle_since = now
        if not self.released and now - self.idle_since >= self.idle_s:
            self.release()
            self.released, self.releases = True, self.releases + 1

    def run(self) -> None:
        while True:
            time.sleep(self.check_s)
            for check in self.every_check:
                try:
                    check()
                except Exception:              # noqa: BLE001 - nor may a failed check
                    pass
            try:
                self.step(time.monotonic())
            except Exception:                  # noqa: BLE001 - a failed release must never end the watch
                self.released = True


@st.cache_resource(show_spinner=False)
def _watch() -> threading.Thread:
    from dashboard.server.sessions import SessionReaper
    from ticketnet._runtime.allocator import jemalloc_active
    from ticketnet.paths import memory_log

    reaper = SessionReaper.for_runtime()
    checks = [] if reaper is None else [reaper.reap]
    if (log := memory_log()) is not None:
        census = MemoryLog(log, connected_sessions)
        census()                                   # the first line when the first visitor arrives, then every 30 s
        checks.append(census)
    watch = IdleWatch(connected_sessions, release_idle_memory, every_check=checks,
                      trim=None if jemalloc_active() else trim_heap)     # jemalloc hands pages back by itself
    thread = threading.Thread(target=watch.run, name="ticketnet-idle-watch", daemon=True)
    thread.start()
    return thread


def watch_idle() -> None:
    """Once per server process: start the watch (a no-op on later calls and under AppTest, which has no visitors)."""
    from dashboard.data import model

    if model._serving():                  # noqa: SLF001 - the one test of "a real server" the data layer has
        _watch()
