"""`python -m dashboard.team`: dashboard servers behind HAProxy, sessions spread over them and kept on theirs."""

from __future__ import annotations

import asyncio
import subprocess
import time
import urllib.request

import pytest

from dashboard import team
from tests.load.conftest import run
from ticketnet.bench.load import procfs
from ticketnet.bench.load.actions import split_tickets
from ticketnet.bench.load.protocol import Session

needs_haproxy = pytest.mark.skipif(team.find_haproxy() is None,
                                   reason="haproxy is not installed (make test installs Debian's)")


def test_the_config_keeps_each_visitor_on_one_server_and_checks_their_health():
    cfg = team.haproxy_config(8501, [41001, 41002, 41003])
    assert "bind 127.0.0.1:8501" in cfg and "balance leastconn" in cfg
    assert f"cookie {team.COOKIE} insert indirect nocache httponly" in cfg
    assert f"option httpchk GET {team.HEALTH}" in cfg
    servers = [line.split() for line in cfg.splitlines() if line.strip().startswith("server ")]
    assert [(s[1], s[2], s[-1]) for s in servers] == [("s0", "127.0.0.1:41001", "s0"), ("s1", "127.0.0.1:41002", "s1"),
                                                      ("s2", "127.0.0.1:41003", "s2")]
    assert "timeout tunnel 1h" in cfg                       # an analyst's websocket outlives HTTP's timeouts


@needs_haproxy
def test_haproxy_accepts_the_config(tmp_path):
    path = tmp_path / "haproxy.cfg"
    path.write_text(team.haproxy_config(8501, [41001, 41002]))
    checked = subprocess.run([team.find_haproxy(), "-c", "-f", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_without_haproxy_it_says_so_in_one_line_and_starts_nothing(monkeypatch, capsys):
    monkeypatch.setattr(team, "find_haproxy", lambda: None)
    monkeypatch.setattr(team.subprocess, "Popen", lambda *a, **k: pytest.fail("nothing may start"))
    assert team.main(["--processes", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "haproxy is not installed" in err and "python -m dashboard" in err
    assert team.main(["--processes", "0"]) == 2


def test_a_port_in_use_is_said_in_one_line_before_anything_starts(monkeypatch, capsys):
    import socket

    monkeypatch.setattr(team, "find_haproxy", lambda: "/usr/sbin/haproxy")
    monkeypatch.setattr(team.subprocess, "Popen", lambda *a, **k: pytest.fail("nothing may start"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        assert team.main(["--processes", "2", "--port", str(busy.getsockname()[1])]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is in use" in err


def _cookie(url: str, cookie: str | None = None) -> str | None:
    req = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 200
        found = r.headers.get("Set-Cookie") or ""
    return found.split(";")[0].split("=")[1] if found.startswith(team.COOKIE + "=") else None


@needs_haproxy
def test_two_servers_share_the_sessions_and_the_team_stops_with_one_gone(artifacts, tmp_path):
    from ticketnet.bench.load.server import dashboard_server

    env = {"TICKETNET_CACHE": str(tmp_path / "cache"), "TICKETNET_SCANS": str(tmp_path / "scans"),
           "TICKETNET_WEIGHTS": str(artifacts.weights), "TICKETNET_DATA": str(artifacts.data)}
    (tmp_path / "scans").mkdir()
    tickets = sorted(split_tickets())
    with dashboard_server(tmp_path / "team.log", env, processes=2) as (url, launcher):
        backends = [p for p in procfs.tree(launcher.pid) - {launcher.pid}
                    if b"dashboard" in open(f"/proc/{p}/cmdline", "rb").read()]
        assert len(backends) == 2

        # New visitors are spread over both servers; one that has a server's cookie is kept there.
        assert {_cookie(url) for _ in range(4)} == {"s0", "s1"}
        assert _cookie(url, f"{team.COOKIE}=s1") is None

        async def sessions():
            held = [Session(url, timeout=180) for _ in range(2)]
            for s in held:
                await s.connect()
            runs = await asyncio.gather(*(s.open("heads", f"ticket={t}") for s, t in zip(held, tickets)))
            for s in held:
                await s.close()
            return runs

        for r in run(sessions()):
            assert r.errors() == [] and r.has_text("Block 1: the")

        subprocess.run(["kill", str(backends[0])], check=True)
        deadline = time.monotonic() + 30
        while launcher.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert launcher.returncode == 1                           # not a proxy in front of half a team
        time.sleep(1)
        assert not any(_alive(b) for b in backends)
    assert "exited" in (tmp_path / "team.log").read_text()


def _alive(pid: int) -> bool:
    try:
        return b"dashboard" in open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return False
