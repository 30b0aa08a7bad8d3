"""A cluster node's side of a run (:mod:`scansnap.service.cluster` is the server's): what travels to the
node (:class:`Seed`), the scratch store it trains in and the messages it streams back (:class:`NodeRun`,
the body of the Ray actor), and the controls it mirrors."""

from __future__ import annotations

import contextlib
import queue
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scansnap.service.control import RunControl
from scansnap.service.replication import RunRows, read_rows, statics_sizes, write_rows
from scansnap.service.store import READ_COLUMNS, RunStore

PROGRESS_S = 0.25  # how often an actor reports its step between snapshots
ControlState = tuple[bool, bool, float, bool, bool]  # stop, paused, speed cap, slot, light ok


# ------------------------------------------------------------------ what travels to a node
@dataclass(frozen=True)
class Seed:
    """What a node needs to train a stored run: its rows up to its checkpoint and the files it reads
    under the data directory (relative path → bytes: an uploaded corpus)."""

    rows: RunRows
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def start(self) -> int:
        """The step the node resumes from (-1: the beginning)."""
        return self.rows.checkpoint[0] if self.rows.checkpoint is not None else -1


def seed_of(store: RunStore, run_id: str) -> Seed:
    """Run ``run_id`` as the server holds it, and the files under the data folder it reads (its kind's
    ``run_files``: a real-text run's uploaded corpus)."""
    from scansnap.service.run_kinds import run_files

    rows = read_rows(store, run_id)
    info = {c: rows.run[READ_COLUMNS.index(c)] for c in ("kind", "config_json")}
    files = {}
    for rel in run_files(info):
        with contextlib.suppress(OSError):  # missing: the node's run fails and says which corpus it lacks
            files[str(rel)] = (store.data_dir / rel).read_bytes()
    return Seed(rows, files)


def control_state(control: RunControl) -> ControlState:
    """What the actor mirrors of the server's controls: (stop, paused, pace, slot, light ok); the pace is
    the speed cap in steps/s, or minus the story rate (story time)."""
    law, cap = control.pace
    return (
        control.stop_event.is_set(),
        control.paused,
        -(cap or 0.0) if law == "story" else cap or 0.0,
        control.has_slot,
        control.light_ok,
    )


def apply_state(control: RunControl, state: ControlState, granted: int) -> None:
    stop, paused, speed, slot, light = state
    (control.pause if paused else control.resume)()
    if speed < 0:
        control.set_story(-speed)
    else:
        control.max_steps_per_s = speed or None
    control.set_slot(slot, light)
    if granted:
        control.grant_steps(granted)
    if stop:
        control.stop()


# ------------------------------------------------------------------ the node's side
class NodeRun:
    """A stored run trained on this node in a scratch store (inside a :class:`RunHost`): :meth:`messages`
    yields ``("node", name, device)``, then ``("rows", RunRows)`` after each snapshot and status change,
    ``("status", status, message)``, ``("demand", d)``, ``("progress", step, step_s)`` and, for a run
    paused long enough, ``("parked", step)``."""

    def __init__(self, seed: Seed, park_after_s: float | None = None):
        self.dir = Path(tempfile.mkdtemp(prefix="scansnap-node-"))
        for rel, blob in seed.files.items():
            path = self.dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)
        self.store = RunStore(self.dir)
        write_rows(self.store, seed.rows, create=True)
        self.run_id = seed.rows.run_id
        self.shipped = seed.start
        self.statics_key: tuple = ()
        self.control = RunControl()
        self.park_after_s = park_after_s
        self.inbox: queue.Queue[tuple] = queue.Queue()

    def set_controls(self, state: ControlState, granted: int = 0) -> None:
        apply_state(self.control, state, granted)

    def _rows(self) -> RunRows:
        """The rows written since the last ones sent (the statics only when they changed)."""
        key = tuple(statics_sizes(self.store, self.run_id))
        rows = read_rows(self.store, self.run_id, after=self.shipped, statics=key != self.statics_key)
        self.statics_key, self.shipped = key, rows.last_step
        return rows

    def _status(self, status: str, message: str | None) -> None:
        """After the runner stored a status: its rows first, then the status itself."""
        self.inbox.put(("sync",))
        self.inbox.put(("status", status, message))

    def _train(self) -> None:
        from scansnap.service.runner import RunJob

        try:
            job = RunJob.resume(self.store, self.run_id, status="running")
            self.inbox.put(("node", node_name(), job.device))
            self.inbox.put(("sync",))
            job.on_status = self._status
            job.on_demand = lambda d: self.inbox.put(("demand", d))
            job.park_after_s = self.park_after_s
            if job.run(self.control, on_snapshot=lambda _: self.inbox.put(("sync",))) == "parked":
                self.inbox.put(("sync",))
                self.inbox.put(("parked", job.step))
        except Exception as e:  # the runner stored 'failed' with the error where it got that far
            run = self.store.get_run(self.run_id) or {}
            message = run.get("message") if run.get("status") == "failed" else None
            if message is None:  # the error came before the runner could store it
                message = f"the node could not train the run: {type(e).__name__}: {e}"
                self.store.set_status(self.run_id, "failed", message)
            self.inbox.put(("sync",))
            self.inbox.put(("status", "failed", message))
        finally:
            self.inbox.put(("end",))

    def messages(self) -> Iterator[tuple]:
        trainer = threading.Thread(target=self._train, name=f"train-{self.run_id}", daemon=True)
        trainer.start()
        last = None
        try:
            while True:
                try:
                    msg = self.inbox.get(timeout=PROGRESS_S)
                except queue.Empty:
                    now = (self.control.step, self.control.step_s)
                    if now != last:
                        last = now
                        yield ("progress", *now)
                    continue
                if msg[0] == "end":
                    break
                yield ("rows", self._rows()) if msg[0] == "sync" else msg
            yield ("progress", self.control.step, self.control.step_s)
        finally:
            self.control.stop()
            trainer.join()
            self.store.close()
            shutil.rmtree(self.dir, ignore_errors=True)


