"""keep_freed_memory takes effect on glibc and the entry points call it once before any tensor work."""

from __future__ import annotations

import platform

import pytest

import ticketnet._runtime.allocator as allocator
from ticketnet.__main__ import main


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_glibc_takes_both_settings():
    assert allocator.keep_freed_memory() is True


def test_no_mallopt_means_no_change(monkeypatch):
    monkeypatch.setattr(allocator.ctypes.util, "find_library", lambda name: "no-such-libc.so.404")
    assert allocator.keep_freed_memory() is False
    assert allocator.return_large_blocks() is False and allocator.limit_arenas(2) is False


def test_the_cli_sets_it_before_running_a_command(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: calls.append("set") or True)
    assert main(["predict", "--weights", "/no/such/router.pt", "--text", "a ticket"]) == 1
    assert calls == ["set"]
    assert "error" in capsys.readouterr().err


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_glibc_takes_an_arena_limit_and_a_bad_one_is_refused():
    assert allocator.limit_arenas(2) is True
    assert allocator.return_large_blocks() is True
    assert allocator.keep_freed_memory() is True                    # the CLI's settings back, for later tests
    with pytest.raises(ValueError, match="at least 1"):
        allocator.limit_arenas(0)

