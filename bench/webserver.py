"""Shared by the browser benchmarks and the load test: start the dashboard server as a
subprocess (``streamlit run server.py`` on a free loopback port), wait for its health endpoint,
sample its memory (psutil), and launch Debian's Chromium through Playwright.

Memory debugging: with ``SCANSNAP_MEMDEBUG`` set in the environment (a comma list of ``objects``,
``sessions``, ``gc``, ``gcpauses``, ``trim``, ``tracemalloc``), :func:`serve` starts the server through
:func:`memdebug_main`, which answers SIGUSR1 with a JSON report (:meth:`Server.memory_report`):
the live object counts by type, Streamlit's active and disconnected sessions, what a full
``gc.collect()`` and glibc's ``malloc_trim(0)`` give back (RSS before and after each), how long
the collector's full (generation-2) passes held the GIL since the last report, and tracemalloc's
top allocation sites and their growth since the previous report.  Debug only: the ``gc`` and
``trim`` actions change the memory they measure."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    t_launch: float  # time.monotonic() just before `streamlit run` was started
    log: IO[str]
    debug_dir: Path | None = None  # where the SIGUSR1 memory report goes (SCANSNAP_MEMDEBUG set)

    def _procs(self) -> list[psutil.Process]:
        """The server's process and all its descendants (fork server, training workers), alive now."""
        try:
            root = psutil.Process(self.proc.pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def pids(self) -> list[int]:
        return [p.pid for p in self._procs()]

    def rss_mb(self) -> float:
        """The server process's resident memory (VmRSS), MiB; 0 once it has exited."""
        with contextlib.suppress(psutil.Error):
            return psutil.Process(self.proc.pid).memory_info().rss / 2**20
        return 0.0

    def tree_pss_mb(self) -> float:
        """Memory of the server with its workers: the sum of their proportional set sizes (PSS:
        a page shared by k processes counts 1/k in each, so forked workers are not over-counted), MiB."""
        total = 0
        for p in self._procs():
            with contextlib.suppress(psutil.Error):
                total += p.memory_full_info().pss
        return total / 2**20

    def cpu_s(self) -> float:
        """CPU seconds (user + system, all threads) the server process has used; 0 once it has exited."""
        with contextlib.suppress(psutil.Error):
            t = psutil.Process(self.proc.pid).cpu_times()
            return t.user + t.system
        return 0.0

    def tree_cpu_s(self) -> float:
        """CPU seconds of the server and its workers: each live process's own time plus that of the
        descendants it has reaped (so an ended worker still counts)."""
        total = 0.0
        for p in self._procs():
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
        return total

    def memory_report(self, timeout: float = 60.0) -> dict[str, Any]:
        """With ``SCANSNAP_MEMDEBUG`` set (see :data:`MEMDEBUG_BOOT`): ask the server (SIGUSR1) for
        its memory report and return it (``{}`` without the variable, or when none came in time)."""
        if self.debug_dir is None:
            return {}
        out = self.debug_dir / "memdebug.json"
        out.unlink(missing_ok=True)
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                return json.loads(out.read_text())
            time.sleep(0.2)
        return {}

    def log_text(self) -> str:
        """The server's output so far (read through a file of its own: the server writes through ``log``)."""
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def log_tail(self, n: int = 3000) -> str:
        return self.log_text()[-n:]


def memdebug_main() -> None:
    """``python -c 'import bench.webserver as w; w.memdebug_main()' run server.py …``: Streamlit's
    command line with a SIGUSR1 handler that writes :func:`_memory_report` to ``$SCANSNAP_MEMDEBUG_OUT``."""
    actions = set(os.environ.get("SCANSNAP_MEMDEBUG", "").split(","))
    if "tracemalloc" in actions:
        import tracemalloc

        tracemalloc.start(int(os.environ.get("SCANSNAP_MEMDEBUG_FRAMES", "1")))
    state: dict[str, Any] = {}
    if "gcpauses" in actions:
        gc.callbacks.append(_full_pass_timer(state.setdefault("gc_pauses_s", [])))

    def on_usr1(_sig: int, _frame: Any) -> None:
        try:  # an exception here would surface in whatever the main thread runs: the server's event loop
            report = _memory_report(actions, state)
        except Exception as e:  # reported instead
            report = {"error": f"{type(e).__name__}: {e}"}
        out = Path(os.environ["SCANSNAP_MEMDEBUG_OUT"])
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(report, indent=1, default=str))
        tmp.replace(out)

    signal.signal(signal.SIGUSR1, on_usr1)
    from streamlit.web.cli import main

    sys.argv = ["streamlit", *sys.argv[1:]]
    main(prog_name="streamlit")


