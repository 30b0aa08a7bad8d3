"""Background reproductions for the dashboard: one process-wide :class:`ReproduceManager` per
data directory (:func:`get_repro_manager`), like :func:`engine.service.jobs.get_manager` for training.

The selected items run (:func:`engine.paper.items.run_item`, one intra-op torch thread) in ONE
worker thread.  A reproduction is CPU heavy and the server is shared by many sessions, so at
most one runs at a time in the whole process: :meth:`ReproduceManager.start` called while one
runs starts nothing and returns the running one's id (every session then watches that run).

A finished reproduction is stored in ``<data_dir>/reproductions/<id>/``: report.html,
verdicts.json, data/*.parquet (:func:`engine.paper.report.write_report`), configs.json ({item:
configs}), figures/index.json ([{item, k, caption}]) and figures/<item>_<k>.json (plotly JSON).
It is written into ``.tmp-<id>/`` and renamed into place at the end, so a stopped, failed or
killed reproduction is never listed.  Ids are ``YYYYMMDD-HHMMSS-xxxxxx`` (UTC start time, 6 hex
digits) and every path is built from an id that matched :data:`ID_RE` in full, so no text from a
URL or a widget reaches a path outside ``<data_dir>/reproductions``.  ``stop()`` sets an event
the worker checks between items and at every progress report; ``shutdown()`` stops and joins
the worker and runs at exit (a torch thread alive at interpreter exit aborts the process).
"""

from __future__ import annotations

import atexit
import json
import logging
import re
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.paper.items import ITEMS, ItemResult, check_items, run_item, total_work
from engine.paper.report import write_report
from engine.service.store import default_data_dir

ID_RE = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")
SUBDIR = "reproductions"
FILES = ("report.html", "verdicts.json")
log = logging.getLogger(__name__)


class _StopRequestedError(Exception):
    """Raised inside the worker when a stop was requested."""


def check_id(rid: object) -> str:
    """``rid`` if it is a reproduction id (``YYYYMMDD-HHMMSS-xxxxxx``), else ValueError."""
    if not isinstance(rid, str) or not ID_RE.fullmatch(rid):
        raise ValueError(f"{str(rid)[:80]!r} is not a reproduction id (expected YYYYMMDD-HHMMSS-xxxxxx)")
    return rid


def new_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class ReproStatus:
    """A snapshot of one reproduction of this process."""

    id: str
    state: str  # running, finished, failed or stopped
    items: tuple[str, ...]
    quick: bool
    items_done: int
    current: str | None  # the item running now
    steps_done: int
    steps_total: int  # optimiser steps of the selection (engine.paper.items.total_work)
    elapsed_s: float
    error: str | None
    owner: str | None = None  # who started it (engine.service.access: only they or the operator may stop it)

    @property
    def fraction(self) -> float:
        """Progress in [0, 1]: by optimiser steps when the selection trains, else by items."""
        if self.state == "finished":
            return 1.0
        if self.steps_total > 0:
            return min(1.0, self.steps_done / self.steps_total)
        return self.items_done / max(1, len(self.items))


@dataclass(frozen=True)
class StoredSummary:
    """One line of the list of stored reproductions."""

    id: str
    created: str
    quick: bool
    items: tuple[str, ...]
    n_verdicts: int
    n_failed: int


@dataclass(frozen=True)
class StoredFigure:
    item: str
    caption: str
    figure: dict[str, Any]  # plotly JSON (data, layout)


@dataclass(frozen=True)
class StoredReproduction:
    id: str
    doc: dict[str, Any]  # verdicts.json
    configs: dict[str, Any]  # item -> exact configs
    figures: list[StoredFigure]


class _Job:
    def __init__(self, rid: str, names: list[str], quick: bool, owner: str | None = None):
        self.id, self.names, self.quick, self.owner = rid, names, quick, owner
        self.state = "running"
        self.error: str | None = None
        self.current: str | None = None
        self.items_done = self.steps_done = 0
        self.steps_total = total_work(names, quick)
        self.started = time.monotonic()
        self.ended: float | None = None
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None

    def status(self) -> ReproStatus:
        end = self.ended if self.ended is not None else time.monotonic()
        return ReproStatus(
            self.id,
            self.state,
            tuple(self.names),
            self.quick,
            self.items_done,
            self.current,
            self.steps_done,
            self.steps_total,
            round(end - self.started, 3),
            self.error,
            self.owner,
        )


