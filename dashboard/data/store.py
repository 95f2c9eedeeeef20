"""What outlives a server restart: split-wide results on disk, and typed tickets too long for a link's `?text=`."""

# The folder is $TICKETNET_CACHE, else ~/.cache/ticketnet (outside the repository, so git never sees it). Split
# results are keyed by the SHA-256 of the weights (router.pt, vocab.json, router.json) and of the split's CSV, so new
# weights or data never reuse an old table; every file is written with `ticketnet._runtime.atomic.write_atomic` (a crash leaves
# the old file or none), tables as Parquet. A file that cannot be read (truncated, another format) counts as absent.
#
# Typed tickets: up to `state.URL_TEXT_LIMIT` characters ride in the link as they are (`?text=`); longer ones are
# packed (UTF-8, zlib, base64url without padding) into `?ztext=` while that stays under `PACKED_URL_LIMIT`
# characters; longer still, the text is stored here under its hash and the link carries `?typed=<hash>`.

from __future__ import annotations

import base64
import hashlib
import io
import re
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from ticketnet import paths
from ticketnet._runtime.atomic import write_atomic

PACKED_URL_LIMIT = 6_000          # characters of `?ztext=`; browsers and proxies take far more, but links stay sane
TYPED_MAX_CHARS = 200_000         # never unpack or load more than this (a crafted link cannot inflate memory)
_HASH = re.compile(r"^[0-9a-f]{16,64}$")

# pandas is imported where a table is read or written: the launcher imports this module before anything else, to
# see what the first page will need.
if TYPE_CHECKING:
    import pandas as pd


cache_dir = paths.cache_dir       # $TICKETNET_CACHE, else ~/.cache/ticketnet


def stamp(path: Path) -> tuple[str, int, int]:
    """A cache key that changes when the file changes: (path, mtime in ns, size); missing files key as -1."""
    try:
        found = path.stat()
        return (str(path), found.st_mtime_ns, found.st_size)
    except OSError:
        return (str(path), -1, -1)


# -- split-wide tables ---------------------------------------------------------------------------------------------
# A kind's layout version is part of its file name, so a table stored in an older layout is recomputed, never
# misread: "interpret" 2 is the long table (ticket_id, n, predicted, label, signal, metric, value), "heads" 2 has
# the support columns (support_logit_diff, support_prob).
TABLE_VERSIONS = {"interpret": 2, "heads": 2}


def table_path(kind: str, split: str, weights_hash: str, data_hash: str) -> Path:
    """Where a split's table of `kind` ("routed", "interpret", "heads") for these weights and data lives."""
    version = f"-v{TABLE_VERSIONS[kind]}" if kind in TABLE_VERSIONS else ""
    return cache_dir() / "splits" / f"{kind}-{split}-w{weights_hash[:16]}-d{data_hash[:16]}{version}.parquet"


def save_table(path: Path, df: pd.DataFrame) -> bool:
    """Write `df` as Parquet, atomically. False (nothing written) when the folder is not writable."""
    buffer = io.BytesIO()
    df.to_parquet(buffer, index=False)
    try:
        write_atomic(path, buffer.getvalue())
    except OSError:
        return False
    return True


def load_table(path: Path) -> pd.DataFrame | None:
    """The table stored at `path`, or None if there is none or it cannot be read."""
    import pandas as pd

    if not path.is_file():                # a split not computed yet: every page run asks, so a stat, not a reader
        return None
    try:
        return pd.read_parquet(path)
    except Exception:                     # noqa: BLE001 - missing, truncated or foreign file: recompute, never fail
        return None


# -- typed tickets in links --------------------------------------------------------------------------------------------
def pack_text(text: str) -> str:
    """`text` as a compact URL-safe string: UTF-8, zlib (level 9), base64url without padding."""
    return base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii").rstrip("=")


def unpack_text(packed: str) -> str | None:
    """The text `pack_text` packed, or None for anything else (bad base64, bad zlib, too long, not UTF-8)."""
    try:
        data = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(data, TYPED_MAX_CHARS * 4 + 1)
        if len(raw) > TYPED_MAX_CHARS * 4 or not inflater.eof:
            return None
        return raw.decode("utf-8")
    except (ValueError, zlib.error, UnicodeDecodeError):
        return None


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def save_typed(text: str) -> str | None:
    """Store a typed ticket under its hash; the hash, or None if the folder is not writable."""
    key = text_hash(text)
    path = cache_dir() / "typed" / f"{key}.txt"
    if not path.is_file():
        try:
            write_atomic(path, text.encode("utf-8"))
        except OSError:
            return None
    return key


def load_typed(key: str) -> str | None:
    """The typed ticket stored under `key`, or None (unknown hash, not a hash at all, unreadable)."""
    if not _HASH.match(key or ""):
        return None
    path = cache_dir() / "typed" / f"{key}.txt"
    try:
        if path.stat().st_size > TYPED_MAX_CHARS * 4:
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if text_hash(text) == key else None
