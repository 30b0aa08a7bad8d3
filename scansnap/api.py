"""The lab from Python (a notebook, a script): ``import scansnap as ss`` (docs/api.md).

``ss.presets()`` names the presets; ``ss.train(preset_or_config, overrides)`` trains a run in this process and
stores it as ``scansnap run`` does; ``ss.open(run_id)`` reopens a stored run.  A :class:`Run` gives its tables
as pandas frames in the export schema (docs/explore.md), the dashboard's Plotly figures and its verdicts.
Runs are stored in ``data_dir`` (default: ``$SCANSNAP_DATA_DIR``, else ``./data``), where the dashboard and
the command line find them too.  Nothing here branches on a kind of run: each kind's parts come from its
registrations (:class:`scansnap.service.kinds.RunKind`, :class:`scansnap.ui.kind_views.KindView`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from scansnap.paper.presets import SHELVES, any_preset, load_presets
from scansnap.service.control import ProgressControl
from scansnap.service.facade import StoredRuns
from scansnap.service.run_kinds import kind_named, kind_of, resolve, stored_verdicts
from scansnap.service.store import RunStore
from scansnap.ui.kind_views import view_of

__all__ = ["Run", "config", "open", "presets", "train"]


def presets(kind: str | None = None) -> list[str]:
    """The presets' names, every kind's (``kind``: one kind's, e.g. ``"text"``), in the dashboard's order."""
    kinds = [kind] if kind is not None else list(SHELVES)
    for k in kinds:
        if k not in SHELVES:
            raise ValueError(f"unknown kind of run {k!r}; allowed: {', '.join(SHELVES)}")
    return [name for k in kinds for name in load_presets(k)]


def config(preset: str, overrides: dict[str, Any] | None = None) -> Any:
    """Preset ``preset``'s config (of whichever kind holds that name) with ``overrides``: dotted keys as
    ``scansnap run --set`` takes them, e.g. ``{"optim.steps": 2000, "optim.eta_y": 10}``."""
    return _overridden(any_preset(preset).config, overrides)


def _overridden(cfg: Any, overrides: dict[str, Any] | None) -> Any:
    return cfg.with_overrides(dict(overrides)) if overrides else cfg


def train(
    preset_or_config: Any,
    overrides: dict[str, Any] | None = None,
    *,
    name: str | None = None,
    data_dir: str | Path | None = None,
    progress: bool = True,
) -> Run:
    """Train a preset (its name) or a config (a config object, e.g. from :func:`config`) in this process, with
    ``overrides``, store it in ``data_dir`` and return it, finished; ``progress``: a progress bar (tqdm's,
    a widget in a notebook)."""
    from scansnap.service.runner import RunJob  # torch: imported when a run trains

    if isinstance(preset_or_config, str):
        cfg = config(preset_or_config, overrides)
    else:
        kind_of(preset_or_config)  # ValueError: no kind trains this object
        cfg = _overridden(preset_or_config, overrides)
    store = RunStore(data_dir)
    job = RunJob(cfg, store, name=name)
    with _bar(cfg.optim.steps, not progress) as bar:
        job.run(ProgressControl(bar))
    return Run(store, job.run_id)


def _bar(total: int, disable: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="step", disable=disable)


def open(run_id: str, data_dir: str | Path | None = None) -> Run:
    """The stored run ``run_id`` (its full id, as ``scansnap list`` shows it)."""
    store = RunStore(data_dir)
    if store.get_run(run_id) is None:
        raise KeyError(f"no run {run_id!r} in {store.data_dir}")
    return Run(store, run_id)


class Run:
    """A stored run: its row (:attr:`info`), config, tables, figures and verdicts, read from the store on
    each call (a run that still trains elsewhere shows what is stored so far)."""

    def __init__(self, store: RunStore, run_id: str):
        self.store, self.id = store, run_id

    def __repr__(self) -> str:
        info = self.info
        return f"<scansnap.Run {self.id} {info['kind']} {info['name']!r} {info['status']} at step {info['last_step']}>"

    @property
    def info(self) -> dict[str, Any]:
        """The run's row: id, name, kind, status, last_step, config_json, created, owner, …"""
        info = self.store.get_run(self.id)
        if info is None:
            raise KeyError(f"run {self.id!r} is no longer stored")
        return info

    @property
    def kind(self) -> str:
        return str(self.info["kind"])

    @property
    def status(self) -> str:
        return str(self.info["status"])

    @property
    def config(self) -> Any:
        """The run's config object (``config.to_json()`` gives its JSON)."""
        return kind_named(self.kind).config.from_json(self.info["config_json"])

    def table(self, name: str) -> pd.DataFrame:
        """One of the export's tables as a frame (:attr:`tables` names them)."""
        kind = kind_named(self.kind)
        if kind.tables is None or name not in kind.table_names:
            raise ValueError(
                f"a {self.kind} run has no table {name!r}; it has: {', '.join(kind.table_names) or 'none'}"
            )
        frame: pd.DataFrame = resolve(kind.tables)(self.store, self.id, name)
        return frame

    @property
    def tables(self) -> tuple[str, ...]:
        return kind_named(self.kind).table_names

    def scalars(self) -> pd.DataFrame:
        """The scalar metrics in the export's schema (a synthetic run: step, replica, n, metric, value)."""
        return self.table("scalars")

    def trajectory(self) -> pd.DataFrame:
        """The per-token trajectories in the export's schema (a synthetic run: step, replica, m, n, l, kind, P, z,
        c); ValueError for a kind that stores none."""
        return self.table("trajectory")

    @property
    def figures(self) -> tuple[str, ...]:
        """The names :meth:`figure` takes for this run's kind."""
        return view_of(self.info).figure_names

    def figure(self, name: str, **view: Any) -> go.Figure:
        """The dashboard's figure ``name`` of this run (:attr:`figures`), e.g. ``"c_n"``, ``"snap"``,
        ``"entropy"`` (synthetic: ``replica=``, ``n=``, ``q=``, ``step=``) or ``"attn_entropy"``,
        ``"attn_map"`` (real text: ``layer=``, ``step=``)."""
        kind_view = view_of(self.info)
        if kind_view.figure is None:
            raise ValueError(f"a {self.kind} run has no figures outside the dashboard")
        return go.Figure(resolve(kind_view.figure)(StoredRuns(self.store), self.id, name, **view))

    def verdicts(self) -> list[dict[str, Any]]:
        """What is judged of the run, JSON-ready: a synthetic run's claims of Theorems 2–4 per replica (as its
        export's verdicts.json), a real-text run's drop and rebound of each layer's entropy (JoMA)."""
        return stored_verdicts(self.store, self.id)
