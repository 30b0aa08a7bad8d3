"""The run-kind protocol, and one package per kind of run (``synthetic``, ``text``): its service side,
registered once in :mod:`scansnap.service.run_kinds`.

A kind is found by its config's class (a new run) or by the store's ``kind`` column (a stored run).
Its worker side, which imports torch, is named as ``"module:factory"`` and imported only where the
run trains, so the web process can create and queue runs without torch.  A factory
``factory(cfg, store)`` returns a :class:`Training`: the trainer and what the kind writes besides what
every run writes (:class:`scansnap.service.runner.RunJob` does the rest: controls, statuses, checkpoints,
resume).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from scansnap.core.config import get_dotted
from scansnap.service.budget import Estimate
from scansnap.service.store import RunStore

PENDING_DEVICE = "chosen when training starts"  # a run's device until a worker records the one it trains on


class Training(Protocol):
    """A kind's worker side: its trainer (``advance``, ``snapshot``, ``checkpoint``, ``restore``,
    ``schedule``, ``step_count``, ``device``) and what it stores of it."""

    trainer: Any

    def started(self, store: RunStore, run_id: str) -> None:
        """Store what the run's row needs once its trainer exists (every start, a resume's included)."""

    def stored(self, snap: Any) -> tuple[dict[str, Any], Any]:
        """A snapshot as the store keeps it: (arrays, scalar rows or blocks)."""

    def after_first_snapshot(self, store: RunStore, run_id: str) -> Any:
        """Begin what is computed beside the training once its first snapshot is stored (the
        mean-field twin: an object with ``finish(cancel)``), or None."""


def as_is(cfg: Any) -> Any:
    return cfg


def no_limits(_data_dir: str | Path, _cfg: Any) -> Estimate | None:
    return None


def no_statics(_cfg: Any) -> dict[str, np.ndarray]:
    return {}


@dataclass(frozen=True)
class RunKind:
    """One kind of run.

        ``name``: its store name; ``config``: its config class (``to_json``/``from_json``, ``optim.steps``);
        ``seconds(data_dir, cfg)``: its slot seconds for the queue; ``training``: its worker side
        (``"module:factory"``); ``export``: its export writer (``"module:function"`` taking the store, the
        run id, the folder, the config text and the format); ``check(data_dir, cfg)``: its memory and work
        estimate, or ConfigError when a run is over the server's limits (checked before a run is created);
        ``statics(cfg)``: what its row stores from the config alone; ``default_name``: a run's name when it
        is given none; ``admit``: what the dashboard admits of a visitor's config (the config to train, or
        ConfigError); ``backfill``: for runs stored before the kind kept a derived static, how it is derived
        once when it is first read (``"module:function"`` taking the store, the run's row and its statics,
        returning them completed); ``seed_key``: the dotted key of a run's seed (a list of seeds where
        ``seed_list``: a grid's seeds, :mod:`scansnap.service.grid`); ``export_size``: an estimate of the bytes of
        its zipped export tables, at least their size (``"module:function"`` taking the store, the run's row and
        the format; reading the store's counts only, :meth:`~scansnap.service.store.RunStore.export_counts`);
        ``tables``: its export's tables as data frames (``"module:function"`` taking the store, the run id and a
        table name; ``table_names``, the first of them the scalars, as the API's ``run.scalars()``); ``verdicts``:
        what is judged of a stored run, JSON-ready (``"module:function"`` taking the store and the run id);
        ``item_data``: how its reproduce items read their data (``"module:function"``, e.g. a data config → its
        encoded corpus: the claims layer reads no files); ``run_files``: the files under the data folder a run
        reads (``"module:function"`` taking the run's config dict, returning paths relative to the folder: a
        cluster node is sent them); ``door``: the kind's own methods on the facade (``"module:Class"``, built
        with the :class:`~scansnap.service.facade.LabService`: ``LabService.door(kind)``); ``summary``: what the
    command line prints of a run it trained, after its first line (``"module:function"`` taking the job, the wall
    seconds and the first and last snapshots, or None, returning lines); ``commands``: the kind's own
    subcommands of ``scansnap`` (``"module:function"`` taking argparse's subparsers; each sets ``func``, which
    returns the exit code)."""

    name: str
    config: type[Any]
    seconds: Callable[[str | Path, Any], float]
    training: str
    export: str
    check: Callable[[str | Path, Any], Estimate | None] = no_limits
    statics: Callable[[Any], dict[str, np.ndarray]] = no_statics
    default_name: str = "run"
    admit: Callable[[Any], Any] = as_is
    backfill: str | None = None
    seed_key: str = "optim.seed"
    seed_list: bool = False
    export_size: str | None = None
    tables: str | None = None
    table_names: tuple[str, ...] = ()
    verdicts: str | None = None
    item_data: str | None = None
    run_files: str | None = None
    door: str | None = None
    summary: str | None = None
    commands: str | None = None

    def with_seed(self, cfg: Any, seed: int) -> Any:
        """``cfg`` trained at ``seed``."""
        return cfg.with_overrides({self.seed_key: [seed] if self.seed_list else seed})

    def seed_of(self, config: dict[str, Any]) -> int:
        """The (first) seed of a stored config (its JSON as a dict)."""
        seed = get_dotted(config, self.seed_key)
        return int(seed[0] if self.seed_list else seed)

    @property
    def training_module(self) -> str:
        """The module of the worker side: a worker imports it first (it may register the kind there)."""
        return self.training.split(":")[0]
