"""A process's figures from Linux /proc, by pid."""

from __future__ import annotations

from pathlib import Path


def status_kb(pid: int, field: str) -> int:
    """A kB figure of /proc/PID/status (VmRSS, VmHWM), 0 if the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0
