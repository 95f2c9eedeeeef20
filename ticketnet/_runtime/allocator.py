"""The process's allocator: glibc malloc's settings (freed tensor memory kept, trimmed on request), or jemalloc."""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1    # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
PR_SET_THP_DISABLE = 41  # Linux prctl options (linux/prctl.h)
PR_GET_THP_DISABLE = 42


def keep_freed_memory(mmap_threshold: int = 32 << 20, trim_threshold: int = 256 << 20) -> bool:
    """Serve blocks under `mmap_threshold` (glibc's documented maximum on 64-bit: 32 MiB) from the heap and give
    heap memory back to the system only past `trim_threshold` of free space at its top. True if glibc took both
    settings; False where either was refused or there is no glibc (nothing else changes).

    glibc's defaults adapt: one large freed tensor raises the mmap threshold, after which the heap is trimmed
    and grown again between operations, and every regrowth page-faults. Measured on the n = 128 removal batch
    right after a plain forward of 129 x 128 tokens: 1,120 page faults and 43 ms instead of 0 and 31 ms.
    The price is up to `trim_threshold` of freed memory held for reuse per malloc arena (threads may get their own).
    """
    return _thresholds(mmap_threshold, trim_threshold)


def _thresholds(mmap_threshold: int, trim_threshold: int) -> bool:
    """Both thresholds set (each tried even if the other is refused); True if glibc took both."""
    return _mallopt(M_MMAP_THRESHOLD, mmap_threshold) & _mallopt(M_TRIM_THRESHOLD, trim_threshold)


def _libc(function: str):
    """The C library's `function`, or None where there is no glibc (or no C library found by that name)."""
    try:
        return getattr(ctypes.CDLL(ctypes.util.find_library("c")), function)
    except (OSError, AttributeError, TypeError):
        return None


def _mallopt(param: int, value: int) -> bool:
    """glibc's mallopt(param, value); False where it refused or there is no glibc."""
    mallopt = _libc("mallopt")
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(param, value))


def limit_arenas(arenas: int = 2) -> bool:
    """At most `arenas` glibc malloc arenas for the whole process; call it before threads start. True if glibc
    took the setting; False where it was refused or there is no glibc.

    glibc gives threads that contend for the heap arenas of their own, up to 8 per core, and each keeps its own
    freed memory; a server whose sessions' script threads come and go spreads its heap over all of them.
    """
    if arenas < 1:
        raise ValueError(f"arenas must be at least 1, got {arenas}")
    return _mallopt(M_ARENA_MAX, arenas)


def keep_small_pages() -> bool:
    """No transparent huge pages for this process or the processes it starts (Linux `prctl(PR_SET_THP_DISABLE)`),
    so memory handed back to the system stays handed back. True if the kernel took it; False elsewhere.

    NumPy asks for huge pages on its large buffers (madvise MADV_HUGEPAGE), which marks stretches of the malloc
    heap. After `release_freed_memory` returns their free pages, the kernel's khugepaged merges each marked 2 MiB
    stretch back into one huge page, however few of its pages were still in use, and the freed memory comes back
    with no thread running. Measured on the dashboard server after 5 minutes of 20 analysts: 622 MB after the idle
    release and 696 MB seven minutes later, every thread idle; with this, 602 MB and flat (docs/performance.md,
    "Memory").
    """
    prctl = _libc("prctl")
    if prctl is None:
        return False
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 and prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1


def release_freed_memory() -> bool:
    """Hand every malloc arena's free pages back to the system (glibc `malloc_trim(0)`, or jemalloc's purge where
    it is the allocator), whatever the thresholds above. True if anything was released (jemalloc: the purge ran);
    False if nothing was free or there is neither.

    For a long-lived process that runs one large job after another (a scan worker, one partition per task): the
    freed memory `keep_freed_memory` holds is kept where each job left it, and the heap's layout differs from job
    to job, so without this the resident size left between jobs climbed partition after partition (1 worker,
    partitions of 500 tickets at level effects: 724 MB after the first, 1,031 MB after the fifth; with it,
    442-452 MB after every one) and each job's peak sat on top of it.
    """
    if (mallctl := _mallctl()) is not None:
        return _purge_jemalloc(mallctl)
    trim = _libc("malloc_trim")
    if trim is None:
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return bool(trim(0))


