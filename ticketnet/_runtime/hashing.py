"""SHA-256 of a set of files, the key that ties a stored result to the exact weights and data it came from."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path


def files_hash(paths: Iterable[str | Path], missing_ok: bool = True) -> str:
    """SHA-256 over each file's name, a NUL and its bytes, in order, hex. A file that cannot be read hashes as its
    name and a marker, or with `missing_ok=False` raises the OSError."""
    h = hashlib.sha256()
    for p in paths:
        p = Path(p)
        h.update(p.name.encode() + b"\0")
        try:
            with open(p, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        except OSError:
            if not missing_ok:
                raise
            h.update(b"\0missing")
    return h.hexdigest()


def file_sha256(path: str | Path) -> str:
    """SHA-256 of one file's bytes, hex (what router.json records for each split it was trained and scored on)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