_ACTIVE: list[_Job] = []  # the process's running reproduction (0 or 1 job), guarded by _ACTIVE_LOCK
_ACTIVE_LOCK = threading.RLock()


class ReproduceManager:
    def __init__(self, data_dir: str | Path | None = None):
        self.root = Path(data_dir if data_dir is not None else default_data_dir()) / SUBDIR
        self._jobs: dict[str, _Job] = {}
        self._closed = False
        _ALL.append(self)

    # ----------------------------------------------------------------- run
    def start(self, items: list[str] | None = None, quick: bool = False, owner: str | None = None) -> str:
        """Start a reproduction of ``items`` (None/empty: all) for ``owner`` and return its id.
        If one is already running, start nothing and return the running one's id.  Unknown items
        raise ValueError; RuntimeError when shut down or when another data directory's runs."""
        names = check_items(items)
        with _ACTIVE_LOCK:
            if self._closed:
                raise RuntimeError("the reproduce manager is shut down")
            if _ACTIVE:
                if _ACTIVE[0].id in self._jobs:
                    return _ACTIVE[0].id
                raise RuntimeError("a reproduction for another data directory is running; try again later")
            job = _Job(new_id(), names, quick, owner)
            self._jobs[job.id] = job
            _ACTIVE.append(job)
            job.thread = threading.Thread(target=self._work, args=(job,), name=f"reproduce-{job.id}", daemon=True)
            job.thread.start()
            return job.id

    def _work(self, job: _Job) -> None:
        tmp = self.root / f".tmp-{job.id}"
        state, error = "failed", None
        try:
            results = self._run_items(job)
            self._write(results, tmp, job.quick)
            if job.stop_event.is_set():
                raise _StopRequestedError
            tmp.rename(self.root / job.id)
            state = "finished"
        except _StopRequestedError:
            state = "stopped"
        except Exception as e:
            log.exception("reproduction %s failed", job.id)
            error = f"{job.current or 'writing the report'}: {type(e).__name__}: {e}"
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # before the state changes: nothing half-written is left
            self._end(job, state, error)

    def _run_items(self, job: _Job) -> list[ItemResult]:
        def progress(n: int) -> None:
            with _ACTIVE_LOCK:
                job.steps_done += n
            if job.stop_event.is_set():
                raise _StopRequestedError

        results = []
        for name in job.names:
            if job.stop_event.is_set():
                raise _StopRequestedError
            job.current = name
            results.append(run_item(name, job.quick, progress=progress))
            with _ACTIVE_LOCK:
                job.items_done += 1
        job.current = None
        return results

    @staticmethod
    def _write(results: list[ItemResult], out: Path, quick: bool) -> None:
        """The report (write_report), configs.json and every figure as plotly JSON."""
        shutil.rmtree(out, ignore_errors=True)
        write_report(results, out, quick)
        (out / "configs.json").write_text(
            json.dumps({r.name: r.configs for r in results}, indent=2, ensure_ascii=False), encoding="utf-8"
        )
        figdir = out / "figures"
        figdir.mkdir()
        index = []
        for r in results:
            for k, (caption, fig) in enumerate(r.figures):
                (figdir / f"{r.name}_{k}.json").write_text(fig.to_json(), encoding="utf-8")
                index.append({"item": r.name, "k": k, "caption": caption})
        (figdir / "index.json").write_text(json.dumps(index, indent=1, ensure_ascii=False), encoding="utf-8")

    def _end(self, job: _Job, state: str, error: str | None = None) -> None:
        with _ACTIVE_LOCK:
            job.state, job.error, job.ended = state, error, time.monotonic()
            if job in _ACTIVE:
                _ACTIVE.remove(job)

    # ----------------------------------------------------------------- status and controls
    def status(self, rid: str) -> ReproStatus | None:
        """The status of a reproduction started by this process (None if unknown)."""
        with _ACTIVE_LOCK:
            job = self._jobs.get(rid)
            return job.status() if job is not None else None

    def running(self) -> ReproStatus | None:
        """The running reproduction of this manager, if any."""
        with _ACTIVE_LOCK:
            job = next((j for j in self._jobs.values() if j.state == "running"), None)
            return job.status() if job is not None else None

    def stop(self, rid: str | None = None) -> None:
        """Ask the running reproduction (or ``rid``) to stop; it ends as ``stopped``, unlisted."""
        with _ACTIVE_LOCK:
            for job in self._jobs.values():
                if job.state == "running" and rid in (None, job.id):
                    job.stop_event.set()

    def wait(self, rid: str, timeout: float | None = None) -> str:
        """Block until the reproduction ends (or the timeout passes); returns its state."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            s = self.status(rid)
            if s is None:
                raise KeyError(f"no reproduction {rid!r} in this process")
            if s.state != "running" or (deadline is not None and time.monotonic() > deadline):
                return s.state
            time.sleep(0.02)

    def shutdown(self, timeout: float = 30.0) -> None:
        """Refuse new starts, stop the running reproduction and join its thread."""
        with _ACTIVE_LOCK:
            self._closed = True
            jobs = list(self._jobs.values())
        self.stop()
        for job in jobs:
            if job.thread is not None:
                job.thread.join(timeout)

    @property
    def closed(self) -> bool:
        return self._closed

    # ----------------------------------------------------------------- stored reproductions
    def path(self, rid: str) -> Path:
        """The directory of a stored reproduction (ValueError unless ``rid`` is an id)."""
        return self.root / check_id(rid)

    def file(self, rid: str, name: str) -> Path:
        """``report.html`` or ``verdicts.json`` of a stored reproduction."""
        if name not in FILES:
            raise ValueError(f"{name!r} is not one of {', '.join(FILES)}")
        return self.path(rid) / name

    def exists(self, rid: str) -> bool:
        return (self.path(rid) / "verdicts.json").is_file()

    def stored(self) -> list[StoredSummary]:
        """Every stored reproduction, newest first (unreadable ones are skipped)."""
        if not self.root.is_dir():
            return []
        out = []
        for p in sorted(
            (p for p in self.root.iterdir() if ID_RE.fullmatch(p.name)), key=lambda p: p.name, reverse=True
        ):
            try:
                doc = json.loads((p / "verdicts.json").read_text(encoding="utf-8"))
                out.append(
                    StoredSummary(
                        p.name,
                        str(doc["created"]),
                        bool(doc["quick"]),
                        tuple(i["name"] for i in doc["items"]),
                        int(doc["n_verdicts"]),
                        int(doc["n_failed"]),
                    )
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return out

    def load(self, rid: str) -> StoredReproduction:
        """A stored reproduction: verdicts doc, configs and figures (KeyError if not stored)."""
        path = self.path(rid)
        if not (path / "verdicts.json").is_file():
            raise KeyError(f"no stored reproduction {rid!r}")
        doc = json.loads((path / "verdicts.json").read_text(encoding="utf-8"))
        configs = json.loads((path / "configs.json").read_text(encoding="utf-8"))
        figures = []
        for e in json.loads((path / "figures" / "index.json").read_text(encoding="utf-8")):
            item, k = str(e["item"]), int(e["k"])
            if item not in ITEMS:  # the file name is built only from a known item and an int
                continue
            fig = json.loads((path / "figures" / f"{item}_{k}.json").read_text(encoding="utf-8"))
            figures.append(StoredFigure(item, str(e["caption"]), fig))
        return StoredReproduction(rid, doc, configs, figures)


_ALL: list[ReproduceManager] = []
_MANAGERS: dict[str, ReproduceManager] = {}
_MANAGERS_LOCK = threading.Lock()


def get_repro_manager(data_dir: str | Path | None = None) -> ReproduceManager:
    """The process-wide manager for a data directory (created once, again after a shutdown)."""
    key = str(Path(data_dir if data_dir is not None else default_data_dir()).resolve())
    with _MANAGERS_LOCK:
        if key not in _MANAGERS or _MANAGERS[key].closed:
            _MANAGERS[key] = ReproduceManager(key)
        return _MANAGERS[key]


@atexit.register
def _shutdown_all() -> None:
    for m in list(_ALL):
        m.shutdown()
