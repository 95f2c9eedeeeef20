"""The browser-free load client: its protocol against a real server, its analyst script, its timings, its refusals."""

from __future__ import annotations

import argparse
import json
import time

import pytest

from tests.load.conftest import run
from ticketnet.bench.load import procfs
from ticketnet.bench.load.actions import ActionFailed, Analyst, split_tickets
from ticketnet.bench.load.protocol import Session, Widget, stream_url
from ticketnet.bench.load.run import (census_summary, drive, heap_readings, main, meets_target, memory_log_path,
                                      memory_trend, memory_trends, pct, settle)
from ticketnet.bench.load.server import cache_bytes, tracebacks


@pytest.mark.parametrize("url", ["http://example.com:8501", "http://10.1.2.3:8501", "http://0.0.0.0:8501",
                                 "https://localhost:8501", "http://192.168.0.7", "localhost.example.org:80"])
def test_a_non_loopback_url_is_refused(url):
    with pytest.raises(ValueError, match="loopback|only plain"):
        stream_url(url)


@pytest.mark.parametrize("url, ws", [("http://localhost:8501", "ws://localhost:8501/_stcore/stream"),
                                     ("127.0.0.1:9000/", "ws://127.0.0.1:9000/_stcore/stream"),
                                     ("http://127.8.0.1:80/base/", "ws://127.8.0.1:80/base/_stcore/stream"),
                                     ("http://[::1]:8501", "ws://[::1]:8501/_stcore/stream")])
def test_a_loopback_url_gives_the_stream_address(url, ws):
    assert stream_url(url) == ws


