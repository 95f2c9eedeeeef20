"""SHA-256 of a set of files, the key that ties a stored result to the exact weights and data it came from."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path


def files_hash(paths: Iterable[Path]) -> str:
    """SHA-256 over the files' names and bytes, in order (a missing file hashes as its name alone), hex."""
    h = hashlib.sha256()
    for p in paths:
        h.update(str(Path(p).name).encode())
        try:
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError:
            h.update(b"\0missing")
    return h.hexdigest()
