"""One Streamlit session over its own websocket (/_stcore/stream): reruns, widget values, what the server sends."""

# What a browser does, without the browser: it opens ws://HOST/_stcore/stream offering the subprotocol "streamlit"
# (the frontend puts its XSRF token and a session id to resume in the same header; neither is needed to run the
# app), then sends a BackMsg `rerun_script` holding a ClientState: the URL's query string, the page (its script
# hash, or on a fresh load the page's URL name), and the value of every widget it holds. The server answers with
# ForwardMsgs: `new_session` when the run starts, `navigation` (the app's pages and their script hashes, under
# st.navigation), `page_info_changed` (the query string the app wrote), one `delta` per element or block (its
# place in the page in `metadata.delta_path`; a widget's proto carries its id, label and form), and
# `script_finished`. A `st.rerun()` inside the script ends a run early and starts the next one on its own.

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from dataclasses import dataclass, field
from urllib.parse import urlparse

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

STREAM_PATH = "_stcore/stream"
SUBPROTOCOL = "streamlit"
FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY: "finished", ForwardMsg.FINISHED_WITH_COMPILE_ERROR: "compile error",
            ForwardMsg.FINISHED_EARLY_FOR_RERUN: "rerun",
            ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY: "fragment finished"}
# Elements whose text a check may look for.
TEXT_FIELDS = {"heading": ("body",), "markdown": ("body",), "text": ("body",), "metric": ("label", "body"),
               "alert": ("body",), "page_link": ("label",), "caption": ("body",), "code": ("code_text",)}


class ProtocolError(Exception):
    """The server answered in a way a browser would show as broken: no run finished in time, the socket closed."""


def stream_url(url: str) -> str:
    """The websocket address of the Streamlit server at `url` (http://HOST:PORT[/base]); ValueError unless HOST is
    this machine's loopback: the load client never drives a server elsewhere."""
    parsed = urlparse(url if "://" in url else f"http://{url}")
    if parsed.scheme not in ("http", "ws"):
        raise ValueError(f"{url!r}: only plain http:// or ws:// on this machine's loopback is driven")
    host = parsed.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"{url!r} is not a loopback address (localhost, 127.0.0.0/8, ::1): the load client only "
                         "drives a server on this machine")
    netloc = f"[{host}]" if ":" in host else host
    base = parsed.path.strip("/")
    return f"ws://{netloc}:{parsed.port or 80}/{base + '/' if base else ''}{STREAM_PATH}"


@dataclass
class Widget:
    """A widget as one run drew it: its id (what a rerun's widget states are keyed by), kind, label and form."""

    id: str
    kind: str
    label: str
    form_id: str
    options: list[str]
    proto: object = field(repr=False)

    def state(self, value) -> WidgetState:
        """The WidgetState a browser sends for this widget holding `value` (an option's label or index for
        choices; a list for multiselect, pills and sliders; a row selection dict for a table)."""
        ws = WidgetState(id=self.id)
        if self.kind in ("selectbox", "radio"):
            ws.string_value = self.option(value)
        elif self.kind in ("multiselect", "button_group", "select_slider"):
            ws.string_array_value.data.extend(self.option(v) for v in value)
        elif self.kind == "checkbox":
            ws.bool_value = bool(value)
        elif self.kind == "slider":
            ws.double_array_value.data.extend(float(v) for v in value)
        elif self.kind == "number_input":
            ws.double_value = float(value)
        elif self.kind in ("text_input", "text_area"):
            ws.string_value = str(value)
        elif self.kind == "button":
            ws.trigger_value = True
        elif self.kind in ("dataframe", "arrow_data_frame", "vega_lite_chart"):
            ws.string_value = json.dumps(value)
        else:
            raise ValueError(f"setting a {self.kind} widget is not supported by the load client")
        return ws

    def option(self, value) -> str:
        if isinstance(value, int) and not isinstance(value, bool):
            return self.options[value]
        if value not in self.options:
            raise ValueError(f"{value!r} is none of the options of {self.label!r}: {self.options[:10]}")
        return value


