"""The run kinds' service sides, registered once each (the packages :mod:`scansnap.registry` lists; the
protocol: :class:`scansnap.service.kinds.RunKind`), and what every kind's run goes through.

A kind is found by its config's class (a new run) or by the store's ``kind`` column (a stored run);
nothing outside this module and the kinds' packages branches on the kind.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

from scansnap.paper.environment import environment
from scansnap.paper.items.catalog import ITEMS
from scansnap.registry import kind_packages, kind_part
from scansnap.service.budget import Estimate
from scansnap.service.kinds import PENDING_DEVICE, RunKind, Training
from scansnap.service.store import RunStore

KINDS: dict[str, RunKind] = {}


def register(kind: RunKind) -> RunKind:
    """Add a kind (a name and a config class used by no other kind)."""
    if kind.name in KINDS or any(k.config is kind.config for k in KINDS.values()):
        raise ValueError(f"run kind {kind.name!r} or its config class is registered already")
    KINDS[kind.name] = kind
    return kind


def register_packages() -> None:
    """Register the ``service.KIND`` of every package :func:`scansnap.registry.kind_packages` lists now
    that is not registered yet (at import, and again where a kind is not found)."""
    for package in kind_packages():
        kind = kind_part(package, "service", "KIND")
        if not isinstance(kind, RunKind):
            raise ValueError(f"kind package {package!r} has no service.KIND (a RunKind)")
        if kind.name not in KINDS:
            register(kind)


def adopt(module: str) -> None:
    """Import a kind's worker module and register the ``KIND`` it holds, if any, in a process started
    before the kind was listed (a pool's worker; the built-in kinds' modules hold none)."""
    kind = getattr(importlib.import_module(module), "KIND", None)
    if isinstance(kind, RunKind) and kind.name not in KINDS:
        register(kind)


def kind_named(name: str) -> RunKind:
    if name not in KINDS:
        register_packages()
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown run kind {name!r}; allowed: {', '.join(KINDS)}") from None


def _taking(cfg: Any) -> RunKind | None:
    return next((kind for kind in KINDS.values() if type(cfg) is kind.config), None)


def kind_of(cfg: Any) -> RunKind:
    """The kind whose config class ``cfg`` is (one the registry lists now, or the ``KIND`` of its module)."""
    kind = _taking(cfg)
    if kind is None:
        register_packages()
        kind = _taking(cfg)
    if kind is None and type(cfg).__module__ in sys.modules:
        adopt(type(cfg).__module__)
        kind = _taking(cfg)
    if kind is None:
        raise ValueError(f"no run kind takes a {type(cfg).__name__}; registered: {', '.join(KINDS)}")
    return kind


def _sections(config: type[Any]) -> set[str]:
    """The top-level sections a config class reads (a pydantic model's fields; none for another class)."""
    return set(getattr(config, "model_fields", {}))


def kind_of_json(text: str) -> RunKind:
    """The kind a config file is for: the one whose config class names the most of the file's top-level
    sections (ties, and text that is no JSON object, go to the first kind listed, whose reader then says
    what is wrong)."""
    register_packages()
    try:
        sections = set(json.loads(text))
    except (ValueError, TypeError, RecursionError):
        sections = set()
    kinds = list(KINDS.values())
    return max(kinds, key=lambda kind: (len(sections & _sections(kind.config)), -kinds.index(kind)))


def config_from_json(text: str) -> Any:
    """A config file's text as its kind's config (:func:`kind_of_json`); ConfigError says what is wrong."""
    return kind_of_json(text).config.from_json(text)


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


def check_run(data_dir: str | Path, cfg: Any) -> Estimate | None:
    """The run's memory and work estimate (its kind's ``check``); ConfigError when over the limits."""
    return kind_of(cfg).check(data_dir, cfg)


def run_disk_bytes(data_dir: str | Path, cfg: Any) -> float:
    """The bytes the run will store (its kind's estimate; 0 for a kind that estimates none)."""
    est = check_run(data_dir, cfg)
    return est.disk_bytes if est is not None else 0.0


def create_run(
    store: RunStore, cfg: Any, name: str | None = None, owner: str | None = None, status: str = "queued"
) -> str:
    """Check the run against the limits (before anything is allocated), then write its row and what
    its kind stores from the config alone in one transaction; returns the run id.  The device is
    recorded by whoever trains it."""
    kind = kind_of(cfg)
    kind.check(store.data_dir, cfg)
    versions = environment(PENDING_DEVICE)["versions"]
    name = name or cfg.name or kind.default_name
    statics = kind.statics(cfg)
    return store.create_run(
        name, cfg.to_json(), PENDING_DEVICE, versions, owner=owner, statics=statics, status=status, kind=kind.name
    )


def resolve(ref: str) -> Any:
    """The object a ``"module:name"`` reference names (its module imported now)."""
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def kind_of_item(item: str) -> RunKind:
    """The kind whose claims layer lists reproduce item ``item`` (its module lies in the kind's package)."""
    module = ITEMS[item].module
    package = next(p for p in kind_packages() if module.startswith(p + "."))
    return kind_named(package.rsplit(".", 1)[-1])


def item_loader(item: str) -> Any | None:
    """How reproduce item ``item`` reads its data: its kind's ``item_data`` (None for a kind with none)."""
    ref = kind_of_item(item).item_data
    return resolve(ref) if ref else None


def run_files(info: dict[str, Any]) -> list[Path]:
    """The files under the data folder that stored run ``info`` reads (its kind's ``run_files``; relative)."""
    ref = kind_named(info["kind"]).run_files
    return [Path(p) for p in resolve(ref)(json.loads(info["config_json"]))] if ref else []


def completed_statics(store: RunStore, run_id: str) -> dict[str, Any]:
    """A stored run's statics, completed by its kind's ``backfill`` where it has one."""
    statics = store.statics(run_id)
    info = store.get_run(run_id)
    backfill = KINDS[info["kind"]].backfill if info is not None and info["kind"] in KINDS else None
    return resolve(backfill)(store, info, statics) if backfill else statics


def stored_verdicts(store: RunStore, run_id: str) -> list[dict[str, Any]]:
    """What is judged of a stored run, JSON-ready (its kind's ``verdicts``; none for a kind that judges nothing)."""
    info = store.get_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    kind = kind_named(info["kind"])
    verdicts: list[dict[str, Any]] = resolve(kind.verdicts)(store, run_id) if kind.verdicts else []
    return verdicts


def open_training(cfg: Any, store: RunStore) -> Training:
    """The worker side of ``cfg``'s kind, built for ``cfg`` (imports the kind's trainer: torch)."""
    training: Training = resolve(kind_of(cfg).training)(cfg, store)
    return training


register_packages()
