"""A whole scan: check the input, send the unfinished partitions to Dask, merge the partial sums, keep the manifest."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ticketnet.corpus import manifest as mf
from ticketnet.corpus.aggregate import merge_partials, merge_tokens
from ticketnet.corpus.manifest import ScanError
from ticketnet.corpus.scan import check_level, done_marker, part_name, scan_partition
from ticketnet.corpus.source import Partition, input_files, input_hash, open_source
from ticketnet.catalog import is_encoder
from ticketnet.loading import load_router
from ticketnet.paths import weights_path

PARTITION_SIZE = 50_000
SYNCHRONOUS = "synchronous"          # --scheduler synchronous: dask's in-process scheduler, no cluster (tests, debugging)
ROUTER_KIND = "router_kind"           # in an encoder scan's summary: "encoder" (a Tiny router's scan has none)
OUTPUTS = ("tickets", "parts", "input", "tokens.parquet", "summary.json", mf.MANIFEST)


@dataclass(frozen=True)
class Progress:
    tickets_done: int                # finished tickets, those of an earlier (resumed) run included
    tickets_total: int
    partitions_done: int
    partitions_total: int
    seconds: float                   # since this run started sending work
    tickets_this_run: int            # what the rate is measured on

    @property
    def rate(self) -> float:
        return self.tickets_this_run / self.seconds if self.seconds > 0 else 0.0

    @property
    def eta(self) -> float | None:
        return (self.tickets_total - self.tickets_done) / self.rate if self.rate > 0 else None


def _clear(out: Path) -> None:
    for name in OUTPUTS:
        p = out / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def _finished(out: Path, part: Partition, level: str) -> bool:
    marker = done_marker(out, part.index)
    try:
        return json.loads(marker.read_text(encoding="utf-8")).get("level") == level
    except (OSError, ValueError):
        return False


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB: VmHWM, which starts afresh when a program starts (getrusage's
    ru_maxrss does not: a child keeps the high-water mark of the parent it was forked from, across exec)."""
    try:
        for line in open("/proc/self/status", encoding="ascii"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_synchronous(parts: list[Partition], level: str, out: Path, weights: Path, done: Callable[[dict], None],
                     run: dict) -> None:
    import dask

    router = load_router(weights)
    run["workers"], run["ready"] = 0, time.perf_counter()
    for part in parts:                # one partition at a time, so progress moves and a Ctrl-C loses one at most
        done(dask.delayed(scan_partition)(router, part, level, str(out)).compute(scheduler=SYNCHRONOUS))


def _run_distributed(parts: list[Partition], level: str, out: Path, weights: Path, sha256: str,
                     scheduler: str | None, workers: int | None, done: Callable[[dict], None],
                     log: Callable[[str], None], run: dict) -> None:
    from distributed import as_completed

    from ticketnet.corpus.cluster import RouterPlugin, dask_client, run_partition

    with dask_client(scheduler, workers, log) as client:
        client.register_plugin(RouterPlugin(str(weights), sha256))
        run["workers"], run["ready"] = len(client.scheduler_info()["workers"]), time.perf_counter()
        # Tasks carry a partition (file path and row range) only; a task lost with its worker is run again.
        futures = [client.submit(run_partition, p, level, str(out), key=f"ticketnet-scan-{part_name(p.index)}-{sha256[:8]}",
                                 retries=3, pure=False) for p in parts]
        # On this client's loop: by default as_completed follows the process's current client (a notebook's own,
        # say), and a result lost with its worker would then be awaited on two event loops and fail.
        for future in as_completed(futures, loop=client.loop):
            done(future.result())
        # Each worker's peak memory (the process's maximum resident set since it started): flat as the corpus grows.
        run["worker_peak_rss_mb"] = sorted(client.run(peak_rss_mb).values())


def merge(out: Path, level: str, teams, itos, blocks: int, kind: str = "tiny") -> dict:
    """summary.json and tokens.parquet from the partitions' partial sums (small files, read in partition order);
    an encoder router's summary says so (`router_kind`), its tokens being words."""
    from ticketnet.corpus.scan import _write_json, _write_parquet

    markers = sorted((out / "parts").glob("part-*.json"))
    partials = [json.loads(p.read_text(encoding="utf-8"))["sums"] for p in markers]
    summary = merge_partials(partials, teams, level)
    if kind != "tiny":
        summary[ROUTER_KIND] = kind
    if level != "route":
        sums = [pd.read_parquet(p) for p in sorted((out / "parts").glob("part-*.tokens.parquet"))]
        hists = [pd.read_parquet(p) for p in sorted((out / "parts").glob("part-*.hist.parquet"))]
        tokens = merge_tokens(sums, hists, itos, teams, blocks)
        _write_parquet(tokens, out / "tokens.parquet", level)
        summary["tokens"] = int(tokens["token"].nunique())
    _write_json(summary, out / "summary.json")
    return summary


def run_scan(input_path: str | Path | list, out: str | Path, level: str = "full", scheduler: str | None = None,
             workers: int | None = None, overwrite: bool = False, partition_size: int = PARTITION_SIZE,
             weights: str | Path | None = None, progress: Callable[[Progress], None] | None = None,
             log: Callable[[str], None] = lambda _m: None) -> dict:
    """Scan `input_path` into `out` and return the summary. `scheduler`: None (a LocalCluster of `workers`
    processes, default one per core), a Dask address (tcp://host:8786) or "synchronous" (in this process).

    Bad input raises DataError before any work is sent; a folder holding another scan raises ScanError unless
    `overwrite`. Finished partitions of an interrupted scan of the same input and weights are kept, not redone.
    """
    check_level(level)
    out = Path(out)
    weights = Path(weights or weights_path())
    if is_encoder(weights):
        from ticketnet.corpus.encoder_scan import check_encoder_level

        check_encoder_level(level)
    router = load_router(weights)                       # fails early on bad weights; teams and vocabulary for the merge
    files = input_files(input_path)
    new = {"format": mf.FORMAT, "level": level, "partition_size": partition_size, "versions": mf.versions(),
           "weights": {"path": str(weights.resolve()), "sha256": mf.weights_hash(weights)},
           "input": {"path": ([str(Path(p).resolve()) for p in input_path] if isinstance(input_path, (list, tuple))
                              else str(Path(input_path).resolve())), "files": [str(f) for f in files],
                     "sha256": input_hash(files)}}
    old = mf.read(out)
    if old is not None and overwrite:
        _clear(out)
    elif old is not None:
        mf.check_same_scan(out, old, new)
    elif out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ScanError(f"{out} is a folder that holds no scan; choose an empty or new --out, or --overwrite")
    elif overwrite:
        _clear(out)
    source = open_source(input_path, out / "input", partition_size, router.teams, log, files,
                         new["input"]["sha256"])
    parts = list(source.partitions)
    pending = [p for p in parts if not _finished(out, p, level)]
    new["input"].update(tickets=source.tickets, labelled=source.labelled)
    state = {p.index: ("pending" if p in pending else "done") for p in parts}

    def record(status: str) -> None:
        mf.write(out, {**new, "state": status, "partitions": [
            {"index": p.index, "file": p.source, "rows": [p.row0, p.row0 + p.stop - p.start], "state": state[p.index]}
            for p in parts]})

    record("running")
    done_tickets = sum(p.stop - p.start for p in parts if state[p.index] == "done")
    if len(pending) < len(parts):
        log(f"resuming: {len(parts) - len(pending)} of {len(parts)} partitions already done")
    counters = {"tickets": done_tickets, "parts": len(parts) - len(pending), "new": 0, "t0": time.perf_counter(),
                "written": time.perf_counter()}

    def finished(result: dict) -> None:
        state[result["partition"]] = "done"
        counters["tickets"] += result["tickets"]
        counters["new"] += result["tickets"]
        counters["parts"] += 1
        now = time.perf_counter()
        if now - counters["written"] > 2 or counters["parts"] == len(parts):   # the manifest at most every 2 s
            record("running")
            counters["written"] = now
        if progress is not None:
            progress(Progress(counters["tickets"], source.tickets, counters["parts"], len(parts),
                              now - counters["t0"], counters["new"]))

    run: dict = {}
    if pending:
        if scheduler == SYNCHRONOUS:
            _run_synchronous(pending, level, out, weights, finished, run)
        else:
            _run_distributed(pending, level, out, weights, new["weights"]["sha256"], scheduler, workers, finished, log,
                             run)
    computed = time.perf_counter()
    # An encoder scan's partials are keyed by word text; the Tiny router's by token id, named by its vocabulary.
    itos = None if is_encoder(weights) else router.vocab.itos
    summary = merge(out, level, list(router.teams), itos, router.model.config.n_blocks, router.kind)
    end = time.perf_counter()
    # How this run went (not part of the results, which must not depend on it): wall time, the time the workers
    # computed (from the cluster being ready to the last partition), the merge, and peak memory.
    new["run"] = {"tickets": counters["new"], "seconds": end - counters["t0"],
                  "compute_seconds": computed - run.get("ready", computed), "merge_seconds": end - computed,
                  "workers": run.get("workers"), "worker_peak_rss_mb": run.get("worker_peak_rss_mb"),
                  "client_peak_rss_mb": peak_rss_mb()}
    record("complete")
    summary["seconds"] = new["run"]["seconds"]
    summary["run"] = new["run"]
    return summary
