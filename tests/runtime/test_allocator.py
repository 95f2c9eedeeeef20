"""keep_freed_memory takes effect on glibc and the entry points call it once before any tensor work."""

from __future__ import annotations

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