def test_the_runner_refuses_a_non_loopback_url(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--url", "http://203.0.113.5:8501", "--sessions", "1", "--seconds", "1"])
    assert exc.value.code == 2
    assert "not a loopback address" in capsys.readouterr().err


def test_widget_states_are_what_a_browser_sends():
    box = Widget("$$ID-1-team", "selectbox", "Team", "", ["any", "payments", "delivery"], None)
    assert box.state(2).string_value == "delivery"
    assert box.state("payments").string_value == "payments"
    with pytest.raises(ValueError, match="none of the options"):
        box.state("returns")
    toggle = Widget("$$ID-2-misrouted", "checkbox", "Misrouted only", "", [], None)
    assert toggle.state(True).WhichOneof("value") == "bool_value" and toggle.state(True).bool_value
    table = Widget("$$ID-3-t", "dataframe", "", "", [], None)
    assert json.loads(table.state({"selection": {"rows": [4]}}).string_value) == {"selection": {"rows": [4]}}
    assert Widget("$$ID-4-b", "button", "Go", "f", [], None).state(None).trigger_value
    with pytest.raises(ValueError, match="not supported"):
        Widget("$$ID-5-u", "file_uploader", "File", "", [], None).state(b"x")


def test_percentiles_and_the_target():
    assert pct([], 0.95) is None
    assert pct([3.0, 1.0, 2.0], 0.5) == 2.0 and pct([float(i) for i in range(101)], 0.95) == 95.0
    step = {"errors": 0, "by_page": {"Tickets": {"n": 3, "p95": 0.4}, "Heads": {"n": 2, "p95": 0.9}}}
    assert meets_target(step, 1.0)
    assert not meets_target({**step, "errors": 1}, 1.0)
    assert not meets_target({**step, "by_page": {**step["by_page"], "Corpus": {"n": 0, "p95": None}}}, 1.0)
    assert not meets_target(step, 0.5)


def test_the_idle_rate_waits_for_work_left_going_after_the_warm_up():
    """A fresh server draws the lesson's table in the background after its first runs: measured then, its "idle"
    rate was 0.6 CPU s per s, and subtracting it made every action of a quick bench cost 0.0 CPU seconds."""
    import time

    start = time.monotonic()

    def cpu() -> float:                                 # 1 CPU s per s for 0.4 s, then idle
        return min(time.monotonic() - start, 0.4)

    waited = run(settle(cpu, window=0.05))
    assert waited >= 0.4 + 0.05                      # the busy stretch, then two quiet windows
    with pytest.raises(RuntimeError, match="never settled"):
        run(settle(lambda: time.monotonic(), window=0.05, timeout=0.3))


def test_settle_reads_a_real_process_that_computes_then_idles():
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.6: pass\ntime.sleep(60)"])
    try:
        start = time.monotonic()
        run(settle(lambda: procfs.tree_cpu_s(child.pid), window=0.2))
        assert time.monotonic() - start >= 0.5 and procfs.tree_cpu_s(child.pid) >= 0.5
    finally:
        child.kill()
        child.wait()


def test_one_session_on_a_real_server_sees_its_run_and_its_rerun(live_server):
    url = live_server.url

    async def go():
        async with Session(url, timeout=120) as s:
            first = await s.open("", "ticket=T-65052")
            assert first.status == "finished" and first.errors() == []
            assert first.seconds > 0
            assert {"Tickets", "Heads", "Interpretation", "Corpus", "heads"} <= set(s.pages)
            assert s.page_hash == s.pages["Tickets"]
            assert first.has_text("Confusion matrix")
            assert any(t.startswith("1500 of 1500 tickets") for t in first.texts())
            toggle = first.widget("checkbox", "Misrouted only")
            assert toggle.id.endswith("-misrouted")
            again = await s.rerun((toggle, True))
            assert again.status == "finished" and again.errors() == []
            shown = next(t for t in again.texts() if " of 1500 tickets" in t)
            assert int(shown.split()[0]) < 1500
            assert "misrouted=1" in s.query_string and "ticket=T-65052" in s.query_string
            assert s.values[toggle.id].bool_value                     # the tab keeps it for its next rerun
            heads = await s.switch_page("Heads")
            assert heads.has_text("Block 1: the 4 heads") and "ticket=T-65052" in s.query_string
            with pytest.raises(LookupError, match="the run drew"):
                heads.widget("checkbox", "Misrouted only")

    run(go())


@pytest.mark.load
def test_the_analyst_script_runs_every_action_and_checks_it(live_server, full_scan):
    live_server.with_scan(full_scan)
    url, log = live_server.url, live_server.log
    start = log.stat().st_size

    async def go():
        done = []
        async with Session(url, timeout=120) as s:
            analyst = Analyst(s, 3, list(split_tickets()), corpus=True)
            for action in analyst.script:
                r = await action.run(analyst)
                assert r.errors() == [], action.name
                done.append(action.name)
            # a check can fail: on the Corpus page there is no tickets table to pick from
            with pytest.raises(ActionFailed, match="the tickets table"):
                await analyst.pick_ticket()
            entered = await analyst.enter("Interpretation")
            assert entered.has_text("What each token does")
        return done

    done = run(go())
    assert done == [a.name for a in Analyst(None, 0, [], corpus=True).script]
    assert len(done) == 11 and tracebacks(log, start) == []


def test_the_census_tells_the_processes_of_a_tree_apart_and_finds_their_ports():
    import multiprocessing
    import os
    import socket

    ctx = multiprocessing.get_context("spawn")
    child = ctx.Process(target=time.sleep, args=(30,))
    child.start()
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert port in procfs.listening_ports(os.getpid())
        assert port not in procfs.listening_ports(child.pid)          # a process's own sockets only
        rows = {r["pid"]: r for r in procfs.tree_census(os.getpid())}
        assert rows[child.pid]["role"] == "worker" and rows[child.pid]["rss_mb"] > 1
        assert rows[os.getpid()]["role"] == "other" and rows[os.getpid()]["rss_mb"] >= rows[child.pid]["rss_mb"]
    finally:
        listener.close()
        child.kill()
        child.join()
    assert procfs.role(child.pid) == "" and procfs.listening_ports(child.pid) == []


def test_the_census_summary_adds_up_each_role_and_cache_over_the_servers():
    rows = [{"t_s": 0.0, "processes": [{"pid": 1, "role": "server", "rss_mb": 500.0},
                                       {"pid": 2, "role": "server", "rss_mb": 450.0},
                                       {"pid": 3, "role": "proxy", "rss_mb": 10.0}],
             "cache_bytes": {"1": {"a": 2**20}, "2": {"a": 2**20, "b": 3 * 2**20}}},
            {"t_s": 60.0, "processes": [{"pid": 1, "role": "server", "rss_mb": 520.0},
                                        {"pid": 3, "role": "proxy", "rss_mb": 10.5}],
             "cache_bytes": {"1": {"a": 2**19}}},
            {"t_s": 120.0, "processes": [{"pid": 1, "role": "server", "rss_mb": 400.0}], "cache_bytes": {},
             "heap": {"1": {"in_use_mb": 200.0, "held_mb": 260.0, "python_blocks": 1.5e6},
                      "2": {"in_use_mb": 100.5, "held_mb": 120.0, "python_blocks": 1e6}}}]
    out = census_summary(rows, left_at_s=90.0)
    assert out["after_left"]["heap_in_use_mb"] == 300.5 and out["after_left"]["heap_held_mb"] == 380.0
    assert out["after_left"]["heap_python_blocks"] == 2.5e6 and "heap_in_use_mb" not in out["under_load"][0]
    assert out["under_load"][0] == {"t_s": 0.0, "rss_mb": {"proxy": 10.0, "server": 950.0},
                                    "processes": {"proxy": 1, "server": 2}, "cache_mb": {"a": 2.0, "b": 3.0}}
    assert out["under_load"][1]["rss_mb"] == {"proxy": 10.5, "server": 520.0}
    assert out["under_load"][1]["cache_mb"] == {"a": 0.5, "b": 0.0}
    assert out["after_left"]["rss_mb"] == {"proxy": 0, "server": 400.0} and out["after_left"]["t_s"] == 120.0
    assert census_summary([], 1.0) == {}


def test_the_heap_readings_keep_each_server_s_latest_line_since_the_start(tmp_path):
    path = tmp_path / "server.memory.jsonl"
    lines = [{"t": 5.0, "pid": 1, "in_use_mb": 1.0, "held_mb": 2.0, "python_blocks": 3.0, "rss_mb": 9.0},
             {"t": 20.0, "pid": 1, "in_use_mb": 10.0, "held_mb": 20.0, "python_blocks": 30.0},
             {"t": 21.0, "pid": 2, "in_use_mb": 11.0, "held_mb": 21.0},
             {"t": 25.0, "pid": 1, "in_use_mb": 12.0, "held_mb": 22.0, "python_blocks": 32.0}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"t": 30.0, "pid": 2, "in_u')   # mid-write
    assert heap_readings(path, since=10.0) == {"1": {"in_use_mb": 12.0, "held_mb": 22.0, "python_blocks": 32.0},
                                               "2": {"in_use_mb": 11.0, "held_mb": 21.0}}
    assert heap_readings(path, since=100.0) == {} and heap_readings(tmp_path / "none.jsonl", 0) == {}
    assert heap_readings(None, 0) == {}
    assert memory_log_path(tmp_path / "server.log") == tmp_path / "server.memory.jsonl"


def test_the_memory_trend_tells_growth_from_noise_and_names_its_windows():
    import numpy as np

    rng = np.random.default_rng(3)
    t = np.arange(0, 1800, 0.5)
    wave = 20 * np.sin(2 * np.pi * t / 400)                      # caches filling and expiring: slow, not growth
    flat = list(zip(t, 700 + wave + rng.normal(0, 15, t.size)))
    growing = list(zip(t, 700 + 2.0 * t / 60 + wave + rng.normal(0, 15, t.size)))
    still = memory_trend(flat, 600, 1800)
    assert still["ci95"][0] < 0 < still["ci95"][1] and abs(still["mb_per_min"]) < 1.5
    assert still["from_min"] == 10 and still["to_min"] == 30 and abs(still["mean_mb"] - 700) < 10
    up = memory_trend(growing, 600, 1800)
    assert up["ci95"][0] > 0 and abs(up["mb_per_min"] - 2.0) < 0.8
    assert memory_trend(flat, 0, 140) is None                    # five 30 s means: no trend
    windows = [(w["from_min"], w["to_min"]) for w in memory_trends(flat, 10.0, 1800.0)]
    assert windows == [(0.2, 30), (10, 30), (15.1, 30)]
    assert [(w["from_min"], w["to_min"]) for w in memory_trends(flat, 10.0, 240.0)] == [(0.2, 4)]


@pytest.mark.load
def test_a_short_drive_times_each_action_and_samples_the_server(live_server):
    url, proc, log = live_server.url, live_server.proc, live_server.log
    args = argparse.Namespace(seconds=6.0, action_interval=0.5, ramp=0.0, step_timeout=120.0, seed=5,
                              target_p95=60.0, no_corpus=True, url=url, scans="", census=1.0)
    cpu_before = procfs.tree_cpu_s(proc.pid)
    report = run(drive(url, proc.pid, 1, args, log))
    assert report["errors"] == 0, report["error_samples"]
    assert report["actions"] >= 3
    assert all(v["n"] and 0 < v["p50"] <= v["max"] for v in report["by_action"].values())
    assert report["action_s"]["n"] == report["actions"]
    assert 0 < report["server"]["cpu_s"] <= procfs.tree_cpu_s(proc.pid) - cpu_before + 0.05
    assert report["server"]["rss_mb_peak_sampled"] >= report["server"]["rss_mb_before"] > 50
    assert len(report["load_average_before"]) == 3
    readings = report["server"]["census"]["under_load"]
    assert len(readings) >= 3 and readings[-1]["processes"] == {"server": 1}
    # the census reads the same process the sampler does, at moments inside the sampled run
    srv = report["server"]
    assert srv["rss_mb_before"] - 20 <= readings[-1]["rss_mb"]["server"] <= srv["rss_mb_peak_sampled"] + 20
    assert readings[-1]["cache_mb"]["dashboard.data.ticket.inspection"] > 0         # what Streamlit sized, read back
    assert cache_bytes(url)["dashboard.data.ticket.inspection"] > 0
    assert cache_bytes("http://localhost:9") == {}                                   # nobody there: nothing, no raise
    assert readings[-1]["heap_in_use_mb"] > 50 and readings[-1]["heap_held_mb"] >= readings[-1]["heap_in_use_mb"]
    assert readings[-1]["heap_held_mb"] <= readings[-1]["rss_mb"]["server"]        # the heap is a part of the whole


@pytest.mark.load
def test_the_runner_and_its_capacity_steps_write_their_reports(live_server, tmp_path):
    url = live_server.url
    out = tmp_path / "load.json"
    common = ["--url", url, "--seconds", "8", "--action-interval", "1", "--no-corpus", "--step-timeout", "120"]
    assert main([*common, "--sessions", "2", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["sessions"] == 2 and report["errors"] == 0 and report["actions"] >= 2
    assert report["server"]["pid"] == live_server.proc.pid and report["warm_up_errors"] == []
    cap = tmp_path / "capacity.json"
    assert main([*common, "--capacity", "--start", "1", "--step", "1", "--max", "2", "--target-p95", "60",
                 "--out", str(cap)]) == 0
    steps = json.loads(cap.read_text())
    assert [s["sessions"] for s in steps["steps"]] == [1, 2] and steps["capacity"] == 2
    assert all("load_average_before" in s and s["by_page"] for s in steps["steps"])
    assert [c["sessions"] for c in steps["curve"]] == [1, 2]
    assert all(c["p95_s"] >= c["p50_s"] > 0 for c in steps["curve"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["capacity.json", "load.json"]   # no temporary file left


@pytest.mark.load
def test_the_cost_per_action_is_measured_for_every_action(live_server):
    from ticketnet.bench.load.run import cost_per_action

    c = run(cost_per_action(live_server.url, live_server.proc.pid, 1, corpus=False))
    names = [a.name for a in Analyst(None, 0, [], corpus=False).script]
    assert list(c["per_action"]) == names
    assert all(v["n"] == 1 and v["wall_s_median"] > 0 and v["cpu_s_median"] >= 0 for v in c["per_action"].values())
    # the ticket's first Interpretation (removal effects, gradients, ERASER) costs more than a filter of the table
    assert c["per_action"]["open Interpretation"]["cpu_s_median"] > c["per_action"]["filter Tickets"]["cpu_s_median"]
    assert c["idle_cpu_s_per_s"] >= 0 and len(c["load_average_before"]) == 3


def test_fresh_tickets_never_hand_out_a_ticket_twice_and_say_when_they_run_out():
    import random

    from ticketnet.bench.load.actions import FreshTickets

    fresh = FreshTickets(["T-1", "T-2", "T-3", "T-4"], seed=3)
    first = fresh.take()
    row = fresh.take_row(["T-1", "T-2", "T-3", "T-4"], random.Random(0))
    assert ["T-1", "T-2", "T-3", "T-4"][row] != first
    rest = [fresh.take(), fresh.take()]
    assert sorted([first, ["T-1", "T-2", "T-3", "T-4"][row], *rest]) == ["T-1", "T-2", "T-3", "T-4"]
    with pytest.raises(ActionFailed, match="tickets used up"):
        fresh.take()
    with pytest.raises(ActionFailed, match="tickets used up"):
        fresh.take_row(["T-2"], random.Random(0))
    assert FreshTickets(["T-1", "T-2", "T-3"], seed=3).take() == FreshTickets(["T-3", "T-1", "T-2"], seed=3).take()


def test_the_load_client_s_analyst_cookie_is_one_the_dashboard_admits(tmp_path):
    from dashboard import access
    from tests.dashboard.signin_helpers import write_sign_in
    from ticketnet.bench.load.sign_in import analyst_cookie

    path = write_sign_in(tmp_path, 'allowed_emails = ["ana@example.com"]\nallowed_domains = ["example.com"]\n')
    name, _, value = analyst_cookie(path).partition("=")
    sign_in = access.read_sign_in(path)
    user = access.signed_in_user({name: value}, sign_in)
    assert sign_in.access.admits(access.verified_email(user)) and user["email"] == "ana@example.com"
    with pytest.raises(ValueError, match="must name who may enter"):
        analyst_cookie(write_sign_in(tmp_path, "", name="empty.toml"))
