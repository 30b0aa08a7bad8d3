"""A stored run as chart data: its history read incrementally from the run store, thinned and rounded
for the charts, and per-token colour facts (pure numpy/pandas; the store is any object with ``steps``,
``snapshot`` and ``scalars`` methods, :class:`scansnap.service.store.RunStore`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd


def decimate(n: int, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` of ``n`` samples: half log-spaced (the fast early
    dynamics), half evenly spaced; first and last always kept."""
    if n <= max_points:
        return np.arange(n)
    half = max(2, max_points // 2)
    log = np.unique(np.round(np.logspace(0, np.log10(n), half)).astype(np.int64) - 1)
    lin = np.round(np.linspace(0, n - 1, max_points - len(log))).astype(np.int64)
    return np.union1d(np.union1d(log, lin), [0, n - 1])[:max_points]


def rnd(a: Any, digits: int = 4) -> np.ndarray:
    """Round to ``digits`` significant digits (smaller JSON payloads, same picture)."""
    x = np.asarray(a, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where(np.isfinite(x) & (x != 0), np.floor(np.log10(np.abs(x))), 0)
        scale = 10.0 ** np.clip(digits - 1 - mag, -300, 300)
        return np.round(x * scale) / scale


@dataclass(frozen=True)
class TokenInfo:
    """Per contextual token l: global kind (1 distinct, 2 common, 0 unused), owner class
    (distinct tokens; −1 otherwise), P(l|owner) (max over classes for common tokens) and the
    token's P-rank within its class in [0, 1] (used to colour distinct tokens by P)."""

    kind: np.ndarray
    owner: np.ndarray
    p: np.ndarray
    rank: np.ndarray


def read_new(store: Any, run_id: str, last: int, upto: int | None = None) -> tuple[list[int], pd.DataFrame]:
    """The steps stored after ``last`` (up to ``upto``: the step a page shows) and their scalar rows, both
    cut at the latest step that has both, so every chart drawn from them ends at one step however the
    reads interleave with the writes (a snapshot stored meanwhile comes with the next read).  Any kind."""
    new = [s for s in store.steps(run_id) if s > last and (upto is None or s <= upto)]
    if not new:
        return [], pd.DataFrame()
    rows = store.scalars(run_id, since_step=last)
    common = min(new[-1], int(rows["step"].max())) if len(rows) else last
    return [s for s in new if s <= common], rows[rows["step"] <= common] if len(rows) else rows


@dataclass
class RunHistory:
    """Everything stored for one run so far, read incrementally (only new steps each time)."""

    run_id: str
    steps: list[int] = field(default_factory=list)
    z: list[np.ndarray] = field(default_factory=list)  # each (R, Q, M_ctx)
    c: list[np.ndarray] = field(default_factory=list)  # each (R, K, M_ctx)
    scalars: pd.DataFrame = field(default_factory=pd.DataFrame)
    topk: bool = False
    _index: dict[tuple[str, int, int], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def update(self, store: Any) -> bool:
        """Read the snapshots and scalar rows written since the last update, up to the latest step that
        has both (so every chart drawn from the history ends at one step, however the reads interleave
        with the writes); True if any."""
        new, rows = read_new(store, self.run_id, self.last_step)
        self._append(store, new, rows)
        return bool(new)

    def extended(self, store: Any) -> RunHistory:
        """This history with what the store gained since, as :meth:`update` reads it, in a NEW object
        (``self`` when nothing is new): a history never changes once handed out, so one object can serve
        every session showing the run, whichever of them reads the next snapshot."""
        new, rows = read_new(store, self.run_id, self.last_step)
        if not new:
            return self
        grown = replace(self, steps=list(self.steps), z=list(self.z), c=list(self.c), _index={})
        grown._append(store, new, rows)
        return grown

    def _append(self, store: Any, new: list[int], rows: pd.DataFrame) -> None:
        for s in new:
            snap = store.snapshot(self.run_id, s)
            self.steps.append(s)
            if "z" not in snap:  # top-k layout (huge vocabularies): no per-token history
                self.topk = True
                continue
            self.z.append(snap["z"])
            self.c.append(snap["c"])
        if new:
            self.scalars = rows if self.scalars.empty else pd.concat([self.scalars, rows], ignore_index=True)
            self._index = {}

    def _build_index(self) -> None:
        """(metric, replica, n or −1 for the class mean) → (steps, values), sorted by step."""
        df = self.scalars.sort_values("step", kind="stable")
        n = df["n"].fillna(-1).astype(np.int64)
        groups = df.groupby([df["metric"], df["replica"], n], sort=False)
        # built whole, then set: a session reading a shared history never sees half an index
        self._index = {
            (str(m), int(r), int(k)): (g["step"].to_numpy(np.int64), g["value"].to_numpy(np.float64))
            for (m, r, k), g in groups
        }

    @property
    def last_step(self) -> int:
        return self.steps[-1] if self.steps else -1

    def c_of(self, replica: int, n: int) -> np.ndarray:
        """c_n over stored steps: (S, M_ctx)."""
        return np.stack([c[replica, n] for c in self.c]) if self.c and not self.topk else np.zeros((0, 0))

    def z_of(self, replica: int, q: int) -> np.ndarray:
        """z_q over stored steps: (S, M_ctx)."""
        return np.stack([z[replica, q] for z in self.z]) if self.z and not self.topk else np.zeros((0, 0))

    def metric(self, name: str, replica: int = 0, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values) of one metric; ``n=None`` is the mean over classes."""
        if self.scalars.empty:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if not self._index:
            self._build_index()
        return self._index.get((name, replica, -1 if n is None else n), (np.zeros(0, dtype=np.int64), np.zeros(0)))
