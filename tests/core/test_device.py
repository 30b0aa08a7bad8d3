"""Device choice (CUDA when present, else CPU) and its record in every run.

On a CPU-only machine the CUDA branch of the choice is exercised by faking
``torch.cuda.is_available``; the last test trains on a real GPU and compares with the CPU,
and reports itself as skipped (with the reason) where there is none."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.core import device
from engine.core.train import Trainer
from engine.paper.presets import get_preset
from engine.service.runner import RunJob
from engine.service.store import RunStore


def test_auto_is_cpu_without_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device.resolve_device("auto") == torch.device("cpu")
    assert device.resolve_device("cpu") == torch.device("cpu")


def test_auto_is_cuda_with_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device.resolve_device("auto").type == "cuda"
    assert device.resolve_device("cuda").type == "cuda"
    assert device.resolve_device("cpu") == torch.device("cpu")  # an explicit CPU request wins


def test_cuda_without_a_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="no CUDA GPU is available; use 'auto' or 'cpu'"):
        device.resolve_device("cuda")


def test_describe_names_the_device_and_threads():
    assert device.describe_device(torch.device("cpu")) == f"cpu ({torch.get_num_threads()} threads)"


def test_every_tensor_of_the_trainer_is_on_its_device():
    tr = Trainer(get_preset("syn-small").config.with_overrides({"optim.steps": 3}))
    list(tr.run())
    tensors = [*tr.params.values(), tr.P, tr.psi, tr.labels, tr.support, tr.Z0, tr.f0, tr.B_hat]
    tensors += [v for opt in tr.opt.values() for v in opt.state.values()]
    assert tensors and {t.device for t in tensors} == {tr.device}


def test_the_run_records_its_device_and_versions(tmp_path):
    with RunStore(tmp_path) as store:
        job = RunJob(get_preset("syn-small").config.with_overrides({"optim.steps": 2}), store)
        job.run()
        run = store.get_run(job.run_id)
    assert run["device"] == device.describe_device(torch.device("cpu" if not torch.cuda.is_available() else "cuda"))
    assert {"python", "torch", "numpy"} <= set(run["versions"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")
def test_cuda_run_matches_the_cpu_run():
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 20, "model.dtype": "float64"})
    snaps = {dev: list(Trainer(cfg.with_overrides({"model.device": dev})).run()) for dev in ("cpu", "cuda")}
    for a, b in zip(snaps["cpu"], snaps["cuda"], strict=True):
        np.testing.assert_allclose(a.arrays["z"], b.arrays["z"], rtol=1e-9, atol=1e-12)
