"""A stored real-text run as chart data, read incrementally from the run store (only new steps each
tick; no streamlit here).  Rows are the text kind's scalar frame (step, layer, head, metric, value)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scansnap.paper.history import read_new

EMPTY = np.zeros(0, dtype=np.int64)


@dataclass
class TextHistory:
    run_id: str
    steps: list[int] = field(default_factory=list)
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)  # step, layer, head, metric, value
    _cache: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    @property
    def last_step(self) -> int:
        return self.steps[-1] if self.steps else -1

    def update(self, store: Any, upto: int | None = None) -> bool:
        """Read the steps and scalar rows stored since the last update, up to step ``upto`` (the step the
        page shows: a snapshot stored since it was read comes with the next tick) and never past the
        latest step that has both; True if any."""
        new, rows = read_new(store, self.run_id, self.last_step, upto)
        if not new:
            return False
        self.rows = rows if self.rows.empty else pd.concat([self.rows, rows], ignore_index=True)
        self.steps += new
        self._cache = {}
        return True

    def run_metric(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values) of a run-level metric (train_loss, val_loss, val_ppl)."""
        if name not in self._cache:
            df = self.rows[(self.rows["metric"] == name) & self.rows["layer"].isna()] if len(self.rows) else None
            self._cache[name] = (
                (EMPTY, np.zeros(0))
                if df is None or df.empty
                else (df["step"].to_numpy(np.int64), df["value"].to_numpy(np.float64))
            )
        return self._cache[name]

    def layer_metric(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(steps (S,), values (S, L)): a per-layer metric, mean over heads, at every stored step."""
        key = f"layers:{name}"
        if key not in self._cache:
            df = self.rows[(self.rows["metric"] == name) & self.rows["head"].isna()] if len(self.rows) else None
            if df is None or df.empty:
                self._cache[key] = (EMPTY, np.zeros((0, 0)))
            else:
                wide = df.pivot_table(index="step", columns="layer", values="value", aggfunc="first").sort_index()
                self._cache[key] = (wide.index.to_numpy(np.int64), wide.to_numpy(np.float64))
        return self._cache[key]
