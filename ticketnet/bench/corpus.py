"""Corpus benchmarks (`bench --corpus`): scan throughput against in-process interpret_split, worker memory as the
corpus grows, the encoder router's scan throughput, and the Corpus page's open and filter times on a big scan."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ticketnet.paths import CORPUS_SEED, ROOT


def synth(n: int, out: Path) -> Path:
    from ticketnet.data.synth.corpus import write_corpus

    if not out.is_dir() or not any(out.glob("*.parquet")):
        write_corpus(n, out, CORPUS_SEED)
    return out


def scan(input_path: Path, out: Path, level: str, workers: int, partition_size: int, router: Path | None = None,
         scheduler: str | None = None) -> dict:
    """A scan run as the command line runs it (its own client process), its manifest's run record back."""
    command = [sys.executable, "-m", "ticketnet", "scan", str(input_path), "--out", str(out), "--level", level,
               "--workers", str(workers), "--partition-size", str(partition_size), "--overwrite",
               *(["--router", str(router)] if router is not None else []),
               *(["--scheduler", scheduler] if scheduler is not None else [])]
    t0 = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    run = json.loads((out / "manifest.json").read_text())["run"]
    return {**run, "command_seconds": wall, "tickets_per_second": run["tickets"] / run["compute_seconds"]}


def in_process(input_path: Path, n: int) -> dict:
    """interpret_split over the same tickets in this process, one torch thread (what one worker has)."""
    import pandas as pd
    import torch

    from ticketnet.interpret.split import interpret_split
    from ticketnet.router import Router

    rows = pd.concat([pd.read_parquet(p) for p in sorted(input_path.glob("*.parquet"))]).head(n)
    rows = rows[["ticket_id", "text", "team"]].to_dict("records")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        router = Router.load()
        t0 = time.perf_counter()
        interpret_split(router, rows)
        seconds = time.perf_counter() - t0
    finally:
        torch.set_num_threads(threads)
    return {"tickets": len(rows), "seconds": seconds, "tickets_per_second": len(rows) / seconds}


