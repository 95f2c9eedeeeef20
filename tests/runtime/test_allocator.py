"""keep_freed_memory takes effect on glibc and the entry points call it once before any tensor work."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

import ticketnet._runtime.allocator as allocator
from ticketnet.__main__ import main


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_glibc_takes_both_settings():
    assert allocator.keep_freed_memory() is True


def test_no_mallopt_means_no_change(monkeypatch):
    monkeypatch.setattr(allocator.ctypes.util, "find_library", lambda name: "no-such-libc.so.404")
    assert allocator.keep_freed_memory() is False
    assert allocator.limit_arenas(2) is False
    assert allocator.keep_small_pages() is False


def test_the_cli_sets_it_before_running_a_command(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: calls.append("set") or True)
    assert main(["predict", "--weights", "/no/such/router.pt", "--text", "a ticket"]) == 1
    assert calls == ["set"]
    assert "error" in capsys.readouterr().err


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_glibc_takes_an_arena_limit_and_a_bad_one_is_refused():
    assert allocator.limit_arenas(2) is True
    with pytest.raises(ValueError, match="at least 1"):
        allocator.limit_arenas(0)



@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="Linux's prctl only")
def test_small_pages_hold_for_the_process_and_the_processes_it_starts():
    # In a child interpreter: the setting cannot be undone, and this test process must keep the kernel's own.
    code = ("import subprocess, sys; from ticketnet._runtime.allocator import keep_small_pages; "
            "print(keep_small_pages()); "
            "print(subprocess.run(['cat', '/proc/self/status'], capture_output=True, text=True).stdout"
            ".count('THP_enabled:\\t0'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "1"]


def test_jemalloc_is_preloaded_first_and_the_user_s_settings_win():
    lib = "libjemalloc.so.2"
    env = allocator.preload_environment({"LD_PRELOAD": f"libfoo.so:{lib}", "PATH": "/bin"}, lib)
    assert env["LD_PRELOAD"] == f"{lib} libfoo.so" and env["PATH"] == "/bin"
    assert env["MALLOC_CONF"] == allocator.JEMALLOC_CONF
    assert "muzzy_decay_ms:0" in allocator.JEMALLOC_CONF, "purged pages must leave the resident size"
    assert allocator.preload_environment({"MALLOC_CONF": "narenas:1"}, lib)["MALLOC_CONF"] == "narenas:1"


def test_jemalloc_is_found_by_the_linker_s_name_or_not_at_all(monkeypatch):
    monkeypatch.setattr(allocator.ctypes.util, "find_library", lambda name: None)
    assert allocator.jemalloc_library() is None
    monkeypatch.setattr(allocator.ctypes.util, "find_library", lambda name: "libjemalloc.so.2")
    assert allocator.jemalloc_library() == "libjemalloc.so.2"


def test_this_process_runs_on_glibc_and_its_trim_is_glibc_s():
    assert allocator.jemalloc_active() is False
    assert isinstance(allocator.release_freed_memory(), bool)


@pytest.mark.skipif(allocator.jemalloc_library() is None, reason="libjemalloc2 is not installed (make jemalloc)")
def test_under_jemalloc_freed_memory_is_purged_and_leaves_the_resident_size():
    # In a child interpreter with jemalloc preloaded: 200 MB written, freed, and purged at once (no decay waited for).
    code = ("import gc, numpy as np; from ticketnet._runtime import allocator as a\n"
            "rss = lambda: int(open('/proc/self/statm').read().split()[1]) * 4096 >> 20\n"
            "base = rss(); x = [np.ones(1 << 17) for _ in range(200)]; full = rss(); del x; gc.collect()\n"
            "print(a.jemalloc_active(), a.release_freed_memory(), full - base >= 190, rss() - base < 40)")
    env = allocator.preload_environment({**os.environ, "MALLOC_CONF": "background_thread:false,dirty_decay_ms:-1"},
                                        allocator.jemalloc_library())
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == ["True", "True", "True", "True"]


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallinfo2")
def test_glibc_s_census_sees_a_block_taken_and_given_back():
    import numpy as np

    before = allocator.heap_stats()
    block = np.ones(25 << 20 >> 3)                               # 25 MB, over the mmap threshold: counted in hblkhd
    during = allocator.heap_stats()
    del block
    after = allocator.heap_stats()
    assert before["allocator"] == "glibc" and before["python_blocks"] > 1000
    assert 24 < during["in_use_mb"] - before["in_use_mb"] < 27 and during["held_mb"] >= during["in_use_mb"]
    assert abs(after["in_use_mb"] - before["in_use_mb"]) < 2


@pytest.mark.skipif(allocator.jemalloc_library() is None, reason="libjemalloc2 is not installed (make jemalloc)")
def test_jemalloc_s_census_tells_live_blocks_from_held_pages():
    # A child on jemalloc with no decay: 100 MB freed stays held (resident) but leaves the live heap; the purge
    # then hands it back.
    code = ("import json, numpy as np; from ticketnet._runtime import allocator as a\n"
            "s = [a.heap_stats()]; x = [np.ones(1 << 17) for _ in range(100)]; s.append(a.heap_stats()); del x\n"
            "s.append(a.heap_stats()); a.release_freed_memory(); s.append(a.heap_stats()); print(json.dumps(s))")
    env = allocator.preload_environment({**os.environ, "MALLOC_CONF": "background_thread:false,dirty_decay_ms:-1"},
                                        allocator.jemalloc_library())
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    base, full, freed, purged = __import__("json").loads(out)
    assert base["allocator"] == "jemalloc" and set(allocator.JEMALLOC_STATS) <= {k[9:-3] for k in base if
                                                                                 k.startswith("jemalloc_")}
    assert 99 < full["in_use_mb"] - base["in_use_mb"] < 102
    assert freed["in_use_mb"] - base["in_use_mb"] < 2 and freed["held_mb"] - base["held_mb"] > 95
    assert purged["held_mb"] - base["held_mb"] < 10
