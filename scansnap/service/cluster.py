"""Training on a Ray cluster, the server's side: a run is a Ray actor on any node, and the web server
alone writes the store (the node's side: :mod:`scansnap.service.cluster_node`).

A node holds no store of the server's.  The server (:func:`drive`, in the process that supervises the
run) sends the run's stored rows (:func:`~scansnap.service.replication.read_rows`: its config, its
statics, its last checkpoint; an uploaded corpus file with them) to an actor that keeps them in a
scratch store of its own, resumes the run there from its checkpoint as a local worker would
(:class:`~scansnap.service.runner.RunJob`) and streams back, after every snapshot and status change,
the rows written since the last ones it sent; the server writes them into its store
(:func:`~scansnap.service.replication.write_rows`).  The controls (pause, resume, step N, stop, speed,
the scheduler's slot) reach the actor through Ray, polled every :data:`CONTROL_POLL_S`.

A node lost mid-run ends the stream with a Ray error: the run is left ``interrupted`` with the rows up
to the last checkpoint it sent, and resuming it (on any node) continues from that checkpoint exactly
as a local resume does.  A grid (:class:`RayExecutor`) resumes a lost cell at once, up to
:data:`RETRIES` times.  A reproduction runs each item, and Fig. 6's panels, as tasks
(:func:`reproduce_items`).

Every node needs the lab's dependencies (``requirements-cluster.txt``: ``scripts/ray_start.sh`` installs
them), not its code: the server ships this ``scansnap`` package to every node as it joins (Ray's
``runtime_env``, :func:`runtime_env`), so the nodes run the server's code whatever they hold, and the same
corpus folder for a WikiText run (an uploaded corpus travels with the run).  A node's workers compute with
one thread of torch and of BLAS, as a local worker does, so a result does not depend on where it ran.  A
run whose device is ``auto`` or ``cuda`` asks Ray for a GPU where the cluster has one; the node and the
device it trained on are stored with the run.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import queue
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from scansnap.paper.items.costs import in_order_of, longest_first
from scansnap.service.cluster_node import END, Seed, control_state, run_host, seed_of
from scansnap.service.control import RunControl
from scansnap.service.replication import RunRows, write_rows
from scansnap.service.store import RunStore

NAMESPACE = "scansnap"
CONTROL_POLL_S = 0.05  # how often the server looks at a cluster run's controls
WAIT_S = 0.5  # how often the server looks for a stop while no node has taken the run yet
RETRIES = 3  # a grid cell whose node is lost is resumed this many times at most
ADDRESS = re.compile(r"auto|(ray://)?[\w.\-]+:\d{1,5}")
LOST = "lost"  # what drive() returns when the node (or its actor) died
CLIENT_TRIES = 3  # joins through Ray Client (ray://) before giving up
CLIENT_RETRY_S = 1.0  # more wait before each next try
CLIENT_SERVER_FAILED = "Initialization failure from server"  # Ray Client: the head could not start its server
PACKAGE = Path(__file__).resolve().parents[1]  # the scansnap package, shipped to every node
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}


@functools.cache
def _empty_folder() -> str:
    return tempfile.mkdtemp(prefix="scansnap-ray-")


def runtime_env() -> dict[str, Any]:
    """What Ray gives every worker of this driver: the ``scansnap`` package (uploaded once per version of its
    files, without bytecode), one BLAS thread (set before numpy loads), and an empty working directory of its
    own: without one Ray puts the driver's folder and its script's on every worker's path, and a node that
    holds a checkout at that path would import that instead of the package shipped."""
    return {
        "py_modules": [str(PACKAGE)],
        "working_dir": _empty_folder(),
        "excludes": ["__pycache__/", "*.pyc"],
        "env_vars": ONE_THREAD,
    }


def check_address(address: str) -> str:
    """A Ray cluster's address as ``ray.init`` takes it: ``HOST:PORT`` (the head's GCS port, 6379 by
    default; this machine on the cluster's network), ``ray://HOST:PORT`` (Ray Client, the head's client
    port, 10001 by default: from any machine that reaches that port) or ``auto`` (this machine is a
    node); ValueError says what is allowed."""
    address = address.strip()
    if not ADDRESS.fullmatch(address):
        raise ValueError(
            f"cluster address {address[:60]!r} is not a Ray address: expected HOST:6379, ray://HOST:10001 or auto"
        )
    return address


def connect(address: str) -> None:
    """Join the cluster at ``address`` from this process (once: later calls keep that connection).  Through
    Ray Client (``ray://``) up to :data:`CLIENT_TRIES` times when the head answered but could not start the
    server process it starts for each client that joins (about 1 join in 15 here: the process exited at
    once, its log empty, and Ray Client said so ~30 s later; a second try starts another); an address that
    does not answer fails at once (after Ray Client's own ~30 s of retries)."""
    import ray

    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    address = check_address(address)
    why = ""
    for attempt in range(CLIENT_TRIES if address.startswith("ray://") else 1):
        time.sleep(CLIENT_RETRY_S * attempt)  # none before the first
        try:
            ray.init(
                address=address,
                namespace=NAMESPACE,
                runtime_env=runtime_env(),
                log_to_driver=False,
                logging_level=logging.ERROR,
            )
            return
        except (ConnectionError, RuntimeError, TimeoutError) as e:
            why = (str(e).strip().splitlines() or [type(e).__name__])[-1]  # a server's traceback: its last line
            with contextlib.suppress(Exception):
                ray.shutdown()  # what the failed join left, before the next
            if CLIENT_SERVER_FAILED not in str(e):
                break
    raise ValueError(
        f"cannot join the Ray cluster at {address}: {why}; start one with `ray start --head` "
        "(docs/operate.md: Beyond one machine)"
    )


def cluster_nodes(address: str) -> str:
    """The nodes of the cluster at ``address`` as JSON (each: Alive, Resources), for a server that does
    not join Ray (:mod:`scansnap.service.cluster_watch`)."""
    import ray

    connect(address)
    return json.dumps([{"Alive": n["Alive"], "Resources": n["Resources"]} for n in ray.nodes()])


def cluster_cpus(address: str) -> int:
    """The CPUs the cluster at ``address`` has (its training slots)."""
    import ray

    connect(address)
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def has_gpu() -> bool:
    import ray

    return ray.cluster_resources().get("GPU", 0) > 0


# ------------------------------------------------------------------ the server's side
def resources_for(store: RunStore, run_id: str) -> dict[str, float]:
    """One CPU; and one GPU where the run's device is auto or cuda and the cluster has one."""
    run = store.get_run(run_id)
    config = json.loads(run["config_json"]) if run is not None else {}
    device = (config.get("model") or {}).get("device", "auto")  # model.device, in every kind
    return {"num_cpus": 1, "num_gpus": 1 if device in ("auto", "cuda") and has_gpu() else 0}


@dataclass
class Relay:
    """The server's side of one run's message stream: rows into the store, steps into the controls."""

    store: RunStore
    control: RunControl
    writer_pid: int | None
    node: str | None = None
    last: RunRows | None = None
    status: tuple[str, str | None] = (LOST, "the cluster node's stream ended without a final status")

    def take(self, msg: tuple) -> None:
        kind = msg[0]
        if kind == "rows":
            self.last = msg[1]
            write_rows(self.store, msg[1], self.node)
        elif kind == "node":
            self.node = msg[1]
        elif kind == "status":
            self.status = (msg[1], msg[2])
        elif kind == "progress":
            self.control.report_step(msg[1])
            if msg[2]:
                self.control.report_step_s(msg[2])
        elif kind == "parked" and self.last is not None:  # the server keeps the paused run from now on
            write_rows(self.store, self.last, self.node, writer_pid=self.writer_pid)
            self.status = ("parked", None)


def host_options(store: RunStore, run_id: str, resources: dict[str, float] | None = None) -> dict[str, Any]:
    """What a run's host asks of Ray: a CPU, a GPU where the run would use one, and ``resources``
    (custom Ray resources the node must have)."""
    return resources_for(store, run_id) | ({"resources": resources} if resources else {})


def new_host(options: dict[str, Any]) -> Any:
    """A :class:`~scansnap.service.cluster_node.RunHost` actor (two threads: messages, controls)."""
    return run_host().options(max_concurrency=2, **options).remote()


def drive(
    store: RunStore,
    run_id: str,
    control: RunControl | None = None,
    on_message: Callable[[tuple], None] | None = None,
    park_after_s: float | None = None,
    writer_pid: int | None = None,
    resources: dict[str, float] | None = None,
    host: Any = None,
) -> tuple[str, str | None]:
    """Train stored run ``run_id`` on the cluster (this process already connected) from its last
    checkpoint, writing what the node sends into ``store``, forwarding ``control`` and passing every
    message to ``on_message``; returns its final (status, message), or (:data:`LOST`, why) when the
    node or its actor died (the run is then stored ``interrupted``).  ``writer_pid``: the process that
    keeps a parked run (the server); ``host``: a RunHost to train on (default: a new one, for this
    run only; see :func:`host_options` for ``resources``)."""
    import ray

    relay = Relay(store, control or RunControl(), writer_pid)
    own = host is None
    host = new_host(host_options(store, run_id, resources)) if own else host
    done = threading.Event()
    forwarder = threading.Thread(target=_forward, args=(host, relay.control, done), daemon=True)
    forwarder.start()
    try:
        _stream(host, seed_of(store, run_id), park_after_s, relay, on_message)
    except KeyError:  # the run was deleted here while it trained: stop the node
        relay.status = ("stopped", "the run was deleted while it trained")
    except ray.exceptions.RayError as e:
        why = (
            f"the cluster node it trained on ({relay.node or 'not yet known'}) was lost at step "
            f"{relay.control.step} ({type(e).__name__}); snapshots up to its last checkpoint are intact: resume it"
        )
        relay.status = (LOST, why)
    finally:
        done.set()
        forwarder.join()
        if own or relay.status[0] != "finished":  # a host that ended any other way is not reused
            with contextlib.suppress(Exception):
                ray.kill(host)
    stored = {LOST: "interrupted", "stopped": "stopped" if relay.node is None else None}.get(relay.status[0])
    if stored:  # what no node stored: the node was lost, or none took the run before it was stopped
        with contextlib.suppress(KeyError):
            store.set_status(run_id, stored, relay.status[1])
    return relay.status


def _stream(
    host: Any, seed: Seed, park_after_s: float | None, relay: Relay, on_message: Callable[[tuple], None] | None
) -> None:
    """Start the run on ``host`` and take its messages in batches as they come (a long poll, which Ray
    Client has too), until the run's end; a run stopped before any node took it ends here."""
    import ray

    call = host.start.remote(seed, park_after_s)
    while True:
        ready, _ = ray.wait([call], timeout=WAIT_S)
        if not ready:
            if relay.node is None and relay.control.stop_event.is_set():
                relay.status = ("stopped", "stopped before a cluster node took it")
                return
            continue
        for msg in ray.get(call):
            if msg == END:
                return
            relay.take(msg)
            if on_message is not None:
                on_message(msg)
        call = host.take.remote()


def _forward(actor: Any, control: RunControl, done: threading.Event) -> None:
    """The server's controls to the actor, whenever they change (Step N's grants as they come)."""
    sent = None
    while not done.is_set():
        state = control_state(control)
        granted = control.allowance(1 << 30) if state[1] else 0
        if state != sent or granted:
            actor.set_controls.remote(state, granted)
            sent = state
        done.wait(CONTROL_POLL_S)


class RayExecutor:
    """Stored runs trained on the Ray cluster at ``address``: as many workers as it has CPUs, each
    keeping one host that trains run after run (a host whose node is lost is replaced, and its cell
    resumed from its last checkpoint, up to :data:`RETRIES` times); a worker out of runs ends its
    host, which frees its CPU for a replacement that waits for one."""

    def __init__(self, address: str):
        self.slots = cluster_cpus(address)

    def train_runs(self, data_dir: str, run_ids: Iterable[str]) -> Iterator[tuple[int, str, str, str | None]]:
        work: queue.SimpleQueue[tuple[int, str]] = queue.SimpleQueue()
        ids = list(run_ids)
        for item in enumerate(ids):
            work.put(item)
        done: queue.SimpleQueue[tuple[int, str, str, str | None]] = queue.SimpleQueue()
        with ThreadPoolExecutor(self.slots) as pool:
            workers = [pool.submit(_grid_worker, data_dir, work, done) for _ in range(min(self.slots, len(ids)))]
            for _ in ids:
                while True:
                    try:
                        yield done.get(timeout=1.0)
                        break
                    except queue.Empty:
                        if all(w.done() for w in workers):  # each ends only when no run is left
                            errors = [str(w.exception()) for w in workers if w.exception() is not None]
                            raise RuntimeError(f"the grid's workers ended early: {'; '.join(errors)}") from None

    def close(self) -> None:
        """The connection stays for this process's life (Ray joins a cluster once per process)."""


def _grid_worker(data_dir: str, work: queue.SimpleQueue, done: queue.SimpleQueue) -> None:
    """Take runs until none is left, each on this worker's host (made, or replaced, as needed)."""
    import ray

    host, options = None, None
    with RunStore(data_dir) as store:
        while True:
            try:
                i, rid = work.get_nowait()
            except queue.Empty:
                break
            try:
                for _ in range(RETRIES + 1):
                    wanted = host_options(store, rid)
                    if host is not None and wanted != options:
                        ray.kill(host)
                        host = None
                    if host is None:
                        host, options = new_host(wanted), wanted
                    status, message = drive(store, rid, host=host)
                    host = host if status == "finished" else None  # drive ended any other host
                    if status != LOST:
                        break
            except Exception as e:  # this run could not be driven: say why, and go on with the next
                status, message, host = "failed", f"{type(e).__name__}: {e}", None
            done.put((i, rid, "interrupted" if status == LOST else status, message))
    if host is not None:
        with contextlib.suppress(Exception):
            ray.kill(host)


# ------------------------------------------------------------------ reproduce on the cluster
def _item_task(name: str, quick: bool, seeds: int | None) -> Any:
    """One reproduce item on a node (Fig. 6's panels and a text item's seeds as tasks of their own)."""
    from scansnap.paper.items.runner import run_item
    from scansnap.service.run_kinds import item_loader

    return run_item(name, quick, corpus_loader=item_loader(name), seeds=seeds, pmap=task_map)


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    """One task: ``fn(item)`` with one torch thread, as a local reproduction computes it."""
    from scansnap.core.device import torch_threads

    with torch_threads(1):
        return fn(item)


def task_map(fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
    """``map`` whose calls run as cluster tasks of one CPU each (results in order)."""
    import ray

    call = ray.remote(num_cpus=1)(_call)
    return iter(ray.get([call.remote(fn, item) for item in items]))


def reproduce_items(names: list[str], quick: bool, seeds: int | None = None) -> list[Any]:
    """The reproduce items ``names`` (this process connected), each a cluster task, submitted longest first;
    results in the order of ``names``.  Every task trains with one torch thread, as a local reproduction
    does: the same numbers."""
    order = longest_first(names, quick)
    return in_order_of(names, order, list(task_map(partial(_item_task, quick=quick, seeds=seeds), order)))