@dataclass
class Run:
    """What the server sent back for one rerun request, up to its script_finished."""

    seconds: float = 0.0                    # from the BackMsg sent to the last script_finished received
    status: str = ""
    page_hash: str = ""
    query_string: str | None = None         # the last page_info_changed of the run (None: the app wrote none)
    elements: dict[tuple[int, ...], tuple[str, object]] = field(default_factory=dict)
    exceptions: list[str] = field(default_factory=list)
    page_not_found: str | None = None
    reruns: int = 0                         # runs the script restarted itself (st.rerun) before this one finished

    @property
    def widgets(self) -> dict[str, Widget]:
        out = {}
        for kind, el in self.elements.values():
            wid = getattr(el, "id", "") if _has(el, "id") else ""
            if wid:
                options = [str(getattr(o, "content", o)) for o in (el.options if _has(el, "options") else [])]
                out[wid] = Widget(wid, kind, el.label if _has(el, "label") else "",
                                  el.form_id if _has(el, "form_id") else "", options, el)
        return out

    def widget(self, kind: str, label: str = "", key: str = "") -> Widget:
        """The one `kind` widget whose label starts with `label` and whose id ends with `key` (a widget's user key
        ends its id); LookupError naming what the run did draw."""
        found = [w for w in self.widgets.values() if w.kind == kind and w.label.startswith(label)
                 and (not key or w.id.endswith(f"-{key}"))]
        if len(found) != 1:
            drawn = sorted(f"{w.kind} {w.label!r}" for w in self.widgets.values())
            raise LookupError(f"{len(found)} {kind} widgets labelled {label!r}{' keyed ' + key if key else ''}; "
                              f"the run drew: {drawn}")
        return found[0]

    def texts(self) -> list[str]:
        out = []
        for kind, el in self.elements.values():
            for name in TEXT_FIELDS.get(kind, ()):
                out.append(getattr(el, name))
        return out

    def has_text(self, needle: str) -> bool:
        return any(needle in t for t in self.texts())

    def errors(self) -> list[str]:
        """The run's exception elements and error panels (st.error), as text."""
        out = [f"exception: {e}" for e in self.exceptions]
        out += [f"error panel: {el.body[:200]}" for kind, el in self.elements.values()
                if kind == "alert" and el.format == Alert.ERROR]
        if self.page_not_found is not None:
            out.append(f"page not found: {self.page_not_found!r}")
        if self.status not in ("finished", "fragment finished"):
            out.append(f"script run ended: {self.status}")
        return out

    def tables(self) -> list[tuple[tuple[int, ...], object]]:
        """(delta path, element) of every table (st.dataframe) drawn, in page order."""
        return sorted((p, el) for p, (kind, el) in self.elements.items() if kind in ("dataframe", "arrow_data_frame"))


def _has(message, name: str) -> bool:
    return name in message.DESCRIPTOR.fields_by_name


def rerun_message(query: str = "", page_hash: str = "", page_name: str = "", states=()) -> bytes:
    """The BackMsg a browser sends to run the script: its URL's query string, the page (script hash, or URL name
    on a fresh load) and every widget value it holds."""
    msg = BackMsg()
    cs = msg.rerun_script
    cs.query_string = query
    cs.page_script_hash = page_hash
    cs.page_name = page_name
    cs.widget_states.widgets.extend(states)
    return msg.SerializeToString()


def table_frame(element):
    """A table element's rows as a pyarrow Table (the Arrow IPC stream the frontend draws)."""
    import pyarrow as pa

    return pa.ipc.open_stream(element.arrow_data.data).read_all()


