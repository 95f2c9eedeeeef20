"""The idle watch: memory given back once no session has been connected for a while, once per quiet spell."""

from __future__ import annotations

from dashboard.server.idle import IdleWatch, connected_sessions


def _run_three_checks(watch, monkeypatch) -> None:
    """Run the watch's loop until its third sleep (two checks and the start of a third), then stop it."""
    sleeps = iter([None, None, KeyboardInterrupt])

    def fake_sleep(_s):
        if next(sleeps) is KeyboardInterrupt:
            raise KeyboardInterrupt
    monkeypatch.setattr("dashboard.server.idle.time.sleep", fake_sleep)
    try:
        watch.run()
    except KeyboardInterrupt:
        pass


def test_it_releases_once_per_quiet_spell_and_never_while_anyone_is_connected():
    counts = iter([2, 0, 0, 0, 0, 1, 0, 0, None, 0, 0])
    released = []
    watch = IdleWatch(lambda: next(counts), lambda: released.append(True), idle_s=10)
    times = [0, 5, 9, 16, 30, 40, 41, 52, 60, 61, 75]
    log = []
    for t in times:
        watch.step(t)
        log.append(watch.releases)
    # idle from 5: released at 16 (11 s), not again at 30; someone at 40; idle again from 41: released at 52;
    # an unreadable count (None) counts as not idle, so the next quiet spell starts at 61 and is 14 s at 75
    assert log == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3]


def test_a_failing_release_does_not_end_the_watch(monkeypatch):
    calls = []

    def boom():
        calls.append(1)
        raise RuntimeError("no")

    watch = IdleWatch(lambda: 0, boom, idle_s=0, check_s=0)
    _run_three_checks(watch, monkeypatch)
    assert calls == [1] and watch.released                   # tried once, then left alone for this quiet spell


def test_no_server_no_count():
    assert connected_sessions() is None


def test_every_check_runs_before_each_step_and_a_failing_one_does_not_end_the_watch(monkeypatch):
    calls = []

    def reap():
        calls.append("reap")
        raise RuntimeError("internals changed")

    watch = IdleWatch(lambda: calls.append("count") or 1, lambda: None, check_s=0, every_check=(reap,))
    _run_three_checks(watch, monkeypatch)
    assert calls == ["reap", "count", "reap", "count"]


def test_while_anyone_is_connected_the_heap_is_trimmed_every_interval_and_never_on_an_idle_server():
    counts = iter([3, 3, 3, 3, 1, 0, 0, 2, 2, 2, None, 2])
    trims = []
    watch = IdleWatch(lambda: next(counts), lambda: None, idle_s=100, trim=lambda: trims.append(True), trim_s=30)
    log = []
    for t in (0, 10, 30, 55, 61, 70, 200, 210, 230, 241, 250, 300):
        watch.step(t)
        log.append(watch.trims)
    # analysts from 0: trimmed at 30 and at 61 (31 s later), not at 55; nobody at 70 and 200 (no trim, the interval
    # restarts); back at 210: the next trim at 241; an unreadable count (None) neither trims nor restarts the interval
    assert log == [0, 0, 1, 1, 2, 2, 2, 2, 2, 3, 3, 4]
    assert len(trims) == 4


def test_the_trim_hands_the_heap_back_and_keeps_every_cache(monkeypatch):
    from dashboard.server import idle
    from ticketnet._runtime import allocator

    calls = []
    monkeypatch.setattr(allocator, "release_freed_memory", lambda: calls.append("trim") or True)
    monkeypatch.setattr(idle.st.cache_data, "clear", lambda: calls.append("cleared"))
    idle.trim_heap()
    assert calls == ["trim"]


def test_the_memory_log_appends_one_census_line_per_interval(tmp_path):
    import json

    from dashboard.server.idle import MemoryLog

    now = [0.0]
    path = tmp_path / "memory.jsonl"
    log = MemoryLog(path, lambda: 3, every_s=30, clock=lambda: now[0])
    for t in (0, 10, 29, 30, 45, 61):
        now[0] = t
        log()
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(lines) == 3                                        # at 0, 30 and 61
    first = lines[0]
    assert first["sessions"] == 3 and first["pid"] > 0 and first["rss_mb"] > 50
    assert first["allocator"] == "glibc" and 0 < first["in_use_mb"] <= first["held_mb"]
    assert first["rss_mb"] >= first["in_use_mb"] * 0.5


def test_a_memory_log_it_cannot_write_is_skipped(tmp_path):
    from dashboard.server.idle import MemoryLog

    log = MemoryLog(tmp_path / "no" / "such" / "dir" / "memory.jsonl", lambda: None)
    log()                                                         # no raise, nothing written
    assert not (tmp_path / "no").exists()
