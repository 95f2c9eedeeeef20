"""A process tree's CPU time and resident memory, the machine's busy time and load average, read from Linux's /proc."""

from __future__ import annotations

import os
from pathlib import Path

from ticketnet._runtime.proc import status_kb


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def tree(pid: int) -> set[int]:
    """A process and all its descendants."""
    seen, todo = set(), [pid]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo += _children(p)
    return seen


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants, in MB."""
    return sum(status_kb(p, "VmRSS") for p in tree(pid)) / 1024


def cpu_s(pids) -> float:
    """CPU seconds (user + system, every thread) the processes have used so far."""
    total = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its living descendants so far."""
    return cpu_s(tree(pid))


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far, from /proc/stat."""
    v = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages, as every figure of a run is reported beside them."""
    return [round(x, 2) for x in os.getloadavg()]


def _listening() -> list[tuple[int, str]]:
    """(port, socket inode) of every TCP socket listening on this machine, IPv4 and IPv6 (/proc/net/tcp*)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A":          # 0A: LISTEN
                found.append((int(cols[1].rsplit(":", 1)[1], 16), cols[9]))
    return found


def listening_pid(port: int) -> int | None:
    """The process listening on TCP `port` on this machine (found by its socket's inode), None if none of ours."""
    inodes = {f"socket:[{inode}]" for p, inode in _listening() if p == port}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(proc.name)
        except OSError:
            continue
    return None


def role(pid: int) -> str:
    """What a process of the dashboard's tree is, from its command line: server, proxy, interpretation worker,
    Dask worker or scheduler, or the launcher of several servers; "other" for anything else, "" if it is gone."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return ""
    words = [a.decode(errors="replace") for a in argv if a]
    line = " ".join(words)
    if not words:
        return ""
    if "haproxy" in words[0]:
        return "proxy"
    if "dashboard.team" in line:
        return "launcher"
    if "-m dashboard" in line or "streamlit" in line:
        return "server"
    if "distributed" in line or "dask" in line:
        return "dask"
    if "multiprocessing" in line or "forkserver" in line or "spawn_main" in line:
        return "worker"
    return "other"


def listening_ports(pid: int) -> list[int]:
    """The TCP ports process `pid` listens on (its own sockets, not its children's), sorted."""
    inodes = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        return []
    return sorted({port for port, inode in _listening() if inode in inodes})


def tree_census(pid: int) -> list[dict]:
    """Each living process of the tree under `pid`: its pid, role and resident MB, largest first."""
    rows = []
    for p in tree(pid):
        kb = status_kb(p, "VmRSS")
        r = role(p)
        if r and kb:
            rows.append({"pid": p, "role": r, "rss_mb": round(kb / 1024, 1)})
    return sorted(rows, key=lambda row: -row["rss_mb"])
