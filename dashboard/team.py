"""`python -m dashboard.team --processes N`: N dashboard servers behind HAProxy, each analyst kept on one of them."""

# One Streamlit server runs every session's script in one Python process, so its sessions queue for one interpreter
# lock while the machine's other cores sit idle. N servers behind HAProxy share the load: each browser gets a
# cookie naming its server on its first request, and its websocket, media and uploads go there after it (a
# websocket is held by one server for its life anyway). The servers share one cookie secret, so a session's XSRF
# token is valid wherever its requests land. Measured against one server in docs/performance.md.

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEALTH = "/_stcore/health"
COOKIE = "ticketnet_server"


def haproxy_config(port: int, backends: list[int], address: str = "127.0.0.1") -> str:
    """HAProxy's configuration: the public port, and one backend server per dashboard process, chosen for a new
    visitor by fewest open connections (websockets are long-lived, so round robin would pile them up) and kept
    by a cookie; a server that stops answering its health check gets no new visitors."""
    servers = "\n".join(f"    server s{i} 127.0.0.1:{p} check inter 2s cookie s{i}" for i, p in enumerate(backends))
    return f"""global
    maxconn 4096

defaults
    mode http
    option http-server-close
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h

frontend ticketnet
    bind {address}:{port}
    default_backend dashboards

backend dashboards
    balance leastconn
    cookie {COOKIE} insert indirect nocache httponly
    option httpchk GET {HEALTH}
{servers}
"""


def find_haproxy() -> str | None:
    """HAProxy's executable: on the PATH, or where Debian puts it (/usr/sbin is not on every user's PATH)."""
    return shutil.which("haproxy") or next((p for p in ("/usr/sbin/haproxy",) if os.access(p, os.X_OK)), None)


def free_ports(n: int) -> list[int]:
    """`n` distinct free localhost ports (bound together so none is handed out twice)."""
    import socket

    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_free(address: str, port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def wait_healthy(port: int, procs: list[subprocess.Popen], timeout: float) -> None:
    """Until the server on `port` answers its health check; SystemExit if any process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise SystemExit(f"error: a dashboard process exited with code {p.returncode} while starting")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{HEALTH}", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"error: the dashboard on port {port} did not answer within {timeout:.0f} s")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m dashboard.team", description=__doc__.split(":", 1)[1].strip())
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 2,
                    help="dashboard servers (default: one per core)")
    ap.add_argument("--port", type=int, default=8501, help="the port analysts open (default 8501)")
    ap.add_argument("--address", default="127.0.0.1",
                    help="where the proxy listens (default 127.0.0.1; 0.0.0.0 opens it to the network)")
    ap.add_argument("--start-timeout", type=float, default=180, help="seconds each server may take to start")
    login = ap.add_mutually_exclusive_group()
    login.add_argument("--secrets", metavar="FILE",
                       help="the sign-in file ([auth] for st.login, [ticketnet] for who may enter), for every server")
    login.add_argument("--no-login", action="store_true",
                       help="serve beyond localhost without sign-in (behind a proxy that signs people in)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args, streamlit_options = build_parser().parse_known_args(argv)
    if args.processes < 1:
        print("error: --processes must be at least 1", file=sys.stderr)
        return 2
    haproxy = find_haproxy()
    if haproxy is None:
        print("error: haproxy is not installed (Debian: apt-get install haproxy); "
              "one server alone: python -m dashboard", file=sys.stderr)
        return 2
    from dashboard import access

    sign_in_options: list[str] = []
    if args.secrets:
        try:
            sign_in = access.read_sign_in(args.secrets)
        except access.SignInError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        sign_in_options = ["--secrets", str(sign_in.path)]
    elif not access.is_local(args.address) and not args.no_login:
        print(f"error: the team would serve every ticket on {args.address} to anyone who can reach it: give a "
              "sign-in file (--secrets FILE, make team SECRETS=FILE; README, 'Serving it to your team'), or "
              "--no-login behind a proxy that signs people in", file=sys.stderr)
        return 2
    elif args.no_login and not access.is_local(args.address):
        print(f"warning: --no-login: the team on {args.address} serves every ticket to anyone who can reach it; "
              "keep it behind a proxy that signs people in", file=sys.stderr)
    if not port_free(args.address, args.port):
        print(f"error: port {args.port} on {args.address} is in use (another dashboard?); choose one with --port",
              file=sys.stderr)
        return 2
    ports = free_ports(args.processes)
    cookie_secret = secrets.token_hex(32)
    procs: list[subprocess.Popen] = []

    def stop(*_):
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with tempfile.TemporaryDirectory(prefix="ticketnet-team-") as tmp:
        try:
            for port in ports:
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "dashboard", "--server.port", str(port), "--server.address", "127.0.0.1",
                     "--server.headless", "true", "--browser.gatherUsageStats", "false",
                     "--logger.hideWelcomeMessage", "true", *sign_in_options, *streamlit_options],
                    cwd=ROOT, env={**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": cookie_secret}))
            for port in ports:
                wait_healthy(port, procs, args.start_timeout)
            cfg = Path(tmp) / "haproxy.cfg"
            cfg.write_text(haproxy_config(args.port, ports, args.address))
            procs.append(subprocess.Popen([haproxy, "-db", "-f", str(cfg)]))
            signing = " (sign-in on)" if sign_in_options else ""
            print(f"ticketnet: {args.processes} dashboard servers behind http://{args.address}:{args.port}{signing}",
                  flush=True)
            while all(p.poll() is None for p in procs):
                time.sleep(0.5)
            gone = next(p for p in procs if p.poll() is not None)
            print(f"error: a process of the team exited (code {gone.returncode}); stopping the others",
                  file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 0
        finally:
            stop()


if __name__ == "__main__":
    sys.exit(main())