def _full_pass_timer(pauses: list[float]) -> Callable[[str, dict[str, int]], None]:
    """A ``gc.callbacks`` entry that appends the wall time of each generation-2 pass to ``pauses``."""
    started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        elif info["generation"] == 2:
            pauses.append(time.perf_counter() - started[0])

    return on_gc


def _rss_mb() -> float:
    return round(psutil.Process().memory_info().rss / 2**20, 1)


def _memory_report(actions: set[str], state: dict[str, Any]) -> dict[str, Any]:
    """Inside the server: what holds its memory (see the module's docstring)."""
    rep: dict[str, Any] = {"rss_mb": _rss_mb(), "gc_counts": gc.get_count()}
    if "sessions" in actions:
        rep["sessions"] = _streamlit_sessions()
    if "objects" in actions:
        counts: dict[str, int] = {}
        for o in gc.get_objects():
            name = type(o).__qualname__
            counts[name] = counts.get(name, 0) + 1
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:30]
        prev = state.get("objects", {})
        rep["objects_top"] = {k: [v, v - prev.get(k, 0)] for k, v in top}  # [count, change since last report]
        state["objects"] = counts
    if "gc" in actions:
        rep["gc_collected"] = gc.collect()
        rep["rss_after_gc_mb"] = _rss_mb()
    if "gcpauses" in actions:
        pauses = sorted(state["gc_pauses_s"])
        state["gc_pauses_s"].clear()  # the next report covers the passes after this one
        rep["gc_full_passes"] = {
            "count": len(pauses),
            "median_ms": round(1000 * pauses[len(pauses) // 2], 1) if pauses else None,
            "max_ms": round(1000 * pauses[-1], 1) if pauses else None,
        }
    if "trim" in actions:
        rep["malloc_trim_released"] = ctypes.CDLL("libc.so.6").malloc_trim(0)
        rep["rss_after_trim_mb"] = _rss_mb()
    if "tracemalloc" in actions:
        import tracemalloc

        snap = tracemalloc.take_snapshot()
        rep["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 1)
        rep["tracemalloc_top"] = [str(s) for s in snap.statistics("lineno")[:25]]
        if "snapshot" in state:
            rep["tracemalloc_growth"] = [str(s) for s in snap.compare_to(state["snapshot"], "lineno")[:25]]
        state["snapshot"] = snap
    return rep


def _streamlit_sessions() -> dict[str, Any]:
    """Streamlit's sessions: connected, and disconnected but kept for a reconnect (its session storage);
    open SQLite connections and live threads."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.app_session import AppSession

    mgr = Runtime.instance()._session_mgr  # debug only: Streamlit's private state
    stored = mgr._session_storage
    objs = gc.get_objects()
    by_key: dict[str, int] = {}
    for info in [*mgr.list_active_sessions(), *stored.list()]:
        state = info.session._session_state  # debug only: Streamlit's private state
        for key, value in {**state._old_state, **state._new_session_state}.items():
            by_key[key] = by_key.get(key, 0) + _deep_bytes(value, set())
    top = sorted(by_key.items(), key=lambda kv: -kv[1])[:10]
    return {
        "session_state_mb": round(sum(by_key.values()) / 2**20, 1),
        "session_state_top_keys_mb": {k: round(v / 2**20, 2) for k, v in top},
        "active": len(mgr.list_active_sessions()),
        "stored_for_reconnect": len(stored.list()),
        "app_session_objects": sum(isinstance(o, AppSession) for o in objs),
        "sqlite_connections": sum(isinstance(o, sqlite3.Connection) for o in objs),
        "threads": threading.active_count(),
    }


def _deep_bytes(obj: Any, seen: set[int], depth: int = 0) -> int:
    """Bytes held by a session-state value: numpy buffers, pandas frames, containers and plain objects
    (each object counted once; modules, types and functions not followed)."""
    if id(obj) in seen or depth > 12 or isinstance(obj, type | type(os) | type(_deep_bytes)):
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj, 64)
    import numpy as np
    import pandas as pd

    if isinstance(obj, pd.DataFrame | pd.Series):
        return int(obj.memory_usage(deep=True).sum())
    if isinstance(obj, np.ndarray):  # a view counts its own extent
        return size + int(obj.nbytes)
    if isinstance(obj, dict):
        return size + sum(_deep_bytes(k, seen, depth + 1) + _deep_bytes(v, seen, depth + 1) for k, v in obj.items())
    if isinstance(obj, list | tuple | set | frozenset):
        return size + sum(_deep_bytes(v, seen, depth + 1) for v in obj)
    if hasattr(obj, "__dict__"):
        return size + _deep_bytes(vars(obj), seen, depth + 1)
    return size


def health_latency(url: str, timeout: float = 5.0) -> float:
    """Seconds for one GET of /_stcore/health (``timeout`` when it fails or times out)."""
    t0 = time.monotonic()
    return time.monotonic() - t0 if healthy(url, timeout) else timeout


def healthy(url: str, timeout: float) -> bool:
    """Whether one GET of /_stcore/health answers "ok" within ``timeout`` seconds."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as r:
            return r.read() == b"ok"
    except OSError:
        return False


@contextlib.contextmanager
def serve(
    data_dir: str | Path,
    log_path: str | Path,
    env: dict[str, str] | None = None,
    health_timeout_s: float = 300,
    cpus: set[int] | None = None,
    root: str | Path | None = None,
) -> Iterator[Server]:
    """Run the dashboard until the block ends (then terminate it and wait, kill if it hangs);
    ``cpus`` pins the server to those cores; ``root``: serve another checkout of the app (default:
    this one), e.g. to measure a change side by side."""
    root = Path(root or ROOT).resolve()
    port = free_port()
    full_env = {
        **os.environ,
        "SCANSNAP_DATA_DIR": str(data_dir),
        "PYTHONPATH": str(root),
        **(env or {}),
    }
    debug_dir = Path(log_path).resolve().parent if full_env.get("SCANSNAP_MEMDEBUG") else None
    if debug_dir is not None:
        full_env["SCANSNAP_MEMDEBUG_OUT"] = str(debug_dir / "memdebug.json")
    launcher = ["-c", "import bench.webserver as w; w.memdebug_main()"] if debug_dir else ["-m", "streamlit"]
    log = open(log_path, "w+")  # noqa: SIM115 - closed below
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [
            sys.executable,
            *launcher,
            "run",
            "scansnap/server.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=root,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    server = Server(proc, f"http://127.0.0.1:{port}", t0, log, debug_dir)
    try:
        deadline = time.monotonic() + health_timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}: {server.log_tail()}")
            if healthy(server.url, 5.0):  # however slowly: a busy machine answers late (a guard, not a bound)
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not become healthy in {health_timeout_s} s")
            time.sleep(0.1)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


def launch_chromium(playwright: Any) -> Any:
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: run scripts/install_browser.sh")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


def _chromium_threads() -> list[int]:
    """Thread ids of every running Chromium process (and of Playwright's driver, which drives it)."""
    tids = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            cmd = " ".join(proc.cmdline())
            if "chromium" in cmd or "playwright" in cmd:
                tids += [t.id for t in proc.threads()]
    return tids


def pin_chromium(cpus: set[int]) -> int:
    """Pin every thread of Chromium (and of Playwright's driver) to ``cpus``; threads and processes
    started later inherit it from the thread that starts them.  Returns how many threads.  (Linux
    sets affinity per thread: pinning a process id alone would leave its other threads free.)"""
    n = 0
    for tid in _chromium_threads():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(tid, cpus)
            n += 1
    return n
