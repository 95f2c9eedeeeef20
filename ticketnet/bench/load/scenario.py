"""Where a load run's server and reports come from: a fresh server or the one at --url, its scans, artifacts/load/."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from urllib.parse import urlparse

from ticketnet.bench.load import procfs
from ticketnet.bench.load.monitor import memory_log_path
from ticketnet.bench.load.protocol import stream_url
from ticketnet.bench.load.server import dashboard_server
from ticketnet.paths import MEMORY_LOG_ENV, ROOT, SCANS_ENV, WORKERS_ENV

ARTIFACTS = ROOT / "artifacts" / "load"


def finished_scan(root: Path) -> bool:
    """Whether the Corpus page has a finished scan to open under `root` (else the analysts skip Corpus)."""
    from ticketnet.corpus.query import is_scan

    return root.is_dir() and any(p.is_dir() and is_scan(p) for p in root.iterdir())


def server_for(args, log: Path):
    """A fresh server (the context yields (url, pid)), or the one at --url."""
    if args.url:
        stream_url(args.url)
        port = urlparse(args.url if "://" in args.url else f"http://{args.url}").port or 80
        return nullcontext((args.url.rstrip("/"), procfs.listening_pid(port)))
    env = {SCANS_ENV: str(Path(args.scans).resolve()), MEMORY_LOG_ENV: str(memory_log_path(log).resolve())}
    if args.cache:
        env["TICKETNET_CACHE"] = str(Path(args.cache).resolve())
    if getattr(args, "workers", 0):
        env[WORKERS_ENV] = str(args.workers)

    class Started:
        def __enter__(self):
            self.cm = dashboard_server(log, env, processes=getattr(args, "processes", 0),
                                       secrets=getattr(args, "sign_in", None))
            url, proc = self.cm.__enter__()
            return url, proc.pid

        def __exit__(self, *exc):
            return self.cm.__exit__(*exc)

    return Started()