# jemalloc as the server's allocator: it keeps each size class of block in slabs of its own, so the short-lived
# tensors of one page run and the long-lived objects of the caches do not share pages, and it hands freed pages back
# by itself after `dirty_decay_ms` (a background thread). Pages purged at once rather than kept lazily (muzzy 0), so
# what was given back leaves the resident size. docs/performance.md ("Memory") measures both allocators side by side.
JEMALLOC_CONF = "background_thread:true,dirty_decay_ms:10000,muzzy_decay_ms:0"
MALLCTL_ARENAS_ALL = 4096    # jemalloc's "every arena" index (jemalloc.h)


def jemalloc_library() -> str | None:
    """jemalloc's library name as the dynamic linker finds it (Debian: libjemalloc2), or None where it is not
    installed."""
    name = ctypes.util.find_library("jemalloc")
    return name if name and name.startswith("libjemalloc.so") else None


def _mallctl():
    """jemalloc's `mallctl` where this process's malloc is jemalloc's (preloaded; glibc has none), else None."""
    try:
        mallctl = ctypes.CDLL(None).mallctl
    except (OSError, AttributeError):
        return None
    mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    mallctl.restype = ctypes.c_int
    return mallctl


def jemalloc_active() -> bool:
    """Whether this process's malloc is jemalloc's (preloaded)."""
    return _mallctl() is not None


def preload_environment(environ: dict[str, str], library: str) -> dict[str, str]:
    """`environ` with `library` preloaded first and jemalloc's settings (the user's MALLOC_CONF, when set, wins)."""
    preload = [p for p in environ.get("LD_PRELOAD", "").replace(":", " ").split() if p != library]
    return {**environ, "LD_PRELOAD": " ".join([library, *preload]),
            "MALLOC_CONF": environ.get("MALLOC_CONF", JEMALLOC_CONF)}


def _purge_jemalloc(mallctl) -> bool:
    """jemalloc's `arena.<all>.purge`: every arena's unused dirty pages handed back now. True if it took it."""
    return mallctl(f"arena.{MALLCTL_ARENAS_ALL}.purge".encode(), None, None, None, 0) == 0


class _Mallinfo2(ctypes.Structure):
    """glibc's `struct mallinfo2` (malloc.h, glibc 2.33 and later): every field a size_t."""
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


JEMALLOC_STATS = ("allocated", "active", "resident", "mapped", "retained")
HEAP_CENSUS_S = 30.0     # how often a dashboard server logs heap_stats where it is asked to ($TICKETNET_MEMORY_LOG)


def _jemalloc_stats(mallctl) -> dict[str, float] | None:
    """jemalloc's `stats.*` in MB, refreshed (`epoch`) first; None where it was built without statistics."""
    epoch = ctypes.c_uint64(1)
    if mallctl(b"epoch", None, None, ctypes.byref(epoch), ctypes.sizeof(epoch)) != 0:
        return None
    out = {}
    for name in JEMALLOC_STATS:
        value, size = ctypes.c_size_t(0), ctypes.c_size_t(ctypes.sizeof(ctypes.c_size_t))
        if mallctl(f"stats.{name}".encode(), ctypes.byref(value), ctypes.byref(size), None, 0) != 0:
            return None
        out[name] = value.value / 2**20
    return out


def heap_stats() -> dict[str, float | str]:
    """What the process's allocator holds, in MB: `in_use_mb` (blocks the program has and has not freed) and
    `held_mb` (what the allocator keeps for them, freed blocks between them included: jemalloc's resident pages,
    glibc's arenas and mmapped blocks), with the allocator's name and Python's count of allocated blocks. Tells
    a growing resident size that is live objects from one that is the allocator's keeping (docs/performance.md,
    "Memory"). Without either allocator's statistics, only the block count."""
    import sys

    out: dict[str, float | str] = {"python_blocks": float(sys.getallocatedblocks())}
    if (mallctl := _mallctl()) is not None:
        stats = _jemalloc_stats(mallctl)
        if stats is not None:
            out.update(allocator="jemalloc", in_use_mb=stats["allocated"], held_mb=stats["resident"],
                       **{f"jemalloc_{k}_mb": v for k, v in stats.items()})
        return out
    mallinfo2 = _libc("mallinfo2")
    if mallinfo2 is not None:
        mallinfo2.argtypes, mallinfo2.restype = [], _Mallinfo2
        info = mallinfo2()
        out.update(allocator="glibc", in_use_mb=(info.uordblks + info.hblkhd) / 2**20,
                   held_mb=(info.arena + info.hblkhd) / 2**20)
    return out