class Session:
    """One browser tab's session: `open` the app, then `rerun` with widget changes or `switch_page`."""

    def __init__(self, url: str, timeout: float = 60.0, cookie: str | None = None) -> None:
        self.url = url
        self.cookie = cookie                      # a signed-in analyst's Cookie header (sign-in on)
        self.ws_url = stream_url(url)
        self.timeout = timeout
        self.pages: dict[str, str] = {}          # page name and URL name -> script hash, from `navigation`
        self.page_hash = ""
        self.query_string = ""
        self.values: dict[str, WidgetState] = {}  # what this tab holds for each widget it has set
        self.last: Run | None = None
        self.session_id = ""                      # the server's id for this tab's session, from its first run
        self._ws = None

    async def connect(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.typing import Subprotocol

        parsed = urlparse(self.ws_url)
        self._ws = await asyncio.wait_for(
            connect(self.ws_url, subprotocols=[Subprotocol(SUBPROTOCOL)], max_size=None, ping_interval=None,
                    origin=f"http://{parsed.netloc}", open_timeout=self.timeout, compression=None,
                    additional_headers={"Cookie": self.cookie} if self.cookie else None),
            self.timeout)
        if self._ws.subprotocol != SUBPROTOCOL:
            raise ProtocolError(f"the server chose subprotocol {self._ws.subprotocol!r}, not {SUBPROTOCOL!r}")

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    async def __aenter__(self) -> Session:
        await self.connect()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def open(self, page: str = "", query: str = "") -> Run:
        """A fresh load of /<page>?<query> (page: its URL name, "" for the default page)."""
        return await self._request(page_name=page, page_hash="", query=query)

    async def switch_page(self, name: str) -> Run:
        """A click on the page's entry in the sidebar: the query string is cleared, as the frontend does."""
        if name not in self.pages:
            raise LookupError(f"no page {name!r}; the app's pages: {sorted(self.pages)}")
        self.values.clear()
        return await self._request(page_hash=self.pages[name], query="")

    async def rerun(self, *changes: tuple[Widget, object]) -> Run:
        """What a browser sends after the user sets each widget of `changes` to its value (buttons: any value)."""
        states = dict(self.values)
        for widget, value in changes:
            states[widget.id] = widget.state(value)
        return await self._request(page_hash=self.page_hash, query=self.query_string, states=states)

    async def send_raw(self, data: bytes | str) -> None:
        """Send a frame as it is (for fault tests: garbage, a request whose answer is never read)."""
        await self._ws.send(data)

    async def receive_run(self) -> Run:
        """Wait for the next run's script_finished without sending anything (ProtocolError if the socket closes)."""
        return await self._collect(time.perf_counter())

    @property
    def close_code(self) -> int | None:
        """The close code of the websocket once closed (1002: protocol error, as Streamlit answers garbage)."""
        return None if self._ws is None else self._ws.close_code

    async def _request(self, page_hash: str, query: str, page_name: str = "",
                       states: dict[str, WidgetState] | None = None) -> Run:
        data = rerun_message(query, page_hash, page_name, (states or {}).values())
        self.query_string = query                   # the URL the tab shows now; the app may rewrite it
        t0 = time.perf_counter()
        await self._ws.send(data)
        run = await self._collect(t0)
        # The tab keeps the values of the widgets the run drew (a trigger fires once), as the frontend does.
        drawn = run.widgets
        self.values = {wid: s for wid, s in (states or {}).items() if wid in drawn and s.WhichOneof("value")
                       not in ("trigger_value", "string_trigger_value", "json_trigger_value")}
        self.page_hash = run.page_hash or self.page_hash
        if run.query_string is not None:
            self.query_string = run.query_string
        self.last = run
        return run

    async def _collect(self, t0: float) -> Run:
        from websockets.exceptions import ConnectionClosed

        run, started = Run(), False
        deadline = t0 + self.timeout
        while True:
            left = deadline - time.perf_counter()
            try:
                raw = await asyncio.wait_for(self._ws.recv(), max(0.0, left))
            except asyncio.TimeoutError:
                raise ProtocolError(f"no script_finished within {self.timeout:.0f} s") from None
            except ConnectionClosed as exc:
                raise ProtocolError(f"the websocket closed: {exc}") from None
            if isinstance(raw, str):
                raise ProtocolError("the server sent a text frame")
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "new_session":                   # a run starts (again, after a st.rerun)
                started = True
                run.page_hash = fm.new_session.page_script_hash
                self.session_id = fm.new_session.initialize.session_id or self.session_id
                run.elements.clear()
                run.exceptions.clear()
            elif not started:                           # the tail of an earlier run (its session_status_changed)
                continue
            elif kind == "navigation":                  # under st.navigation: the page this run shows
                run.page_hash = fm.navigation.page_script_hash
                for p in fm.navigation.app_pages:
                    self.pages[p.page_name] = p.page_script_hash
                    if p.url_pathname:
                        self.pages[p.url_pathname] = p.page_script_hash
            elif kind == "page_info_changed":
                run.query_string = fm.page_info_changed.query_string
            elif kind == "page_not_found":
                run.page_not_found = fm.page_not_found.page_name
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                el_kind = fm.delta.new_element.WhichOneof("type")
                el = getattr(fm.delta.new_element, el_kind)
                run.elements[tuple(fm.metadata.delta_path)] = (el_kind, el)
                if el_kind == "exception":
                    run.exceptions.append(f"{el.type}: {el.message}"[:300])
            elif kind == "session_event" and fm.session_event.WhichOneof("type") == "script_compilation_exception":
                e = fm.session_event.script_compilation_exception
                run.exceptions.append(f"{e.type}: {e.message}"[:300])
            elif kind == "script_finished":
                run.status = FINISHED.get(fm.script_finished, str(fm.script_finished))
                if run.status == "rerun":               # the script called st.rerun(): the next run follows
                    run.reruns += 1
                    started = False
                    continue
                run.seconds = time.perf_counter() - t0
                return run
