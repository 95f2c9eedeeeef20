"""interpret_ticket in a pool of worker processes: a server's heavy per-ticket work off its one interpreter lock."""

from __future__ import annotations

import functools
import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace

from ticketnet.interpret.ticket import TicketInterpretation, interpret_ticket

MEMO_TICKETS = 64        # per worker: the tickets whose variant logits it keeps for a switch of target team


@functools.lru_cache(maxsize=2)
def _router(weights: str, stamp: tuple):
    """The router at `weights`, loaded once per version of its files (`stamp`) in this worker."""
    from ticketnet.router import Router

    r = Router.load(weights)
    r.model.eval()
    r.model.requires_grad_(False)
    return r


@functools.lru_cache(maxsize=MEMO_TICKETS)
def _memo(weights: str, stamp: tuple, text: str, whole_thread: bool) -> dict:
    return {}


def _start(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def interpret_in_worker(weights: str, stamp: tuple, text: str, target: int | None, evidence: str,
                        whole_thread: bool, phrases: bool = True,
                        eraser_signals: tuple[str, ...] | None = None) -> TicketInterpretation:
    """`interpret_ticket` of `text` on the router at `weights` (its files' `stamp` keys the worker's copy)."""
    r = replace(_router(weights, stamp), whole_thread=whole_thread)
    return interpret_ticket(r, text, target=target, evidence=evidence, phrases=phrases,
                            eraser_signals=eraser_signals, memo=_memo(weights, stamp, text, whole_thread))


def _ready(weights: str, stamp: tuple) -> bool:
    _router(weights, stamp)
    return True


class InterpretPool:
    """`workers` processes (spawned: a server's threads are never forked) that each load the router once and run
    `interpret_ticket` for any session; `submit` returns a Future of the TicketInterpretation."""

    def __init__(self, workers: int, threads: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_start, initargs=(threads,))

    def warm(self, weights: str, stamp: tuple) -> list[Future]:
        """Start every worker and load the router in it, without waiting (one task per worker)."""
        return [self._pool.submit(_ready, weights, stamp) for _ in range(self.workers)]

    def submit(self, weights: str, stamp: tuple, text: str, target: int | None = None, evidence: str = "",
               whole_thread: bool = False, phrases: bool = True,
               eraser_signals: tuple[str, ...] | None = None) -> Future:
        return self._pool.submit(interpret_in_worker, weights, stamp, text, target, evidence, whole_thread, phrases,
                                 eraser_signals)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
