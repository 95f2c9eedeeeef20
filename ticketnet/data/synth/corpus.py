"""A streamed synthetic corpus: the split generator's tickets, any number of them, as a folder of Parquet files."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

from ticketnet.data.synth.generator import COLUMNS, _ticket

FILE_ROWS = 50_000                  # rows per Parquet file: a scan partition's worth, a few MB each
ID_PREFIX = "C-"                    # corpus ids never look like the splits' T-NNNNN


def corpus_rows(seed: int, first: int, count: int) -> Iterator[dict[str, str]]:
    """Tickets first .. first + count − 1 of the corpus of `seed`, ids C-00000000 upwards.

    Each block of FILE_ROWS tickets has its own generator, seeded by (seed, block), so any file can be made
    without the ones before it and memory never depends on the corpus size. `first` must start a block.
    """
    if first % FILE_ROWS:
        raise ValueError(f"first must be a multiple of {FILE_ROWS}, got {first}")
    rng = random.Random(f"ticketnet-corpus:{seed}:{first // FILE_ROWS}")
    for index in range(first, first + count):
        yield {"ticket_id": f"{ID_PREFIX}{index:08d}", **_ticket(rng)}


def write_corpus(n: int, out: str | Path, seed: int, progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Write `n` tickets to `out`/corpus-00000.parquet, … (FILE_ROWS rows each, every file written atomically:
    a killed run leaves whole files only). Columns: ticket_id, text, team, evidence, pattern, distractor."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if n < 1:
        raise ValueError(f"a corpus needs at least one ticket, got {n}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for first in range(0, n, FILE_ROWS):
        count = min(FILE_ROWS, n - first)
        rows = list(corpus_rows(seed, first, count))
        table = pa.table({c: pa.array([r[c] for r in rows], pa.string()) for c in COLUMNS})
        path = out / f"corpus-{first // FILE_ROWS:05d}.parquet"
        tmp = path.with_name(f".{path.name}.tmp")
        pq.write_table(table, tmp, compression="zstd")
        tmp.replace(path)
        paths.append(path)
        if progress is not None:
            progress(first + count, n)
    return paths
