"""A minimal Streamlit session client: one websocket that speaks Streamlit's own protocol, so
that a load test can stand in for a browser tab at almost no cost to the test machine.

Protocol facts (Streamlit 1.67, read from its sources; paths under ``streamlit/``):

* A tab first loads the page's HTML (the JS bundle then comes from the browser's cache), and
  before it connects the frontend polls ``GET /_stcore/health``; that answer sets the
  ``_streamlit_xsrf`` cookie (``web/server/starlette/starlette_routes.py:_ensure_xsrf_cookie``).
  The app derives a browser's owner id from that cookie (``scansnap/access.py``), so each client
  keeps its own cookie like a browser does.
* The websocket route is ``/_stcore/stream`` (``starlette_websocket.py:create_websocket_routes``).
  ``Sec-WebSocket-Protocol`` is re-used to carry tokens (``_parse_subprotocols``): entry 0 is
  the subprotocol to select (``streamlit``), entry 1 the XSRF token (the cookie's value),
  entry 2 an existing session id to reconnect to.  ``Origin`` must be same-origin (or absent)
  and the XSRF pair is only checked to read an auth cookie: without it the session still opens.
* Connecting creates the session but runs nothing (``runtime.py:connect_session``); the first
  BackMsg must be ``rerun_script`` with a ``ClientState``: ``query_string`` (no ``?``),
  ``page_name`` = the URL path (matched against a page's ``url_pathname`` by
  ``pages_manager.py``), ``page_script_hash`` empty on the first run and the one from
  ``new_session`` afterwards, ``widget_states``, ``context_info`` (``st.context.url`` …).
  ``app_session.py:request_rerun`` turns it into ``RerunData``; with no
  ``cached_message_hashes`` the server never answers with ``ref_hash`` placeholders.
* Widget states are *merged*: ``state/session_state.py:on_script_will_rerun`` compacts the
  old values and overlays only the widgets in the message, then runs the callbacks of those
  that changed.  A click therefore needs only the button's ``trigger_value`` (Streamlit's own
  agent client does the same, ``runtime/agent/widget_writes.py:build_widget_states``); the
  Lab's other widgets keep their values.  The query string must be the *current* one (from the
  last ``page_info_changed``): the Lab re-applies a URL it did not write itself.
* Every run starts with ``new_session`` (``metadata.run.fragment_ids`` non-empty for a fragment
  run) and ends with ``script_finished`` (FINISHED_SUCCESSFULLY for a full run,
  FINISHED_FRAGMENT_RUN_SUCCESSFULLY, FINISHED_EARLY_FOR_RERUN when ``st.rerun()`` cut it).
  Elements arrive as ``delta.new_element`` at ``metadata.delta_path`` (root container first);
  a later element at the same path replaces the earlier one (``st.empty``); a full run drops
  the elements it did not write.
* ``st.fragment(run_every=…)`` sends ``auto_rerun {interval, fragment_id}``
  (``runtime/fragment.py``) once per full run.  The frontend bundled with 1.67
  (``static/static/js/index.*.js``: ``handleAutoRerun``, ``cleanupAutoReruns``) then calls
  ``sendUpdateWidgetsMessage(fragmentId, true)`` on a ``setInterval`` whether or not a run is in
  progress, keeps a running timer when the same interval is declared again, clears every timer
  when a full run's ``new_session`` arrives, and drops those named by ``stop_auto_rerun``
  (``scriptrunner/script_runner.py``).  A fragment rerun never preempts a full run, and requests
  that arrive during a run are coalesced (``scriptrunner_utils/script_requests.py``).
* The server queues at most 500 unsent messages per client and then drops the session
  (``starlette_websocket.py:StarletteSessionClient``): a client must read continuously, hence
  one reader thread per client.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import time
import traceback
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

XSRF_COOKIE = "_streamlit_xsrf"
FULL_RUN_DONE = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR)
# The Lab's live area: "**running** · step 120 / 300 · last snapshot 120 · run `<id>`" (bytes per tick in its tooltip)
LIVE_STATUS = re.compile(r"^(?:\*\*)?(?P<status>\w+)(?:\*\*)? · step (?P<step>\d+) / \d+ .*run `(?P<run>[^`]+)`")
TEXT_FIELDS = {
    "markdown": "body",
    "heading": "body",
    "alert": "body",
    "code": "code_text",
    "page_link": "label",
    "button": "label",
    "checkbox": "label",
    "slider": "label",
    "text": "body",
    "text_input": "label",
    "selectbox": "label",
    "multiselect": "label",
    "number_input": "label",
}
WIDGETS = ("button", "checkbox", "slider", "text_input", "selectbox", "multiselect", "number_input")


class StClientError(RuntimeError):
    """The session did not do what was asked in time (or the connection broke)."""


@dataclass
class Element:
    """One rendered element: its type (``markdown``, ``button``, ``plotly_chart`` …), its text
    (body, label), its widget id when it is a widget, and the proto itself."""

    kind: str
    text: str
    widget_id: str = ""
    proto: Any = None


@dataclass
class Stats:
    """What the client has received so far."""

    messages: int = 0
    # websocket payloads (ForwardMsgs; server.enableWebsocketCompression is off by default).  The client
    # sends no cached_message_hashes, so an element a browser already holds is sent again: an upper bound.
    bytes: int = 0
    fragment_runs: int = 0
    auto_reruns_sent: int = 0
    last_message_at: float = 0.0  # time.monotonic() of the last message
    errors: list[str] = field(default_factory=list)


def fetch(url: str, timeout: float = 10.0) -> tuple[bytes, str]:
    """GET ``url``: (body, the ``_streamlit_xsrf`` cookie it sets or '')."""
    cookie = ""
    with urllib.request.urlopen(url, timeout=timeout) as r:
        body = r.read()
        for header in r.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            if name.strip() == XSRF_COOKIE:
                cookie = rest.split(";")[0].strip().strip('"')
    return body, cookie


class StClient:
    """One Streamlit session (a browser tab) on ``base_url`` (``http://127.0.0.1:8501``).

    ``open(path)`` connects and runs the page; ``click(label)`` / ``set_value(label, v)`` /
    ``type_text(label, text)`` act on a widget; a reader thread keeps receiving and, while
    ``follow_auto_rerun`` is set, sends the fragment reruns the frontend would.  Each client takes a fresh
    cookie (another browser) unless given one (``cookie``: another tab of the same browser).
    ``elements()``, ``texts()``, ``buttons()``, ``exceptions()``, ``live_status`` and ``query`` expose
    what rendered."""

    def __init__(
        self, base_url: str, name: str = "", follow_auto_rerun: bool = True, timezone: str = "UTC", cookie: str = ""
    ):
        self.base_url, self.name, self.cookie = base_url.rstrip("/"), name, cookie
        self.follow_auto_rerun, self.timezone = follow_auto_rerun, timezone
        self.stats = Stats()
        self.query_string = ""
        self.page_name = ""
        self.page_script_hash = ""
        self.live_status: dict[str, Any] | None = None  # the last live-area status line, parsed
        self.live_history: list[tuple[str, int]] = []  # (status, step) each time it changed
        self._elements: dict[tuple[int, ...], Element] = {}
        self._touched: set[tuple[int, ...]] = set()
        self._timers: dict[str, list[float]] = {}  # fragment id -> [interval, next due (monotonic)]
        self._full_started = self._full_done = 0
        self._in_full_run = False
        self._cond = threading.Condition()
        self._ws: Any = None
        self._exit = contextlib.ExitStack()  # websockets 17 wants connect() used as a context manager
        self._reader: threading.Thread | None = None
        self._closed = threading.Event()
        self.recent: deque[str] = deque(maxlen=200)  # the last messages, for diagnosing a stuck session

    # ------------------------------------------------------------------ connection
    def open(self, path: str = "/", timeout: float = 60.0) -> StClient:
        """Connect and run the page at ``path`` (``/theory``, ``/?run=abc``); wait for the run to finish."""
        parts = urlsplit(path)
        self.page_name, self.query_string = parts.path.strip("/"), parts.query
        fetch(self.base_url + path, timeout)  # the navigation (the JS bundle is in the browser's cache)
        _, fresh = fetch(f"{self.base_url}/_stcore/health", timeout)
        cookie = self.cookie = self.cookie or fresh
        ws_url = "ws" + self.base_url[len("http") :] + "/_stcore/stream"
        headers = {"Origin": self.base_url, **({"Cookie": f"{XSRF_COOKIE}={cookie}"} if cookie else {})}
        try:
            self._ws = self._exit.enter_context(
                connect(
                    ws_url,
                    subprotocols=["streamlit", cookie] if cookie else ["streamlit"],
                    additional_headers=headers,
                    max_size=None,
                    open_timeout=timeout,
                    close_timeout=1,
                )
            )
        except WebSocketException as e:  # a refused handshake: not an OSError in websockets 17
            raise StClientError(f"{self.name}: websocket handshake failed: {e}") from e
        self._reader = threading.Thread(target=self._read_loop, name=f"st-client-{self.name}", daemon=True)
        self._reader.start()
        self._rerun_and_wait(timeout=timeout)
        return self

    def close(self, timeout: float = 2.0) -> None:
        """Close the websocket (the server then ends the session) and join the reader (bounded)."""
        self._closed.set()
        if self._ws is not None:
            with contextlib.suppress(Exception):  # closing a broken socket
                self._exit.close()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout)

    def __enter__(self) -> StClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ actions
    def click(self, label: str, timeout: float = 60.0) -> None:
        """Press the button labelled ``label`` and wait for the full rerun it causes."""
        el = self._widget(label, "button")
        if el.proto.disabled:
            raise StClientError(f"{self.name}: button {label!r} is disabled")
        self._rerun_and_wait(WidgetState(id=el.widget_id, trigger_value=True), timeout=timeout)

    def set_value(self, label: str, value: bool | str, timeout: float = 60.0) -> None:
        """Set a checkbox or toggle (``bool``: ``bool_value``) or a select slider (``str``: the option as
        its ``format_func`` shows it, in ``string_array_value``) and wait for the rerun."""
        if isinstance(value, bool):
            state = WidgetState(id=self._widget(label, "checkbox").widget_id, bool_value=value)
        else:
            state = WidgetState(id=self._widget(label, "slider").widget_id)
            state.string_array_value.data.append(value)
        self._rerun_and_wait(state, timeout=timeout)

    def type_text(self, label: str, value: str, timeout: float = 60.0) -> None:
        """Type ``value`` into the text input labelled ``label`` (Enter: ``string_value``) and wait for the
        rerun."""
        state = WidgetState(id=self._widget(label, "text_input").widget_id, string_value=value)
        self._rerun_and_wait(state, timeout=timeout)

    def options(self, label: str, kind: str = "selectbox") -> list[str]:
        """The options a select box (or multiselect) labelled ``label`` offers, as its ``format_func`` shows them."""
        return list(self._widget(label, kind).proto.options)

    def wait_for(self, predicate: Callable[[StClient], object], timeout: float) -> bool:
        """Wait until ``predicate(self)`` is true (checked after every message); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0 or self._closed.is_set():
                    return bool(predicate(self))
                self._cond.wait(min(left, 0.5))
        return True

    # ------------------------------------------------------------------ what rendered
    @property
    def query(self) -> dict[str, str]:
        """The current URL's query parameters (as the last ``page_info_changed`` set them)."""
        return dict(parse_qsl(self.query_string))

    def elements(self) -> list[Element]:
        """The elements on screen, in delta-path order."""
        with self._cond:
            return [self._elements[k] for k in sorted(self._elements)]

    def texts(self) -> list[str]:
        return [e.text for e in self.elements() if e.text]

    def has_text(self, fragment: str) -> bool:
        return any(fragment in t for t in self.texts())

    def buttons(self) -> dict[str, str]:
        """Button label → widget id."""
        return {e.text: e.widget_id for e in self.elements() if e.kind == "button"}

    def exceptions(self) -> list[str]:
        """``Type: message`` of every exception element (one means the page did not render), then
        the script's compile errors and a page-not-found."""
        return [e.text for e in self.elements() if e.kind == "exception"] + [
            e for e in self.stats.errors if e.startswith("compile")
        ]

    def connection_errors(self) -> list[str]:
        """Why the connection broke or a send failed (empty while all is well)."""
        return [e for e in self.stats.errors if not e.startswith("compile")]

    def reader_state(self) -> str:
        """Where the reader thread is now (its innermost frames), or that it has ended: for a session that
        went quiet, whether it waits for the server or is stuck in this client."""
        reader = self._reader
        if reader is None or not reader.is_alive():
            return "the reader thread has ended"
        frame = sys._current_frames().get(reader.ident or -1)
        where = traceback.format_stack(frame)[-3:] if frame is not None else []
        timers = {fid[:8]: (t[0], round(t[1] - time.monotonic(), 1)) for fid, t in self._timers.items()}
        return f"reader at {' | '.join(s.strip().replace(chr(10), ' ') for s in where)}; timers {timers}"

    # ------------------------------------------------------------------ protocol
    def _widget(self, label: str, kind: str) -> Element:
        for e in self.elements():
            if e.kind == kind and e.text.startswith(label):
                return e
        raise StClientError(f"{self.name}: no {kind} {label!r} on the page ({self.buttons()})")

    def _client_state(self, widget: WidgetState | None = None, fragment_id: str = "") -> ClientState:
        cs = ClientState(
            query_string=self.query_string,
            page_script_hash=self.page_script_hash,
            page_name="" if self.page_script_hash else self.page_name,
            fragment_id=fragment_id,
            is_auto_rerun=bool(fragment_id),
        )
        if widget is not None:
            cs.widget_states.widgets.append(widget)
        cs.context_info.timezone, cs.context_info.locale = self.timezone, "en-US"
        query = f"?{self.query_string}" if self.query_string else ""
        cs.context_info.url = f"{self.base_url}/{self.page_name}{query}"
        return cs

    def _send(self, cs: ClientState) -> None:
        try:
            self._ws.send(BackMsg(rerun_script=cs).SerializeToString())
        except WebSocketException as e:  # the server closed the session
            raise StClientError(f"{self.name}: send failed: {e}") from e

    def _rerun_and_wait(self, widget: WidgetState | None = None, timeout: float = 60.0) -> None:
        """Send a full rerun and wait until a full run that started after it has finished."""
        with self._cond:
            mark = self._full_started
            self._send(self._client_state(widget))
        if not self.wait_for(lambda c: c._full_done > mark, timeout):
            raise StClientError(f"{self.name}: no finished run within {timeout:g} s ({self.stats.errors})")

    def _read_loop(self) -> None:
        """Receive every message; fire due auto-reruns between them (the frontend's timers)."""
        while not self._closed.is_set():
            try:
                data = self._ws.recv(timeout=self._next_timer_in())
            except TimeoutError:
                self._fire_timers()
                continue
            except Exception as e:  # connection closed or broken: record and stop
                if not self._closed.is_set():
                    self.stats.errors.append(f"connection: {type(e).__name__}: {e}")
                break
            msg = ForwardMsg()
            msg.ParseFromString(data)
            with self._cond:
                self.stats.messages += 1
                self.stats.bytes += len(data)
                self.stats.last_message_at = time.monotonic()
                self._handle(msg)
                self._cond.notify_all()
            self._fire_timers()
        with self._cond:
            self._closed.set()
            self._cond.notify_all()

    def _next_timer_in(self) -> float:
        with self._cond:
            if not self.follow_auto_rerun or not self._timers:
                return 0.5
            return max(0.0, min(t[1] for t in self._timers.values()) - time.monotonic())

    def _fire_timers(self) -> None:
        if not self.follow_auto_rerun:
            return
        now = time.monotonic()
        with self._cond:
            due = [fid for fid, t in self._timers.items() if t[1] <= now]
            for fid in due:
                self._timers[fid][1] = now + self._timers[fid][0]
        for fid in due:
            try:
                self._send(self._client_state(fragment_id=fid))
                self.stats.auto_reruns_sent += 1
            except Exception as e:  # the reader notices a closed socket next
                self.stats.errors.append(f"auto-rerun: {e}")

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        self.recent.append(_describe(msg, kind))
        if kind == "new_session":
            self._on_new_session(msg)
        elif kind == "delta":
            self._on_delta(msg)
        elif kind == "script_finished":
            self._on_finished(msg.script_finished)
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "navigation":  # st.navigation names the page it ran: a rerun asks for that page again
            self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
        elif kind == "auto_rerun":  # the same interval again keeps the running timer (as the frontend does)
            a = msg.auto_rerun
            if self._timers.get(a.fragment_id, [None])[0] != a.interval:
                self._timers[a.fragment_id] = [a.interval, time.monotonic() + a.interval]
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids:
                self._timers.pop(fid, None)
        elif kind == "session_event" and msg.session_event.HasField("script_compilation_exception"):
            ex = msg.session_event.script_compilation_exception
            self.stats.errors.append(f"compile: {ex.type}: {ex.message}")
        elif kind == "page_not_found":
            self.stats.errors.append(f"compile: page not found: {msg.page_not_found.page_name!r}")

    def _on_new_session(self, msg: ForwardMsg) -> None:
        self.page_script_hash = msg.new_session.page_script_hash
        if msg.metadata.run.fragment_ids:
            self.stats.fragment_runs += 1
            return
        self._full_started += 1
        self._in_full_run = True
        self._touched = set()
        self._timers.clear()  # a full run re-sends the auto_rerun of every fragment it still has

    def _on_finished(self, status: int) -> None:
        if not self._in_full_run or status not in FULL_RUN_DONE:
            return
        self._in_full_run = False
        self._full_done = self._full_started
        if status == ForwardMsg.FINISHED_SUCCESSFULLY:  # the frontend clears what this run did not write
            self._elements = {k: v for k, v in self._elements.items() if k in self._touched}

    def _on_delta(self, msg: ForwardMsg) -> None:
        path = tuple(msg.metadata.delta_path)
        self._touched.add(path)
        if msg.delta.WhichOneof("type") != "new_element":
            return
        el = msg.delta.new_element
        kind = el.WhichOneof("type") or ""
        inner = getattr(el, kind) if kind else None
        if kind == "exception":
            text = f"{inner.type}: {inner.message}"
        else:
            text = getattr(inner, TEXT_FIELDS[kind]) if kind in TEXT_FIELDS else ""
        self._elements[path] = Element(kind, text, getattr(inner, "id", "") if kind in WIDGETS else "", inner)
        m = LIVE_STATUS.match(text) if kind == "markdown" else None
        if m:
            self._on_live_status(m)

    def _on_live_status(self, m: re.Match[str]) -> None:
        st = {"status": m["status"], "step": int(m["step"]), "run": m["run"]}
        if not self.live_history or self.live_history[-1] != (st["status"], st["step"]):
            self.live_history.append((st["status"], st["step"]))
        self.live_status = st


def _describe(msg: ForwardMsg, kind: str | None) -> str:
    """A short line for ``StClient.recent``: the message type and what matters in it."""
    if kind == "new_session":
        return f"new_session fragments={list(msg.metadata.run.fragment_ids)}"
    if kind == "script_finished":
        return f"script_finished {ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)}"
    if kind == "auto_rerun":
        return f"auto_rerun {msg.auto_rerun.interval:g} s {msg.auto_rerun.fragment_id[:8]}"
    if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
        return f"element {msg.delta.new_element.WhichOneof('type')}"
    return str(kind)
