"""scripts/gpu_check.sh, the check a lent GPU machine runs (../shared/gpu-notes.md), kept from rotting: here it
runs every step on the CPU at its tiny sizes and must write its two files with every figure."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.guards import GUARD_S

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_check.sh"


def _check(out: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "OUT": str(out)}
    return subprocess.run(
        ["bash", str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.e2e
def test_the_gpu_check_runs_every_step_on_the_cpu_and_writes_its_figures(tmp_path):
    done = _check(tmp_path, "--device", "cpu", "--tiny")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu_check.json", "gpu_check.log"]  # the tool takes 8
    summary = json.loads((tmp_path / "gpu_check.json").read_text())
    assert {"python", "torch", "numpy", "card"} <= set(summary["versions"])
    assert summary["text_run"]["status"] == "finished" and summary["text_run"]["device"].startswith("cpu")
    cpu = summary["by_device"]["cpu"]
    assert cpu["step_device"].startswith("cpu") and cpu["syn-medium-1 R=160 new ms per replica-step"] > 0
    assert cpu["sweep new_train_total_s"] > 0 and cpu["text ms per step (paper 1-layer)"] > 0
    assert set(summary["benches"]) == {"step_cpu", "sweep_cpu", "text_cpu"}
    log = (tmp_path / "gpu_check.log").read_text()
    assert "== the CUDA tests" in log and "== done" in log


def test_a_device_other_than_cuda_or_cpu_is_refused_with_what_is_allowed(tmp_path):
    done = _check(tmp_path, "--device", "tpu", timeout=GUARD_S)
    assert done.returncode == 2 and "allowed cuda or cpu" in done.stderr
    assert not (tmp_path / "gpu_check.json").exists()