def node_name() -> str:
    """This node as the Runs page shows it: host name, IP and the start of Ray's node id."""
    import ray

    ip = ray.util.get_node_ip_address()
    return f"{socket.gethostname()} ({ip}, node {ray.get_runtime_context().get_node_id()[:8]})"


IDLE: ControlState = (False, False, 0.0, True, True)  # a host between runs: no stop, not paused, no cap
TAKE_S = 1.0  # the longest a take waits in the actor for a message (the server asks again at once)
END = ("end",)  # the last message of a run: the host is free for the next one
FAILED = "failed on the node"  # an outbox item (FAILED, exception): the run's messages raised it


class RunHost:
    """The body of the Ray actor: a worker process with torch loaded (one thread) that trains stored
    runs one after another (a grid's cells reuse it: the process start and the imports, ~5 s, are paid
    once).  The server starts a run (:meth:`start`) and fetches its messages in batches (:meth:`take`, a
    long poll: Ray Client, ``ray://``, has no streaming generators); its controls arrive through
    :meth:`set_controls`, possibly before the run does."""

    def __init__(self) -> None:
        import torch

        import scansnap.service.runner  # noqa: F401 - the training code, loaded before the first run

        torch.set_num_threads(1)
        self.state: ControlState = IDLE
        self.run: NodeRun | None = None
        self.outbox: queue.Queue[tuple] = queue.Queue()
        self.failure: Exception | None = None  # what the run's messages raised here, for take to raise

    def set_controls(self, state: ControlState, granted: int = 0) -> None:
        self.state = state
        if self.run is not None:
            self.run.set_controls(state, granted)

    def start(self, seed: Seed, park_after_s: float | None = None) -> list[tuple]:
        """Train the seed's run here, in a thread that puts :class:`NodeRun`'s messages, then :data:`END`,
        in the outbox; returns no message (the first batch is :meth:`take`'s)."""
        self.run, self.failure = NodeRun(seed, park_after_s), None
        self.run.set_controls(self.state)
        threading.Thread(target=self._pump, args=(self.run,), name=f"pump-{self.run.run_id}", daemon=True).start()
        return []

    def _pump(self, run: NodeRun) -> None:
        try:
            for msg in run.messages():
                self.outbox.put(msg)
        except Exception as e:  # raised to the server by take, after the messages before it
            self.outbox.put((FAILED, e))
        finally:
            self.run, self.state = None, IDLE  # free for the next run before the server hears the end
            self.outbox.put(END)

    def take(self, wait_s: float = TAKE_S) -> list[tuple]:
        """The messages since the last take, in order (waiting up to ``wait_s`` for the first; none when
        nothing came), :data:`END` last once the run is over.  Where the run's messages failed on this node,
        the take after the last of them raises that error (the server's Ray call fails with it: the node's
        run is lost)."""
        if self.failure is not None:
            raise self.failure
        try:
            batch = [self.outbox.get(timeout=wait_s)]
        except queue.Empty:
            return []
        while batch[-1] != END and batch[-1][0] != FAILED:
            try:
                batch.append(self.outbox.get_nowait())
            except queue.Empty:
                break
        if batch[-1][0] == FAILED:
            self.failure = batch.pop()[1]
            if not batch:
                raise self.failure
        return batch


_ACTOR: Any = None


def run_host() -> Any:
    """:class:`RunHost` as a Ray actor class (made once per process: Ray registers it with the cluster)."""
    global _ACTOR
    if _ACTOR is None:
        import ray

        _ACTOR = ray.remote(RunHost)
    return _ACTOR
