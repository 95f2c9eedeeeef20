"""The worker side of a Dask scan: the router loaded once per worker process, and the task each partition runs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from distributed import WorkerPlugin, get_worker

from ticketnet._runtime.allocator import release_freed_memory
from ticketnet.corpus.manifest import ScanError, weights_hash
from ticketnet.corpus.scan import scan_partition
from ticketnet.corpus.source import Partition

PLUGIN = "ticketnet-router"


class RouterPlugin(WorkerPlugin):
    """Loads the router (Tiny or encoder) when a worker joins (and again when a dead worker is replaced): tasks carry only a
    partition's path and rows, never the weights. The worker must see `weights` at the same path (shared disk)
    and its files must hash to `sha256`, so every worker computes with exactly the client's router."""

    name = PLUGIN

    def __init__(self, weights: str, sha256: str) -> None:
        self.weights, self.sha256 = weights, sha256
        self.router = None

    def setup(self, worker) -> None:
        import torch

        from ticketnet._runtime.allocator import keep_freed_memory
        from ticketnet.loading import load_router

        torch.set_num_threads(1)           # one process per core: intra-op threads would only fight each other
        # An encoder router's tokenizer would start a thread pool of its own for the same core.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        keep_freed_memory()
        if weights_hash(self.weights) != self.sha256:
            raise ScanError(f"{self.weights} on worker {worker.address} differs from the client's weights")
        self.router = load_router(self.weights)    # either kind; an encoder's libraries are imported here, in the worker

    def __getstate__(self) -> dict:        # sent to every worker: the path and hash, never a loaded model
        return {"weights": self.weights, "sha256": self.sha256, "router": None}


def run_partition(part: Partition, level: str, out: str) -> dict:
    """The task: scan one partition with this worker's router and write its files under `out`."""
    return scan_and_release(get_worker().plugins[PLUGIN].router, part, level, out)


def scan_and_release(router, part: Partition, level: str, out: str) -> dict:
    """`scan_partition`, then the partition's freed memory handed back to the system: a worker runs partition
    after partition, and what the allocator kept from each (where that partition's tensors happened to lie)
    otherwise piled up, so the worker's peak memory grew with the number of partitions it ran."""
    try:
        return scan_partition(router, part, level, Path(out))
    finally:
        release_freed_memory()


@contextmanager
def dask_client(scheduler: str | None, workers: int | None, log: Callable[[str], None] = lambda _m: None) -> Iterator:
    """A Dask client on the scheduler at `scheduler`, else on a local cluster of `workers` processes (default one per
    core) with one thread each, closed (with the cluster) on leaving."""
    import dask
    from distributed import Client, LocalCluster

    cluster = client = None
    try:
        if scheduler:
            log(f"connecting to the Dask scheduler at {scheduler}")
            client = Client(scheduler, timeout="30s")
        else:
            n = workers or os.cpu_count() or 1
            log(f"starting a local Dask cluster: {n} worker process(es), one torch thread each")
            # The workers' statistical profiler samples the task thread's stack every 10 ms for Dask's dashboard,
            # which a local run does not start; on a machine with one core per worker that sampling takes from the
            # work itself. The nannies hand this setting to the worker processes they start.
            with dask.config.set({"distributed.worker.profile.enabled": False}):
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=40)
            client = Client(cluster)
        yield client
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
