"""A real Ray cluster on this machine's loopback: a head and worker nodes, each a ``ray start --block``
process of its own (its raylet, object store and workers in its own process group), as on separate
machines.  For the cluster tests (tests/cluster) and the cluster benchmark (bench/cluster_overhead.py).

Every node gets ``num_cpus`` CPUs; the second node also a custom resource ``second`` (a test pins a
run to it with ``resources={"second": 1}``) and is killed with SIGKILL to every process of its
session, its workers included: the node is lost as a machine that loses power is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from bench.webserver import free_port

RAY = str(Path(sys.executable).with_name("ray"))
OBJECT_STORE = str(150 * 2**20)  # bytes per node: the runs' rows are small
# the head's check of its nodes: one missed for 3 s in a row is lost (seen ~7 s after a kill, measured;
# Ray's default, 5 misses 3 s apart, took 17 s): the test of the server following the cluster's CPUs
# waits for it (25.6 s -> 16.6 s); the node-kill tests' runs see their actor lost without it
HEALTH_CHECK = '{"health_check_period_ms": 1000, "health_check_failure_threshold": 3, "health_check_timeout_ms": 2000}'
SECOND = "second"  # the custom resource of the second node
# for the nodes and the driver alike: no usage report, no token (a loopback cluster has no other user;
# Ray >= 2.5x turns token auth on once a ~/.ray/auth_token exists), and no local Ray instance
# started behind our back by a Ray call made before joining (it would write that token)
LOOPBACK_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_ENABLE_AUTO_CONNECT": "0"}


class LoopbackCluster:
    """A head node and, with :meth:`start_node`, worker nodes; :meth:`stop` ends them all."""

    def __init__(self, num_cpus: int = 1, env: dict[str, str] | None = None):
        self.num_cpus = num_cpus
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.client_port = free_port()  # the head's Ray Client server: the cluster as ray://HOST:PORT
        self.client_address = f"ray://127.0.0.1:{self.client_port}"
        self.temp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # short: Ray's socket paths must fit 107 chars
        self.logs = Path(self.temp) / "logs"
        self.logs.mkdir()
        # the nodes hold the lab's dependencies (this venv), not its code: nothing of the checkout on their path,
        # started in a folder of their own; the driver ships the package (scansnap.service.cluster.runtime_env)
        inherited = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self.env = {**inherited, **LOOPBACK_ENV, **(env or {})}
        self.head = self._start(
            [
                "--head",
                f"--port={self.port}",
                "--include-dashboard=false",
                f"--temp-dir={self.temp}",
                "--disable-usage-stats",
                f"--ray-client-server-port={self.client_port}",
                f"--system-config={HEALTH_CHECK}",
            ],
            "head",
        )
        self.nodes: list[subprocess.Popen] = []

    def _start(self, args: list[str], name: str) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "a")  # noqa: SIM115 - the process keeps it
        return subprocess.Popen(
            [
                RAY,
                "start",
                "--block",
                "--node-ip-address=127.0.0.1",
                f"--num-cpus={self.num_cpus}",
                f"--object-store-memory={OBJECT_STORE}",
                *args,
            ],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self.temp,
        )

    def start_node(self, resources: str | None = None) -> subprocess.Popen:
        """One more worker node (``resources``: Ray's JSON of custom resources)."""
        extra = [f"--resources={resources}"] if resources else []
        node = self._start([f"--address={self.address}", *extra], f"node{len(self.nodes) + 1}")
        self.nodes.append(node)
        return node

    def alive_nodes(self) -> int:
        """Nodes the cluster counts as alive (this process connected)."""
        import ray

        return sum(n["Alive"] for n in ray.nodes())

    def wait_for_nodes(self, n: int, timeout_s: float = 90) -> None:
        end = time.monotonic() + timeout_s
        while self.alive_nodes() != n:
            if time.monotonic() > end:
                raise TimeoutError(f"{self.alive_nodes()} Ray nodes up after {timeout_s:.0f} s, not {n}: {self.logs}")
            time.sleep(0.2)

    @staticmethod
    def kill(proc: subprocess.Popen) -> None:
        """SIGKILL every process of the node: its process group (ray start, raylet, object store) first, so
        that no new worker starts, then the rest of its session: Ray puts each worker in a process group
        of its own, and a worker left alive serves calls and trains for seconds after its raylet died
        (measured: 1.7 s of answered calls, dead after 5.7 s)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        for _ in range(50):
            left = session_members(proc.pid)
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        raise RuntimeError(f"processes of the killed node's session still alive: {session_members(proc.pid)}")

    def stop(self) -> None:
        for proc in [*self.nodes, self.head]:
            self.kill(proc)
        shutil.rmtree(self.temp, ignore_errors=True)


def session_members(sid: int) -> list[int]:
    """The live processes of session ``sid`` (zombies, already dead, left out)."""
    members = []
    for p in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if os.getsid(p.pid) == sid and p.status() != psutil.STATUS_ZOMBIE:
                members.append(p.pid)
    return members


def connect_when_up(address: str, timeout_s: float = 90) -> None:
    """Join the cluster at ``address`` from this process once its head answers."""
    from scansnap.service.cluster import connect

    end = time.monotonic() + timeout_s
    host, port = address.split(":")
    while True:  # the head's GCS port open first: a failed ray.init is slow
        with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=1):
            break
        if time.monotonic() > end:
            raise TimeoutError(f"no Ray head at {address} after {timeout_s:.0f} s")
        time.sleep(0.2)
    while True:
        try:
            connect(address)
            return
        except ValueError:
            if time.monotonic() > end:
                raise
            time.sleep(0.5)


@contextlib.contextmanager
def loopback_cluster(nodes: int = 2, num_cpus: int = 1, env: dict[str, str] | None = None) -> Iterator[LoopbackCluster]:
    """A head and ``nodes - 1`` worker nodes (the first with the ``second`` resource), this process joined."""
    os.environ.update(LOOPBACK_ENV)
    cluster = LoopbackCluster(num_cpus, env)
    try:
        connect_when_up(cluster.address)
        for i in range(nodes - 1):
            cluster.start_node(f'{{"{SECOND}": 1}}' if i == 0 else None)
        cluster.wait_for_nodes(nodes)
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            import ray

            ray.shutdown()
        cluster.stop()
