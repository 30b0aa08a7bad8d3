"""Shared by the browser benchmarks and the load test: start the dashboard server as a
subprocess (``streamlit run server.py`` on a free loopback port), wait for its health endpoint,
sample its memory, and launch Debian's Chromium through Playwright."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

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

    def pids(self) -> list[int]:
        """The server's process and all its descendants (fork server, training workers), alive now."""
        children: dict[int, list[int]] = {}
        for name in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(name))
        tree, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, []))
        return tree

    def rss_mb(self) -> float:
        """The server process's resident memory (VmRSS), MiB; 0 once it has exited."""
        return _status_kib(self.proc.pid, "VmRSS:") / 1024

    def tree_pss_mb(self) -> float:
        """Memory of the server with its workers: the sum of their proportional set sizes (PSS:
        a page shared by k processes counts 1/k in each, so forked workers are not over-counted), MiB."""
        total = 0
        for pid in self.pids():
            with contextlib.suppress(OSError, IndexError, ValueError):
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        return total / 1024

    def cpu_s(self) -> float:
        """CPU seconds (user + system, all threads) the server process has used; 0 once it has exited."""
        return _cpu_s(self.proc.pid, children=False)

    def tree_cpu_s(self) -> float:
        """CPU seconds of the server and its workers: each live process's own time plus that of the
        descendants it has reaped (so an ended worker still counts)."""
        return sum(_cpu_s(pid, children=True) for pid in self.pids())

    def log_tail(self, n: int = 3000) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-n:]


def _status_kib(pid: int, key: str) -> int:
    with contextlib.suppress(OSError, IndexError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def _cpu_s(pid: int, children: bool) -> float:
    """utime + stime (+ cutime + cstime: reaped children) of ``pid`` from /proc, s; 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
    except (OSError, IndexError, ValueError):
        return 0.0
    return ticks / os.sysconf("SC_CLK_TCK")


def health_latency(url: str, timeout: float = 5.0) -> float:
    """Seconds for one GET of /_stcore/health (``timeout`` when it fails or times out)."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as r:
            ok = r.read() == b"ok"
    except OSError:
        ok = False
    return time.monotonic() - t0 if ok else timeout


@contextlib.contextmanager
def serve(
    data_dir: str | Path,
    log_path: str | Path,
    env: dict[str, str] | None = None,
    health_timeout_s: float = 90,
    cpus: set[int] | None = None,
) -> Iterator[Server]:
    """Run the dashboard until the block ends (then terminate it and wait, kill if it hangs);
    ``cpus`` pins the server to those cores."""
    port = free_port()
    full_env = {**os.environ, "SCANSNAP_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT), **(env or {})}
    log = open(log_path, "w+")  # noqa: SIM115 - closed below
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "server.py",
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
        cwd=ROOT,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    server = Server(proc, f"http://127.0.0.1:{port}", t0, log)
    try:
        deadline = time.monotonic() + health_timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}: {server.log_tail()}")
            if health_latency(server.url, 1.0) < 1.0:
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
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            cmd = Path(f"/proc/{pid}/cmdline").read_text()
            if "chromium" in cmd or "playwright" in cmd:
                tids += [int(t) for t in os.listdir(f"/proc/{pid}/task")]
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
