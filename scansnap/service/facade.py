"""The one facade the dashboard calls: runs, their controls, broadcast, reproductions.

Every method that changes something takes the :class:`Actor` who asks, checks that they may
(:func:`scansnap.service.access.can_manage`: the run's owner or the operator), checks the budget
before anything is allocated, and raises :class:`ServiceError` with one message meant for the
user (what is wrong, and what is allowed) for anything it refuses or cannot do.  Reading is open
to everyone.  No Streamlit here: the pages show a ServiceError's message in one error boundary.
"""

from __future__ import annotations

import functools
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd
from cachetools import LRUCache, TTLCache

from scansnap.core.config import ConfigError
from scansnap.service import grid
from scansnap.service.access import (
    OPERATOR_ENV,
    OPERATOR_GATE,
    XSRF_COOKIE,
    browser_owner,
    can_manage,
    operator_configured,
    owner_salt,
)
from scansnap.service.address import PUBLIC_URL_ENV, is_loopback, lan_address, public_base, with_host
from scansnap.service.budget import Estimate
from scansnap.service.export import export_size, size_words, zip_export
from scansnap.service.follow import code_problem, follow_code, followed
from scansnap.service.health import store_health
from scansnap.service.job_state import Schedule
from scansnap.service.jobs import TERMINAL, JobManager, JobStatus, get_manager
from scansnap.service.limits import REFRESH_S, SLOWEST_REFRESH_S, live_refresh_s, max_export_bytes
from scansnap.service.pacing import STORY, STORY_S, Speed
from scansnap.service.reproductions import (
    DamagedError,
    Reproductions,
    StoredReproduction,
    StoredSummary,
    check_id,
    doc_tally,
)
from scansnap.service.run_kinds import (
    check_run,
    completed_statics,
    kind_named,
    kind_of,
    resolve,
    run_seconds,
    stored_config,
)
from scansnap.service.scheduling import duration
from scansnap.service.store import ANY_OWNER, RunStore, StoreError
from scansnap.service.uploads import (
    CONFIG_UPLOAD,
    MAX_CONFIG_BYTES,
    UploadKind,
    check_upload_name,
    parse_config_upload,
)

# This module is the pages' only door into scansnap.service (import-linter checks it): besides the service
# they may name these job states, access rules, addresses, upload limits.
__all__ = [
    "ANY_OWNER",
    "CONFIG_UPLOAD",
    "FULL_REPRODUCTION_IS_THE_OPERATORS",
    "MAX_CONFIG_BYTES",
    "MAX_GRID_CELLS",
    "OPERATOR_ENV",
    "OPERATOR_GATE",
    "PUBLIC_URL_ENV",
    "RECOVERABLE",
    "REFRESH_S",
    "SLOWEST_REFRESH_S",
    "STORY",
    "STORY_S",
    "TERMINAL",
    "XSRF_COOKIE",
    "Actor",
    "ExportPlan",
    "JobStatus",
    "LabService",
    "ServiceError",
    "StoredReproduction",
    "StoredRuns",
    "StoredSummary",
    "UploadKind",
    "browser_owner",
    "check_id",
    "check_upload_name",
    "code_problem",
    "doc_tally",
    "duration",
    "get_service",
    "is_loopback",
    "lan_address",
    "live_refresh_s",
    "operator_configured",
    "public_base",
    "with_host",
]

RECOVERABLE = ("interrupted", "stopped")  # runs offered "Resume from checkpoint"
MAX_GRID_CELLS = 48  # runs one grid of the Sweep page may queue (python -m scansnap sweep for more)


class ServiceError(Exception):
    """A request the service refuses or cannot carry out; the message is for the user."""


