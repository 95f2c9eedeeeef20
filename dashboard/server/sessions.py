"""Sessions whose browser left more than server.disconnectedSessionTTL ago: shut down, so what they hold goes too."""

# Streamlit keeps a session whose websocket closed in a TTLCache (MemorySessionStorage) for its browser to come back.
# In Streamlit 1.67 nothing ever shuts such a session down once its time is up: the cache drops an expired entry only
# on its next write (the next analyst who leaves), or as the least recently used of 128, and the dropped session is
# not told. Until then the last analysts' sessions stay whole (their widget state holds their page runs' results);
# and even dropped, a session never shut down keeps its entries in the runtime-wide media manager, whose download
# buttons' deferred data (each a copy of a table) are freed only when no session refers to them. So: every
# removal of a stored session that does not go back to a browser schedules its shutdown on the server's event loop
# (where Streamlit closes sessions itself), and a check every few seconds removes the expired ones without waiting
# for a write. docs/performance.md ("Memory") measures it.

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streamlit.logger import get_logger

LOG = get_logger(__name__)


class SessionReaper:
    """Shuts down the stored sessions that leave storage for good (expired, evicted), on `call_soon`'s loop.

    `manager` is Streamlit's WebsocketSessionManager; `call_soon(fn, *args)` runs `fn` on the server's event loop
    from any thread. Built by `for_runtime()` on a real server; `install()` hooks the storage once."""

    def __init__(self, manager: Any, call_soon: Callable[..., Any]) -> None:
        self.manager, self.call_soon = manager, call_soon
        self.shut_down = 0

    @property
    def _cache(self) -> Any:
        return self.manager._session_storage._cache            # noqa: SLF001 - no public hook in Streamlit 1.67

    def install(self) -> bool:
        """Hook the storage's removals (keeping any hook already there); False when the internals are not as known."""
        try:
            cache, lock = self._cache, self.manager._storage_lock  # noqa: SLF001
            before = cache._on_remove                              # noqa: SLF001
            if not (callable(getattr(cache, "expire", None)) and hasattr(lock, "acquire")):
                return False
        except AttributeError:
            return False
        if getattr(before, "reaper", None) is self:
            return True

        def on_remove(session_id: str, info: Any) -> None:
            if before is not None:
                before(session_id, info)
            self._removed(session_id, info)

        on_remove.reaper = self                                    # type: ignore[attr-defined] - marks it installed
        cache._on_remove = on_remove                               # noqa: SLF001
        return True

    def _removed(self, session_id: str, info: Any) -> None:
        # Called with the storage lock held. A session resumed by its browser is made active before it is deleted
        # from storage; any other removal is the end of it (close_session shuts it down itself: shutdown() is a
        # no-op the second time).
        if session_id in self.manager._active_session_info_by_id:  # noqa: SLF001
            return
        session = getattr(info, "session", None)
        if session is not None:
            self.call_soon(self._shut_down, session)

    def _shut_down(self, session: Any) -> None:
        try:
            session.shutdown()
            self.shut_down += 1
            LOG.info("Shut down session %s: disconnected longer than its reconnect window", session.id)
        except Exception:                                          # noqa: BLE001 - one bad session must not stop the rest
            LOG.warning("Could not shut down expired session", exc_info=True)

    def reap(self) -> int:
        """Remove the expired stored sessions now (their shutdowns follow on the event loop); how many."""
        with self.manager._storage_lock:                          # noqa: SLF001 - the cache is not thread-safe
            return len(self._cache.expire())

    @classmethod
    def for_runtime(cls) -> SessionReaper | None:
        """The reaper of this process's Streamlit server, installed; None without a server or with other internals."""
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return None
        runtime = Runtime.instance()
        try:
            loop = runtime._get_async_objs().eventloop             # noqa: SLF001 - the loop sessions are closed on
            reaper = cls(runtime._session_mgr, loop.call_soon_threadsafe)  # noqa: SLF001
        except (AttributeError, RuntimeError):
            return None
        return reaper if reaper.install() else None


# A widget no longer drawn loses its value at the end of the run, but in Streamlit 1.67 its WidgetMetadata (its
# serde, its format_func and callbacks) stays in the session's state for the session's life. A widget keyed by
# ticket (the target team, the head to cut) leaves one behind for every ticket opened, and a format_func or callback
# defined in a page holds that page run's globals: its interpretation, its tables. So each run drops the metadata
# of the widgets that neither the last run drew nor the browser reported.
def forget_stale_widgets(safe_state: Any = None) -> int | None:
    """Drop the metadata of the widgets gone from the session's state; how many, None where the internals differ.

    `safe_state` is Streamlit's SafeSessionState, the current session's by default (call it inside a script run,
    before any widget of the run is drawn)."""
    if safe_state is None:
        from streamlit.runtime.state import get_session_state

        safe_state = get_session_state()
    try:
        lock, state = safe_state._lock, safe_state._state         # noqa: SLF001 - no public hook in Streamlit 1.67
        with lock:
            widgets = state._new_widget_state                       # noqa: SLF001
            metadata, values, kept = widgets.widget_metadata, widgets.states, state._old_state  # noqa: SLF001
            gone = [wid for wid in metadata if wid not in values and wid not in kept]
            for wid in gone:
                del metadata[wid]
    except AttributeError:
        return None
    return len(gone)