def throughput(work: Path, n: int, log: Callable[[str], None]) -> dict:
    """Full-level scan of n tickets with 1 and 2 local workers against interpret_split in-process.

    The scans run in the order 1, 2, 2, 1 workers and each count's rate is the mean of its two runs: on this shared
    host one worker's rate moved 5 % between runs ten minutes apart, which a single pair turns into a speed-up
    anywhere from 1.78x to 1.87x; the mirrored order cancels a steady drift."""
    corpus = synth(n, work / f"corpus-{n}")
    ref = in_process(corpus, n)
    log(f"in-process interpret_split, {n:,} tickets, 1 thread: {ref['seconds']:.0f} s = {ref['tickets_per_second']:.1f} tickets/s")
    out: dict = {"tickets": n, "in_process": ref}
    for i, workers in enumerate((1, 2, 2, 1)):
        r = scan(corpus, work / f"scan-full-{n}-{workers}w", "full", workers, max(500, n // 8))
        out.setdefault(f"workers_{workers}_runs", []).append(r)
        log(f"scan --level full, {workers} worker(s), run {i + 1} of 4: {r['tickets_per_second']:.1f} tickets/s while "
            f"computing ({r['compute_seconds']:.0f} s; {r['seconds']:.0f} s with cluster start and merge), worker peak "
            f"{max(r['worker_peak_rss_mb']):.0f} MB, client peak {r['client_peak_rss_mb']:.0f} MB")
    for workers in (1, 2):
        runs = out[f"workers_{workers}_runs"]
        out[f"workers_{workers}"] = {"tickets_per_second": statistics.fmean(r["tickets_per_second"] for r in runs),
                                     "worker_peak_rss_mb": max(max(r["worker_peak_rss_mb"]) for r in runs),
                                     "client_peak_rss_mb": max(r["client_peak_rss_mb"] for r in runs)}
    one, two = out["workers_1"]["tickets_per_second"], out["workers_2"]["tickets_per_second"]
    out["one_worker_vs_in_process"] = one / ref["tickets_per_second"]
    out["two_workers_vs_one"] = two / one
    log(f"1 worker = {out['one_worker_vs_in_process']:.2f}x in-process; 2 workers = {out['two_workers_vs_one']:.3f}x "
        f"1 worker (means of runs 1-4 and 2-3)")
    return out


def encoder_throughput(work: Path, folder: Path, n: int, log: Callable[[str], None]) -> dict:
    """The encoder router's scan of the first n test tickets of its data at level route and effects: in the client's
    process (the synchronous scheduler, one torch thread) and on a local cluster of 2 workers, partitions of n / 4."""
    import csv

    from ticketnet.paths import router_data

    rows = []
    with open(router_data(folder) / "test.csv", encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            rows.append(r)
            if len(rows) == n:
                break
    tickets = work / f"encoder-test-{len(rows)}.csv"
    with open(tickets, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out: dict = {"router": str(folder), "tickets": len(rows)}
    for level in ("route", "effects"):
        for how, workers, scheduler in (("synchronous", 1, "synchronous"), ("workers_2", 2, None)):
            r = scan(tickets, work / f"scan-encoder-{level}-{how}", level, workers, max(1, len(rows) // 4), folder,
                     scheduler)
            out[f"{level} {how}"] = r
            log(f"encoder scan ({folder.name}) --level {level}, {how.replace('_', ' ')}, {len(rows):,} tickets: "
                f"{r['tickets_per_second']:.1f} tickets/s while computing ({r['compute_seconds']:.1f} s; "
                f"{r['command_seconds']:.1f} s for the whole command)"
                + (f", worker peak {max(r['worker_peak_rss_mb']):.0f} MB" if r.get("worker_peak_rss_mb") else ""))
    return out


def memory(work: Path, sizes: tuple[int, ...], log: Callable[[str], None], level: str = "effects") -> dict:
    """Worker and client peak memory for growing corpora at one level and partition size (2 workers)."""
    out = {}
    for n in sizes:
        corpus = synth(n, work / f"corpus-{n}")
        r = scan(corpus, work / f"scan-{level}-{n}", level, 2, 5_000)
        out[str(n)] = r
        log(f"scan --level {level}, {n:,} tickets, 2 workers: {r['seconds']:.0f} s wall "
            f"({r['tickets_per_second']:.1f} tickets/s computing); worker peaks {', '.join(f'{m:.0f}' for m in r['worker_peak_rss_mb'])} MB, "
            f"client peak {r['client_peak_rss_mb']:.0f} MB")
    return out


def page(scan_dir: Path, log: Callable[[str], None], token: str = "refund") -> dict:
    """The Corpus page on a scan: opening it (aggregates only) and each filter change (a DuckDB query over the
    ticket files), timed in the page's own code path through AppTest; plus the bare queries."""
    import os

    from streamlit.testing.v1 import AppTest

    from ticketnet.corpus.query import Filters, open_scan, tickets

    t0 = time.perf_counter()
    s = open_scan(scan_dir)
    opened = time.perf_counter() - t0
    bare = {}
    for name, f in {"none": Filters(), "token": Filters(token=token), "team": Filters(team="payments"),
                    "misrouted": Filters(misrouted=True), "confidence": Filters(confidence=(0.0, 0.6)),
                    "token+team+sorted": Filters(token=token, team="payments", sort="least confident first")}.items():
        t0 = time.perf_counter()
        _, total = tickets(s, f)
        bare[name] = {"seconds": time.perf_counter() - t0, "matches": total}
    os.environ["TICKETNET_SCANS"] = str(scan_dir.parent)
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=120)
    at.run()
    t0 = time.perf_counter()
    at.switch_page("../pages/corpus.py").run()
    page_open = time.perf_counter() - t0
    at.selectbox(key="corpus_folder").set_value(str(scan_dir))          # TICKETNET_SCANS lists its neighbours too
    t0 = time.perf_counter()
    at.run()
    page_open_this_scan = time.perf_counter() - t0
    changes = {}
    for name, act in (("token", lambda: at.text_input(key="corpus_token").set_value(token)),
                      ("predicted team", lambda: at.selectbox(key="corpus_pred").set_value("payments")),
                      ("misrouted", lambda: at.toggle(key="corpus_misrouted").set_value(True)
                       if not at.toggle(key="corpus_misrouted").disabled else None),
                      ("confidence", lambda: at.slider(key="corpus_conf").set_value((0.0, 0.6)))):
        act()
        t0 = time.perf_counter()
        at.run()
        changes[name] = time.perf_counter() - t0
    errors = [str(e.value) for e in at.exception]
    log(f"page on {s.summary['tickets']:,} tickets ({s.level}): open_scan {opened:.2f} s; page opened "
        f"{page_open_this_scan:.2f} s; filter changes " + ", ".join(f"{k} {v:.2f} s" for k, v in changes.items())
        + "; bare queries " + ", ".join(f"{k} {v['seconds']:.2f} s" for k, v in bare.items()))
    return {"tickets": s.summary["tickets"], "level": s.level, "open_scan_seconds": opened,
            "page_first_open_seconds": page_open, "page_open_seconds": page_open_this_scan,
            "filter_change_seconds": changes, "queries": bare, "errors": errors}


def run_corpus(work: Path, size: int, memory_sizes: tuple[int, ...], page_scans: list[Path],
               log: Callable[[str], None] = print, encoder_size: int = 0) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    report: dict = {}
    if size:
        report["throughput"] = throughput(work, size, log)
    if encoder_size:
        from ticketnet.catalog import ENCODER_WEIGHTS
        from ticketnet.paths import weights_dir

        folder = weights_dir() / "larkfield-minilm"
        if (folder / ENCODER_WEIGHTS).is_file():
            report["encoder_throughput"] = encoder_throughput(work, folder, encoder_size, log)
        else:
            log(f"encoder scan skipped: {folder} holds no {ENCODER_WEIGHTS}")
    if memory_sizes:
        report["memory"] = memory(work, memory_sizes, log)
    for p in page_scans:
        report[f"page {p.name}"] = page(p, log)
    return report