@dataclass(frozen=True)
class Actor:
    """Who asks: a browser's owner id (salted hash of its cookie) and whether it is the operator."""

    owner: str
    operator: bool = False


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the engine's own errors into a :class:`ServiceError` with the same message."""
    try:
        yield
    except ServiceError:
        raise
    except (ConfigError, StoreError, RuntimeError, KeyError, ValueError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        raise ServiceError(str(msg)) from e


READ_ONLY = (
    "The dashboard is read-only until the operator restores the run store (GET /healthz says what is wrong): "
    "runs can still be opened and exported where their data can be read, but none can be started, changed "
    "or deleted."
)
F = TypeVar("F", bound=Callable[..., Any])


def damage_message(data_dir: str | Path, stale_ok: bool = False) -> str | None:
    """The one message of a damaged run store (what /healthz says, and that the dashboard is read-only), or
    None while /healthz finds it sound (:func:`scansnap.service.health.store_health`; ``stale_ok``: its last
    verdict, renewed in the background)."""
    ok, detail = store_health(data_dir, stale_ok=stale_ok)
    return None if ok else f"{detail}. {READ_ONLY}"


def writes(method: F) -> F:
    """A method that writes to the run store (or starts what will): refused with :func:`damage_message`'s one
    message while the store is damaged, before anything is done."""

    @functools.wraps(method)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        if msg := damage_message(self.data_dir, stale_ok=True):  # no 5-s check on a click; renewed aside
            raise ServiceError(msg)
        return method(self, *args, **kwargs)

    return cast(F, checked)


def reads(method: F) -> F:
    """A method that reads the run store: the store's error becomes a ServiceError with its message, and on a
    damaged store :func:`damage_message`'s one message (other errors pass as they are)."""

    @functools.wraps(method)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except StoreError as e:
            raise ServiceError(damage_message(self.data_dir) or str(e)) from e
        except ServiceError as e:
            if isinstance(e.__cause__, StoreError) and (msg := damage_message(self.data_dir)):
                raise ServiceError(msg) from e.__cause__
            raise

    return cast(F, checked)


@dataclass(frozen=True)
class ExportPlan:
    """A run's zipped export before it is built: ``bytes`` (an estimate, at least its size), ``size`` (the
    same in words), ``refused`` (why the dashboard does not build it, or None)."""

    bytes: int
    size: str
    refused: str | None


FULL_REPRODUCTION_IS_THE_OPERATORS = (
    "the full reproduction takes hours of the server's cores, so only the operator starts it (with the operator "
    "key on the Runs page, or `python -m scansnap reproduce` on the server); the quick mode is open to everyone"
)


class StoredRuns:
    """What the pages and their exports read of the run store (the store's own errors); read-only but for
    the statics an old run's kind derives once (:func:`~scansnap.service.run_kinds.completed_statics`)."""

    def __init__(self, store: RunStore):
        self._store = store
        self.data_dir = store.data_dir

    @reads
    def get_run(self, run_id: str) -> dict[str, Any] | None:
        return self._store.get_run(run_id)

    @reads
    def steps(self, run_id: str) -> list[int]:
        return self._store.steps(run_id)

    @reads
    def snapshot(self, run_id: str, step: int) -> dict[str, np.ndarray]:
        return self._store.snapshot(run_id, step)

    @reads
    def statics(self, run_id: str) -> dict[str, np.ndarray]:
        """The run's statics (a run stored before its kind kept a derived static gets it now, once; not while
        the store is damaged: nothing is written into it then)."""
        if damage_message(self.data_dir, stale_ok=True):
            return self._store.statics(run_id)
        return completed_statics(self._store, run_id)

    @reads
    def scalars(self, run_id: str, metrics: list[str] | None = None, since_step: int | None = None) -> pd.DataFrame:
        return self._store.scalars(run_id, metrics=metrics, since_step=since_step)

    @reads
    def weight_steps(self, run_id: str) -> list[int]:
        """The steps of a real-text run whose weights are kept (a typed sentence is read at them)."""
        return self._store.weight_steps(run_id)

    def kept_weights(self, run_id: str, step: int) -> dict[str, np.ndarray]:
        """A step's kept weights, read once per process while they are among the most recent ones."""
        key = (run_id, step)
        with _WEIGHTS_LOCK:
            got = _WEIGHTS.get(key)
        if got is None:
            got = self._store.weights(run_id, step)
            with _WEIGHTS_LOCK:
                _WEIGHTS[key] = got
        return got


_WEIGHTS: LRUCache[tuple[str, int], dict[str, np.ndarray]] = LRUCache(
    128 * 2**20, getsizeof=lambda a: max(1, sum(x.nbytes for x in a.values()))
)  # a Fig. 7 run's weights: ~3 MB live, ~26 MB at the paper's vocabulary
_WEIGHTS_LOCK = threading.Lock()


class LabService:
    """Runs and reproductions of one data directory, for many sessions at once (thread-safe)."""

    def __init__(self, jobs: JobManager):
        self.jobs = jobs
        self.store: RunStore = jobs.store
        self.stored = StoredRuns(self.store)
        self.data_dir = self.store.data_dir
        self.max_export_bytes = max_export_bytes()  # SCANSNAP_MAX_EXPORT_MB: a bad value stops the service here
        self.reproductions = Reproductions(self.store.data_dir)
        self._follow_cache: TTLCache[tuple[str, str], dict[str, Any] | None] = TTLCache(maxsize=1024, ttl=1.0)
        self._follow_lock = threading.Lock()
        self._doors: dict[str, Any] = {}
        self._doors_lock = threading.Lock()

    # ----------------------------------------------------------------- reading
    def store_damage(self) -> str | None:
        """The one message of a damaged store, for a page's notice (the last verdict: a page never waits
        for a fresh check but the first), or None."""
        return damage_message(self.data_dir, stale_ok=True)

    @reads
    def run(self, run_id: str) -> dict[str, Any] | None:
        """The stored run (all columns), or None."""
        with user_errors():
            return self.store.get_run(run_id)

    @reads
    def runs(self, limit: int = 200) -> list[dict[str, Any]]:
        with user_errors():
            return self.store.list_runs(limit)

    @reads
    def find_runs(
        self, search: str = "", owner: str | None = ANY_OWNER, offset: int = 0, limit: int = 200
    ) -> list[dict[str, Any]]:
        """The runs newest first whose name or id contains ``search``, of ``owner`` (ANY_OWNER: everyone's,
        None: the command line's), ``limit`` of them after ``offset``."""
        with user_errors():
            return self.store.find_runs(search, owner, offset, limit)

    def count_runs(self, search: str = "", owner: str | None = ANY_OWNER) -> int:
        """How many runs :meth:`find_runs` finds, all pages together."""
        with user_errors():
            return self.store.count_runs(search, owner)

    def live_broadcasts(self, limit: int = 20, kind: str = "synthetic") -> list[dict[str, Any]]:
        """Published runs of ``kind`` that train now (each page lists its own kind), each with ``step``:
        the step its job is at now (the stored ``last_step`` is that of its last snapshot)."""
        with user_errors():
            live = self.store.list_published(statuses=("queued", "running", "paused"), limit=200)
        out = [r for r in live if r["kind"] == kind][:limit]
        for r in out:
            s = self.jobs.status(r["id"])
            r["step"] = s.step if s is not None else r["last_step"]
        return out

    @staticmethod
    def follow_code(actor: Actor) -> str:
        """The join code of ``actor``'s published runs (:mod:`scansnap.service.follow`)."""
        return follow_code(actor.owner)

    def followed_run(self, code: str, kind: str) -> dict[str, Any] | None:
        """The newest published run of ``kind`` of the owner whose join code is ``code`` (None when that
        owner published none yet); a hall of followers asks every few seconds: answers are kept 1 s."""
        key = (code.strip().upper(), kind)
        with self._follow_lock:
            if key in self._follow_cache:
                return self._follow_cache[key]
        with user_errors():
            run = followed(self.store.list_published(limit=200), *key)
        with self._follow_lock:
            self._follow_cache[key] = run
        return run

    def status(self, run_id: str) -> JobStatus | None:
        return self.jobs.status(run_id)

    def is_live(self, run_id: str) -> bool:
        return self.jobs.is_live(run_id)

    def wait_for(self, run_id: str, done: Callable[[JobStatus], bool], timeout: float) -> None:
        """Wait at most ``timeout`` s until the run's job is gone or ``done(status)`` (a control took effect)."""
        jobs = self.jobs
        with jobs.changed:
            jobs.changed.wait_for(lambda: (s := jobs.status(run_id)) is None or done(s), timeout)

    def owner_salt(self) -> bytes:
        """The salt of this data directory's owner ids (:func:`scansnap.service.access.owner_salt`)."""
        return owner_salt(str(self.store.data_dir.resolve()))

    @reads
    def export_plan(self, run_id: str, fmt: str) -> ExportPlan:
        """What the run's zip in ``fmt`` will be (its estimated bytes, from the store's counts: no array is
        read) and whether the dashboard builds it (refused over ``SCANSNAP_MAX_EXPORT_MB``)."""
        with user_errors():
            size = export_size(self.store, run_id, fmt)
        refused = None
        if size > self.max_export_bytes:
            refused = (
                f"run {run_id}'s {fmt} export would be about {size_words(size)}, over the dashboard's limit of "
                f"{size_words(self.max_export_bytes)} (SCANSNAP_MAX_EXPORT_MB): the operator exports it on the "
                f"server with `python -m scansnap export {run_id} --format {fmt} --out FOLDER`, which has no limit"
            )
        return ExportPlan(size, size_words(size), refused)

    @reads
    def export_zip(self, run_id: str, fmt: str) -> bytes:
        """The run's export files in one zip (:func:`scansnap.service.export.zip_export`, written to a
        temporary file and read back); ServiceError when :meth:`export_plan` refuses it."""
        refused = self.export_plan(run_id, fmt).refused
        if refused:
            raise ServiceError(refused)
        with user_errors(), tempfile.TemporaryDirectory(prefix="scansnap-export-") as tmp:
            return zip_export(self.store, run_id, fmt, Path(tmp) / "export.zip").read_bytes()

    def watch(self, run_id: str) -> None:
        """A page shows this run now: a run that no page shows for ``SCANSNAP_IDLE_PAUSE_S`` pauses itself."""
        self.jobs.watch(run_id)

    def schedule(self) -> Schedule:
        """Who holds the training slots, who runs light without one, who waits (the Runs page)."""
        return self.jobs.schedule()

    def may_manage(self, info: dict[str, Any], actor: Actor) -> bool:
        return can_manage(info["owner"], actor.owner, actor.operator)

    # ----------------------------------------------------------------- runs
    def config_from_upload(self, data: bytes, kind: str) -> Any:
        """A validated config of ``kind`` from the bytes of a JSON file, within this server's limits
        (its kind's ``check``); ConfigError saying what is wrong and what is allowed."""
        cfg = parse_config_upload(data, kind_named(kind).config)
        check_run(self.store.data_dir, cfg)
        return cfg

    def check(self, cfg: Any) -> Estimate | None:
        """Refuse a config of any kind that the dashboard may not train (what its kind admits, e.g. a
        real-text run's corpus; memory and work over this server's limits); else its estimate."""
        with user_errors():
            return check_run(self.store.data_dir, kind_of(cfg).admit(cfg))

    def stored_run_seconds(self, info: dict[str, Any]) -> float:
        """:meth:`expected_seconds` of a stored run's config (read with its kind's config class)."""
        with user_errors():
            cfg = stored_config(info)
        return self.expected_seconds(cfg)

    def expected_seconds(self, cfg: Any) -> float:
        """Seconds a whole run of ``cfg`` takes on one training slot, as the queue counts them (its
        kind's estimate; a config the dashboard may not train raises ServiceError, as :meth:`check`)."""
        with user_errors():
            return run_seconds(self.store.data_dir, kind_of(cfg).admit(cfg))

    @writes
    def submit(self, cfg: Any, actor: Actor, name: str | None = None, paused: bool = False) -> str:
        """Train ``cfg`` as ``actor``'s new run (queued if every slot is busy); returns its id.  The
        run's kind admits the config first (a real-text run reads only the corpora the dashboard offers)."""
        with user_errors():
            cfg = kind_of(cfg).admit(cfg)
            return self.jobs.submit(cfg, name=name, owner=actor.owner, paused=paused, limited=not actor.operator)

    # ----------------------------------------------------------------- grids
    def grid_configs(self, base: Any, axes: list[str], seeds: str) -> tuple[list[Any], list[str]]:
        """A grid's configs, one per cell (``axes``: ``KEY=V1,V2,...`` each; ``seeds``: ``1-3`` or
        ``1,5,9``), each admitted and checked, and each cell's name; ServiceError says what is wrong."""
        with user_errors():
            parsed = [grid.parse_axis(a) for a in axes]
            cells = grid.cells(parsed, grid.parse_seeds(seeds))
            if len(cells) > MAX_GRID_CELLS:
                raise ConfigError(
                    f"the grid has {len(cells)} cells: the dashboard trains at most {MAX_GRID_CELLS} "
                    "(more with `python -m scansnap sweep`)"
                )
            cfgs = [kind_of(base).admit(grid.cell_config(base, c)) for c in cells]
            return cfgs, [c.label() for c in cells]

    @writes
    def submit_grid(self, cfgs: list[Any], names: list[str], actor: Actor) -> list[str]:
        """Train every config of a grid (all or none; the grid counts as one of ``actor``'s runs)."""
        with user_errors():
            return self.jobs.submit_grid(cfgs, list(names), owner=actor.owner, limited=not actor.operator)

    @reads
    def grid_summary(self, run_ids: list[str], keys: list[str]) -> pd.DataFrame:
        """One row per stored run of a grid: the values of ``keys``, seed, run, status, final metrics."""
        rows = []
        for rid in run_ids:
            info = self.run(rid)
            if info is not None:
                rows.append(grid.stored_row(info, keys, self.store.scalars(rid)))
        return pd.DataFrame(rows)

    def door(self, kind: str) -> Any:
        """Kind ``kind``'s own methods (its ``RunKind.door``, built once with this service): e.g. the real-text
        kind's corpora and uploads.  ServiceError for a kind without one."""
        with self._doors_lock:
            if kind not in self._doors:
                ref = kind_named(kind).door
                if ref is None:
                    raise ServiceError(f"a {kind} run has no methods of its own on the service")
                self._doors[kind] = resolve(ref)(self)
            return self._doors[kind]

    @writes
    def rerun(self, run_id: str, actor: Actor) -> str:
        """Train a stored run's config again (seed included) as ``actor``'s own new run."""
        info = self._info(run_id)
        with user_errors():
            return self.submit(stored_config(info), actor, name=info["name"])

    @writes
    def resume_stored(self, run_id: str, actor: Actor) -> str:
        """Continue an interrupted or stopped run from its last checkpoint (owner or operator)."""
        info = self._managed(run_id, actor, "resume")
        if info["status"] not in RECOVERABLE or self.jobs.is_live(run_id):
            raise ServiceError(f"run {run_id} is {info['status']}: only an interrupted or stopped run can be resumed")
        with user_errors():
            return self.jobs.resume_stored(run_id, owner=actor.owner, limited=not actor.operator)

    @reads
    def checkpoint_step(self, run_id: str) -> int | None:
        """The step *Resume from checkpoint* continues the stored run from (None: it has no checkpoint,
        so it trains again from step 0)."""
        with user_errors():
            ckpt = self.store.checkpoint(run_id)
        return None if ckpt is None else ckpt[0]

    def pause(self, run_id: str, actor: Actor) -> None:
        self._live(run_id, actor, "pause")
        self.jobs.pause(run_id)

    @writes
    def resume(self, run_id: str, actor: Actor) -> None:
        self._live(run_id, actor, "resume")
        with user_errors():
            self.jobs.resume(run_id, limited=not actor.operator)

    @writes
    def step(self, run_id: str, n: int, actor: Actor) -> None:
        """Let a paused run take ``n`` more steps."""
        self._live(run_id, actor, "step")
        with user_errors():
            self.jobs.step(run_id, n, limited=not actor.operator)

    def stop(self, run_id: str, actor: Actor) -> None:
        self._live(run_id, actor, "stop")
        self.jobs.stop(run_id)

    def set_speed(self, run_id: str, speed: Speed, actor: Actor) -> None:
        """Throttle the run: steps/s, ``"story"`` (story time) or None (as fast as it goes)."""
        self._live(run_id, actor, "change the speed of")
        with user_errors():
            self.jobs.set_speed(run_id, speed, limited=not actor.operator)

    @writes
    def publish(self, run_id: str, on: bool, actor: Actor) -> None:
        self._managed(run_id, actor, "publish")
        with user_errors():
            self.store.set_published(run_id, on)

    @writes
    def rename(self, run_id: str, name: str, actor: Actor) -> None:
        self._managed(run_id, actor, "rename")
        with user_errors():
            self.store.rename(run_id, name)

    @writes
    def delete(self, run_id: str, actor: Actor) -> None:
        """Stop the run's worker first (if it trains), then delete the run and all its data."""
        self._managed(run_id, actor, "delete")
        if self.jobs.status(run_id) is not None:  # a job of this server: its worker ends first
            if self.jobs.is_live(run_id):
                self.jobs.stop(run_id)
            self.jobs.wait(run_id, timeout=30)
        with user_errors():
            self.store.delete(run_id)

    def _info(self, run_id: str) -> dict[str, Any]:
        info = self.run(run_id)
        if info is None:
            raise ServiceError(f"run {str(run_id)[:40]!r} is not in the run store")
        return info

    def _managed(self, run_id: str, actor: Actor, what: str) -> dict[str, Any]:
        info = self._info(run_id)
        if not self.may_manage(info, actor):
            raise ServiceError(f"only the browser that started run {run_id} (or the operator) may {what} it")
        return info

    def _live(self, run_id: str, actor: Actor, what: str) -> None:
        self._managed(run_id, actor, what)
        s = self.jobs.status(run_id)
        if s is None or s.status in TERMINAL:
            raise ServiceError(f"run {run_id} is not training: there is nothing to {what}")

    # ----------------------------------------------------------------- reproductions
    @writes
    def start_reproduction(self, items: list[str] | None, quick: bool, actor: Actor) -> str:
        """Start (or join, if one runs) the server's reproduction; returns the id of the one running.  A
        visitor may start the quick mode only, admitted in the queue like any other work; the full mode
        (hours) is the operator's."""
        if not quick and not actor.operator:
            raise ServiceError(FULL_REPRODUCTION_IS_THE_OPERATORS)
        with user_errors():
            return self.jobs.start_reproduction(items, quick, owner=actor.owner, limited=not actor.operator)

    def stop_reproduction(self, rid: str, actor: Actor) -> None:
        s = self.jobs.status(rid)
        if s is None or s.status in TERMINAL:
            return
        if not can_manage(s.owner, actor.owner, actor.operator):
            raise ServiceError("only the browser that started this reproduction (or the operator) may stop it")
        self.jobs.stop(rid)

    def running_reproduction(self) -> JobStatus | None:
        return self.jobs.running_reproduction()

    def stored_reproductions(self) -> list[StoredSummary]:
        return self.reproductions.stored()

    def reproduction(self, rid: str) -> StoredReproduction:
        with user_errors():
            check_id(rid)
            try:
                return self.reproductions.load(rid)
            except DamagedError as e:
                raise ServiceError(f"reproduction {rid} cannot be shown, its files are damaged: {e}") from e

    def reproduction_file(self, rid: str, name: str) -> Path:
        with user_errors():
            return self.reproductions.file(rid, name)


def get_service(data_dir: str | None = None) -> LabService:
    """The service of a data directory (its job manager is process-wide, see :func:`get_manager`)."""
    with user_errors():
        return LabService(get_manager(data_dir))
