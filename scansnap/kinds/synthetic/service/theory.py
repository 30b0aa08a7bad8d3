"""Theorem 4's chart overlay of a synthetic run, computed once per run and stored with its statics: by
its worker before the first step (:func:`overlay_statics`), or, where that would hold the first step
back, in a process of its own beside the training (:class:`OverlayProcess`).  A run stored without it
(before runs kept it, or stopped before it was done) gets it when it is first read
(:func:`backfill_overlay`), from its config and its first stored logits: what its charts computed on
every view before, in the web process."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from contextlib import suppress
from pathlib import Path

import numpy as np

from scansnap.kinds.synthetic.paper.observe import problem_from_statics
from scansnap.kinds.synthetic.paper.run_theory import ReplicaTheory, replica_conditions
from scansnap.kinds.synthetic.paper.theory_view import overlay_statics
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import Problem, build_problem
from scansnap.service.store import RunStore
from scansnap.service.writers import die_with

BACKGROUND_NICE = 10  # the overlay's process yields the CPU to training and to the pages (os.nice's scale)


def backfill_overlay(store: RunStore, info: dict, statics: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``statics`` with the overlay of a run that has none, a snapshot, and no worker that will store it
    (queued or running: the worker's own): computed now when it is quick (:data:`WEB_INLINE_WORK`), else
    started in a process of its own (this read returns without it; a later one finds it stored)."""
    if "theory_step" in statics or "P" not in statics or info["status"] in ("queued", "running"):
        return statics
    run_id = info["id"]
    steps = store.steps(run_id)
    if not steps:
        return statics
    cfg = RunConfig.from_json(info["config_json"])
    first = store.snapshot(run_id, steps[0])
    shape = (cfg.n_replicas, len(statics["query_tokens"]), statics["P"].shape[1])
    z0 = first["z"].astype(np.float64) if "z" in first else np.zeros(shape)
    problem = problem_from_statics(statics, cfg)
    theories = [ReplicaTheory(replica_conditions(cfg, problem, z0[r], r), None) for r in range(cfg.n_replicas)]
    if curve_work(cfg, problem, theories) > WEB_INLINE_WORK:
        with _BACKFILLS_LOCK:
            if run_id not in _BACKFILLS or _BACKFILLS[run_id].done():
                _BACKFILLS[run_id] = OverlayProcess(cfg, z0, theories, store, run_id)
        return statics
    derived = overlay_statics(cfg, problem, z0, theories)
    store.add_statics(run_id, derived)
    return statics | derived


WEB_INLINE_WORK = 5_000  # steps × replicas a page's read computes itself (≈ 0.15 s); more in a process
_BACKFILLS: dict[str, OverlayProcess] = {}
_BACKFILLS_LOCK = threading.Lock()
INLINE_WORK = 50_000  # steps × replicas of the reduced system computed before the first step (≈ 1.4 s at most)


def curve_work(cfg: RunConfig, problem: Problem, theories: list[ReplicaTheory]) -> int:
    """Steps × replicas of the reduced system still to step for the overlay: the replicas whose curves
    are not computed yet (the run computed those under Theorem 4 for its snapshots), none for Adam or
    without a common token (no curve)."""
    if cfg.optim.method != "sgd" or not problem.common_mask.any():
        return 0
    return sum(th.curves is None for th in theories) * cfg.optim.steps


def store_overlay(
    data_dir: str, run_id: str, cfg_json: str, z0: np.ndarray, theories: list[ReplicaTheory], server_pid: int
) -> None:
    """In a process of its own: complete a run's overlay (:func:`overlay_statics`) and store it."""
    die_with(server_pid)
    cfg = RunConfig.from_json(cfg_json)
    overlay = overlay_statics(cfg, build_problem(cfg.data), z0, theories)
    with RunStore(data_dir) as store, suppress(KeyError):  # KeyError: the run was deleted meanwhile
        store.add_statics(run_id, overlay)


class OverlayProcess:
    """The overlay of a run whose replicas outside Theorem 4 take long to step (a long run, many
    replicas), computed in a process of its own beside the training: in a thread, the reduced system's
    Python loop held the interpreter lock, and a 10⁶-step run's first step waited 24 s for it.  A plain
    subprocess (a training worker is a daemonic process: multiprocessing gives it no children), given
    its arguments pickled on stdin by its parent.  It runs at a lower CPU priority (:data:`BACKGROUND_NICE`):
    the overlay may wait; the first steps of a run and the pages of a hall may not."""

    def __init__(
        self, cfg: RunConfig, z0: np.ndarray, theories: list[ReplicaTheory], store: RunStore, run_id: str
    ) -> None:
        args = (str(store.data_dir), run_id, cfg.to_json(), z0, theories, os.getpid())
        root = str(Path(__file__).resolve().parents[4])  # the folder that holds the scansnap package
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
        self._process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, env=env)
        with suppress(OSError):  # a platform without priorities computes it at the training's
            os.setpriority(os.PRIO_PROCESS, self._process.pid, os.getpriority(os.PRIO_PROCESS, 0) + BACKGROUND_NICE)
        with suppress(BrokenPipeError), self._process.stdin as pipe:  # type: ignore[union-attr]
            pickle.dump(args, pipe)  # a child that died at once has said why on stderr; the run goes on

    @property
    def pid(self) -> int:
        return self._process.pid

    def done(self) -> bool:
        return self._process.poll() is not None

    def finish(self, cancel: bool = False) -> None:
        """Wait until it is stored (``cancel``: stop it; nothing is stored)."""
        if cancel:
            self._process.kill()
        self._process.wait()


if __name__ == "__main__":
    store_overlay(*pickle.load(sys.stdin.buffer))
