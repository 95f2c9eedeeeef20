"""`python -m dashboard` and `python -m dashboard.team`: sign-in wherever the dashboard is served beyond localhost."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from dashboard import __main__ as launcher
from dashboard import access, team
from tests.dashboard.signin_helpers import write_sign_in

ROOT = Path(__file__).resolve().parents[2]


def _launch(args, tmp_path, environ=None):
    return launcher.sign_in_launch(args, environ or {}, default_secrets=tmp_path / "absent.toml")


def test_on_localhost_it_starts_as_before_with_no_login(tmp_path):
    assert _launch(["--server.port", "8599"], tmp_path) == (None, ["--server.port", "8599"], None)


@pytest.mark.parametrize("args", [["--server.address", "0.0.0.0"], ["--server.address=10.1.2.3"]])
def test_beyond_localhost_without_a_sign_in_file_it_refuses_in_one_line_naming_the_fix(tmp_path, args):
    with pytest.raises(launcher.LaunchError) as refused:
        _launch(args, tmp_path)
    said = str(refused.value)
    assert "\n" not in said and "--secrets FILE" in said and "--no-login" in said and "anyone" in said
    with pytest.raises(launcher.LaunchError):
        _launch([], tmp_path, {"STREAMLIT_SERVER_ADDRESS": "0.0.0.0"})


def test_no_login_is_a_deliberate_choice_said_at_start(tmp_path):
    sign_in, rest, warning = _launch(["--no-login", "--server.address", "0.0.0.0"], tmp_path)
    assert sign_in is None and rest == ["--server.address", "0.0.0.0"]
    assert warning.startswith("warning: --no-login") and "\n" not in warning


def test_a_sign_in_file_is_checked_and_handed_to_streamlit(tmp_path):
    path = write_sign_in(tmp_path)
    sign_in, rest, warning = _launch(["--secrets", str(path), "--server.address", "0.0.0.0"], tmp_path)
    assert sign_in == path.resolve() and warning is None
    assert rest == ["--server.address", "0.0.0.0", "--secrets.files", str(path.resolve())]
    assert _launch([f"--secrets={path}"], tmp_path)[0] == path.resolve()


def test_streamlit_s_own_secrets_file_with_an_auth_section_turns_sign_in_on(tmp_path):
    own = write_sign_in(tmp_path, name="secrets.toml")
    assert launcher.sign_in_launch([], {}, default_secrets=own)[0] == own.resolve()
    plain = tmp_path / "plain.toml"
    plain.write_text('[database]\npassword = "x"\n')
    assert launcher.sign_in_launch([], {}, default_secrets=plain)[0] is None


@pytest.mark.parametrize(("args", "said"), [
    (["--secrets"], "needs the sign-in file's path"),
    (["--secrets", "SIGN", "--no-login"], "contradict"),
    (["--secrets", "MISSING"], "does not exist"),
])
def test_bad_launch_options_are_one_line(tmp_path, args, said):
    args = [str(write_sign_in(tmp_path)) if a == "SIGN" else str(tmp_path / "missing.toml") if a == "MISSING"
            else a for a in args]
    with pytest.raises(launcher.LaunchError, match=said) as refused:
        _launch(args, tmp_path)
    assert "\n" not in str(refused.value)


def test_the_default_router_cannot_be_limited_to_a_few(tmp_path):
    path = write_sign_in(tmp_path, 'allowed_domains = ["example.com"]\n[ticketnet.routers]\nlarkfield = ["@x.com"]\n')
    with pytest.raises(launcher.LaunchError, match="default router 'larkfield'"):
        _launch(["--secrets", str(path)], tmp_path)


def test_main_serves_the_gated_app_and_names_the_file_for_it(tmp_path, monkeypatch):
    import os

    from streamlit.web import cli

    path = write_sign_in(tmp_path)
    seen = {}
    monkeypatch.setattr(cli, "main", lambda: seen.setdefault("argv", list(sys.argv)) and 0)
    monkeypatch.setattr(threading.Thread, "start", lambda self: None)
    monkeypatch.setattr(sys, "argv", ["python -m dashboard"])
    # main sets the variable for the server it starts; a copy of the environment keeps it out of later tests
    # (and of the servers they start).
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k != access.SIGN_IN_ENV})
    assert launcher.main(["--secrets", str(path), "--server.port", "8599"]) == 0
    assert seen["argv"] == ["streamlit", "run", str(launcher.SIGNED_IN_APP), "--server.port", "8599",
                            "--secrets.files", str(path.resolve())]
    assert os.environ[access.SIGN_IN_ENV] == str(path.resolve())


def test_the_gated_app_is_one_streamlit_finds():
    from streamlit.web.server.app_discovery import discover_asgi_app

    found = discover_asgi_app(launcher.SIGNED_IN_APP)
    assert found.is_asgi_app and found.app_name == "app"


def test_a_server_bound_to_every_address_without_sign_in_never_starts():
    done = subprocess.run([sys.executable, "-m", "dashboard", "--server.address", "0.0.0.0", "--server.port", "8597"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith("error: ")


def test_the_team_refuses_the_network_without_sign_in_and_checks_the_file_first(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(team, "find_haproxy", lambda: "/usr/sbin/haproxy")
    monkeypatch.setattr(team.subprocess, "Popen", lambda *a, **k: pytest.fail("nothing may start"))
    assert team.main(["--address", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--secrets FILE" in err and "SECRETS=FILE" in err and "--no-login" in err
    bad = write_sign_in(tmp_path, "")
    assert team.main(["--address", "0.0.0.0", "--secrets", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "must name who may enter" in err


def test_the_team_hands_the_sign_in_file_to_every_server(tmp_path, monkeypatch):
    path = write_sign_in(tmp_path)
    started = []

    class Stop(Exception):
        pass

    def popen(command, **kwargs):
        started.append(command)
        raise Stop

    monkeypatch.setattr(team, "find_haproxy", lambda: "/usr/sbin/haproxy")
    monkeypatch.setattr(team.subprocess, "Popen", popen)
    with pytest.raises(Stop):
        team.main(["--processes", "2", "--port", "0", "--secrets", str(path)])
    command = started[0]
    assert command[command.index("--secrets") + 1] == str(path.resolve())
    assert command[command.index("--server.address") + 1] == "127.0.0.1"
