"""The repository's commit-msg hook: a subject of at most 72 characters, never empty."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parents[1] / ".githooks" / "commit-msg"


@pytest.mark.parametrize("message, ok", [
    ("Ticket map: ring the picked ticket\n\nThe why, as long as it needs to be " + "x" * 200, True),
    ("x" * 72, True),
    ("x" * 73, False),
    ("# a comment git strips\n" + "y" * 80, False),
    ("\n\nbody only", False),
])
def test_the_hook_refuses_a_long_or_empty_subject(tmp_path, message, ok):
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    done = subprocess.run(["bash", str(HOOK), str(path)], capture_output=True, text=True)
    assert (done.returncode == 0) is ok, done.stderr
    if not ok:
        assert done.stderr.startswith("commit-msg: the subject is")


def test_the_makefile_installs_it():
    makefile = (HOOK.parents[1] / "Makefile").read_text(encoding="utf-8")
    assert "git config core.hooksPath .githooks" in makefile
    assert "test: $(VENV)/.dev-deps chromium haproxy jemalloc hooks" in makefile
