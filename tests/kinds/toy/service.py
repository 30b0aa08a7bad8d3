"""A toy third kind's service side: what a new kind must supply, and nothing else.  It lives in its own
folder, and no file outside it names it; ``SCANSNAP_KINDS`` registers it (``conftest.py`` here).

The toy decays one number: x_t = x_0 (1 − r)^t, with x_0 = 1 and rate r; a snapshot every 5 steps
stores x as an array and as the scalar metric ``x`` (replica 0, no class).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict

from scansnap.service.files import atomic_write, write_table
from scansnap.service.kinds import RunKind
from scansnap.service.store import RunStore

NAME = "toy"
EVERY = 5


class ToyOptim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    steps: int = 20


class ToyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str | None = None
    rate: float = 0.5
    optim: ToyOptim = ToyOptim()

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> ToyConfig:
        return cls.model_validate_json(text)


@dataclass
class ToySnapshot:
    step: int
    arrays: dict[str, np.ndarray] = field(default_factory=dict)


class ToyTrainer:
    def __init__(self, cfg: ToyConfig):
        self.cfg, self.step_count, self.x = cfg, 0, 1.0
        self.schedule = list(range(0, cfg.optim.steps + 1, EVERY))
        self.device = torch.device("cpu")

    def advance(self, n: int) -> None:
        self.x *= (1 - self.cfg.rate) ** n
        self.step_count += n

    def snapshot(self) -> ToySnapshot:
        return ToySnapshot(self.step_count, {"x": np.array([self.x])})

    def checkpoint(self) -> tuple[dict[str, np.ndarray], str]:
        return {"x": np.array([self.x])}, json.dumps({"step": self.step_count})

    def restore(self, arrays: dict[str, np.ndarray], meta_json: str) -> None:
        self.x, self.step_count = float(arrays["x"][0]), json.loads(meta_json)["step"]


class ToyTraining:
    def __init__(self, cfg: ToyConfig, store: RunStore):
        self.trainer = ToyTrainer(cfg)

    def started(self, store: RunStore, run_id: str) -> None:
        store.add_statics(run_id, {"x0": np.array([1.0])})

    def stored(self, snap: ToySnapshot) -> tuple[dict[str, np.ndarray], Any]:
        return snap.arrays, [(0, None, "x", float(snap.arrays["x"][0]))]

    def after_first_snapshot(self, store: RunStore, run_id: str) -> None:
        return None


def export_toy(store: RunStore, run_id: str, out: Path, config: str, fmt: str) -> list[Path]:
    """config.json and x.<fmt> (step, x)."""
    df = store.scalars(run_id)[["step", "value"]].rename(columns={"value": "x"})
    return [
        atomic_write(out / "config.json", lambda p: p.write_text(config, encoding="utf-8")),
        write_table(df, out / f"x.{fmt}", fmt),
    ]


def toy_seconds(_data_dir: Any, cfg: ToyConfig) -> float:
    return 0.001 * cfg.optim.steps


def add_toy_commands(sub: Any) -> None:
    """``toy-half-life --rate r``: the steps in which x halves, ln 2 / −ln(1 − r)."""
    command = sub.add_parser("toy-half-life", help="the toy's half-life in steps")
    command.add_argument("--rate", type=float, required=True)
    command.set_defaults(func=lambda args: print(f"{np.log(2) / -np.log1p(-args.rate):.4f} steps") or 0)


KIND = RunKind(
    NAME,
    ToyConfig,
    toy_seconds,
    f"{__name__}:ToyTraining",
    f"{__name__}:export_toy",
    commands=f"{__name__}:add_toy_commands",
)
