"""The synthetic kind: the paper's (Y, Z) model on a token distribution (the Lab's runs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import build_problem, run_statics
from scansnap.kinds.synthetic.service.budget import SyntheticEstimate, check_budget, estimated_seconds
from scansnap.service.kinds import RunKind


def _seconds(_data_dir: str | Path, cfg: RunConfig) -> float:
    return estimated_seconds(cfg)


def _check(_data_dir: str | Path, cfg: RunConfig) -> SyntheticEstimate:
    return check_budget(cfg)


def _statics(cfg: RunConfig) -> dict[str, np.ndarray]:
    """P(l|n), the query and support of each class, and each replica's (η_Y, η_Z) and seed."""
    return run_statics(cfg.lr_pairs, list(cfg.replicas.seeds), build_problem(cfg.data))


KIND = RunKind(
    "synthetic",
    RunConfig,
    _seconds,
    "scansnap.kinds.synthetic.service.training:YZTraining",
    "scansnap.kinds.synthetic.service.export:export_synthetic_run",
    check=_check,
    statics=_statics,
    backfill="scansnap.kinds.synthetic.service.theory:backfill_overlay",
    seed_key="replicas.seeds",
    seed_list=True,
    export_size="scansnap.kinds.synthetic.service.export:export_size",
    tables="scansnap.kinds.synthetic.service.export:table",
    table_names=("scalars", "trajectory"),
    verdicts="scansnap.kinds.synthetic.service.export:run_verdicts_of",
    door="scansnap.kinds.synthetic.service.door:SyntheticDoor",
    summary="scansnap.kinds.synthetic.service.commands:summary",
    commands="scansnap.kinds.synthetic.service.commands:add_commands",
)
