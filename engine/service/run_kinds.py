"""The kinds of run, each registered once: what the service needs to create, cost and train a run of it.

A kind is found by its config's class (a new run) or by the store's ``kind`` column (a stored run).
Its worker side, which imports torch, is named as ``"module:factory"`` and imported only where the
run trains (:func:`open_training`), so the web process can create and queue runs without torch.

A factory ``factory(cfg, store)`` returns a :class:`Training`: the trainer and what the kind writes
besides what every run writes (:class:`engine.service.runner.RunJob` does the rest: controls,
statuses, checkpoints, resume).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.core.config import RunConfig
from engine.core.text.config import TextRunConfig
from engine.service.corpus_access import check_dashboard_data
from engine.service.limits import estimated_seconds
from engine.service.runs import create_run
from engine.service.store import RunStore
from engine.service.text_runs import TEXT, create_text_run, text_seconds


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


@dataclass(frozen=True)
class RunKind:
    """One kind of run: its store name, its config class, how a run of it is created in the store
    (checked first), its slot seconds for the queue, its worker side (``"module:factory"``), its export
    writer (``"module:function"``, imported when used), what the dashboard admits of a visitor's
    config (``admit``: the config to train, or ConfigError) and, for runs stored before the kind kept
    a derived static, how it is derived once when it is first read (``backfill``: ``"module:function"``
    taking the store, the run's row and its statics, returning them completed)."""

    name: str
    config: type[Any]
    create: Callable[[RunStore, Any, str | None, str | None, str], str]
    seconds: Callable[[str | Path, Any], float]
    training: str
    export: str  # "module:function" writing the run's export files (store, run_id, out, config_text, fmt)
    admit: Callable[[Any], Any] = as_is
    backfill: str | None = None

    @property
    def training_module(self) -> str:
        """The module of the worker side: a worker imports it first (it may register the kind there)."""
        return self.training.split(":")[0]


KINDS: dict[str, RunKind] = {}


def register(kind: RunKind) -> RunKind:
    """Add a kind (a name and a config class used by no other kind)."""
    if kind.name in KINDS or any(k.config is kind.config for k in KINDS.values()):
        raise ValueError(f"run kind {kind.name!r} or its config class is registered already")
    KINDS[kind.name] = kind
    return kind


def kind_named(name: str) -> RunKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown run kind {name!r}; allowed: {', '.join(KINDS)}") from None


def kind_of(cfg: Any) -> RunKind:
    """The kind whose config class ``cfg`` is."""
    for kind in KINDS.values():
        if type(cfg) is kind.config:
            return kind
    raise ValueError(f"no run kind takes a {type(cfg).__name__}; registered: {', '.join(KINDS)}")


def stored_config(info: dict[str, Any]) -> Any:
    """A stored run's config, read with its kind's config class."""
    return kind_named(info["kind"]).config.from_json(info["config_json"])


def run_seconds(data_dir: str | Path, cfg: Any) -> float:
    """Slot seconds of a whole run of any kind, for the queue."""
    return kind_of(cfg).seconds(data_dir, cfg)


def stored_cost(data_dir: str | Path, info: dict[str, Any]) -> tuple[int, float]:
    """(steps, estimated seconds) of a stored run of any kind."""
    cfg = stored_config(info)
    return cfg.optim.steps, run_seconds(data_dir, cfg)


def resolve(ref: str) -> Any:
    """The object a ``"module:name"`` reference names (its module imported now)."""
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def completed_statics(store: RunStore, run_id: str) -> dict[str, Any]:
    """A stored run's statics, completed by its kind's ``backfill`` where it has one."""
    statics = store.statics(run_id)
    info = store.get_run(run_id)
    backfill = KINDS[info["kind"]].backfill if info is not None and info["kind"] in KINDS else None
    return resolve(backfill)(store, info, statics) if backfill else statics


def open_training(cfg: Any, store: RunStore) -> Training:
    """The worker side of ``cfg``'s kind, built for ``cfg`` (imports the kind's trainer: torch)."""
    training: Training = resolve(kind_of(cfg).training)(cfg, store)
    return training


def _yz_seconds(_data_dir: str | Path, cfg: RunConfig) -> float:
    return estimated_seconds(cfg)


register(
    RunKind(
        "synthetic",
        RunConfig,
        create_run,
        _yz_seconds,
        "engine.service.yz_training:YZTraining",
        "engine.service.export:export_synthetic_run",
        backfill="engine.service.yz_theory:backfill_overlay",
    )
)


def _offered_corpus(cfg: TextRunConfig) -> TextRunConfig:
    """A real-text run from the dashboard reads only the corpora it offers (:func:`check_dashboard_data`)."""
    return cfg.model_copy(update={"data": check_dashboard_data(cfg.data)})


register(
    RunKind(
        TEXT,
        TextRunConfig,
        create_text_run,
        text_seconds,
        "engine.service.text_training:TextTraining",
        "engine.service.text_export:export_text_run",
        _offered_corpus,
    )
)
