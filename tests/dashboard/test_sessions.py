"""The session reaper: stored sessions that leave storage for good are shut down, resumed ones are not."""

from __future__ import annotations

import threading

from streamlit.runtime.caching.ttl_cache import TTLCache
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.session_manager import SessionInfo

from dashboard.server.sessions import SessionReaper


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeSession:
    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.shutdowns = 0

    def shutdown(self) -> None:
        self.shutdowns += 1


class FakeManager:
    """The parts of Streamlit's WebsocketSessionManager the reaper reads: the storage, its lock, the active map."""

    def __init__(self, ttl: float, clock: Clock, maxsize: int = 128) -> None:
        self._session_storage = MemorySessionStorage()
        self._session_storage._cache = TTLCache(maxsize=maxsize, ttl=ttl, timer=clock)
        self._storage_lock = threading.Lock()
        self._active_session_info_by_id: dict[str, object] = {}

    def disconnect(self, session: FakeSession) -> None:
        with self._storage_lock:
            self._session_storage.save(SessionInfo(client=None, session=session))

    def resume(self, session: FakeSession) -> None:
        with self._storage_lock:                          # Streamlit's order: made active, then deleted from storage
            self._active_session_info_by_id[session.id] = object()
            self._session_storage.delete(session.id)


def reaper_for(manager: FakeManager) -> tuple[SessionReaper, list]:
    queued: list = []
    reaper = SessionReaper(manager, lambda fn, *args: queued.append((fn, args)))
    assert reaper.install()
    return reaper, queued


def run_queued(queued: list) -> None:
    while queued:
        fn, args = queued.pop(0)
        fn(*args)


def test_expired_sessions_are_shut_down_without_waiting_for_a_write():
    clock = Clock()
    manager = FakeManager(ttl=30, clock=clock)
    reaper, queued = reaper_for(manager)
    a, b = FakeSession("a"), FakeSession("b")
    manager.disconnect(a)
    clock.now = 10
    manager.disconnect(b)
    clock.now = 29.9
    assert reaper.reap() == 0 and queued == []
    clock.now = 30
    assert reaper.reap() == 1
    run_queued(queued)                                    # shutdowns run on the event loop, not under the lock
    assert (a.shutdowns, b.shutdowns, reaper.shut_down) == (1, 0, 1)
    clock.now = 45
    assert reaper.reap() == 1
    run_queued(queued)
    assert (a.shutdowns, b.shutdowns) == (1, 1)
    assert manager._session_storage.list() == [] and reaper.reap() == 0


def test_a_session_resumed_by_its_browser_is_left_alone():
    clock = Clock()
    manager = FakeManager(ttl=30, clock=clock)
    reaper, queued = reaper_for(manager)
    a = FakeSession("a")
    manager.disconnect(a)
    clock.now = 5
    manager.resume(a)
    clock.now = 100
    assert reaper.reap() == 0 and queued == [] and a.shutdowns == 0


def test_sessions_dropped_by_someone_elses_write_or_evicted_are_shut_down_too():
    clock = Clock()
    manager = FakeManager(ttl=30, clock=clock, maxsize=2)
    reaper, queued = reaper_for(manager)
    a, b, c, d = (FakeSession(k) for k in "abcd")
    manager.disconnect(a)
    clock.now = 31
    manager.disconnect(b)                                 # the write reaps the expired `a`
    manager.disconnect(c)
    manager.disconnect(d)                                 # over maxsize: the least recently used, `b`, evicted
    run_queued(queued)
    assert [s.shutdowns for s in (a, b, c, d)] == [1, 1, 0, 0]


def test_installing_twice_hooks_once_and_keeps_an_existing_hook():
    clock = Clock()
    manager = FakeManager(ttl=1, clock=clock)
    seen = []
    manager._session_storage._cache._on_remove = lambda key, value: seen.append(key)
    reaper, queued = reaper_for(manager)
    assert reaper.install()
    manager.disconnect(FakeSession("a"))
    clock.now = 2
    reaper.reap()
    assert seen == ["a"] and len(queued) == 1


def test_a_failing_shutdown_is_logged_and_the_rest_go_on():
    clock = Clock()
    manager = FakeManager(ttl=1, clock=clock)
    reaper, queued = reaper_for(manager)

    class Broken(FakeSession):
        def shutdown(self) -> None:
            raise RuntimeError("no")

    bad, good = Broken("bad"), FakeSession("good")
    manager.disconnect(bad)
    manager.disconnect(good)
    clock.now = 5
    assert reaper.reap() == 2
    run_queued(queued)
    assert good.shutdowns == 1 and reaper.shut_down == 1


def test_unknown_internals_and_no_server_give_no_reaper():
    class Other:
        pass

    assert not SessionReaper(Other(), lambda *a: None).install()
    assert SessionReaper.for_runtime() is None
