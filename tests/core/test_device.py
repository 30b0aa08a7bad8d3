"""Device choice (CUDA when present, else CPU) and its record in every run.

On a CPU-only machine the CUDA branch of the choice is exercised by faking
``torch.cuda.is_available``; the last test trains on a real GPU and compares with the CPU,
and reports itself as skipped (with the reason) where there is none."""

from __future__ import annotations

import platform

import numpy as np
import pytest
import torch

from scansnap.core import device
from scansnap.kinds.synthetic.science import train
from scansnap.kinds.synthetic.science.optim import ReplicaOptimizer
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.kinds.synthetic.service import training as yz_training
from scansnap.paper.presets import get_preset
from scansnap.service import runner
from scansnap.service.store import RunStore


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


@pytest.mark.parametrize("method", ["sgd", "adam"])
def test_every_tensor_of_the_trainer_is_on_the_device_it_chose(monkeypatch, method):
    """The trainer asks for the config's device and puts every tensor there.  On a CPU-only machine any
    tensor lands on the CPU whatever the code asks, so the choice is faked as PyTorch's ``meta`` device
    (shapes without data): a tensor created without ``device=`` stays on the CPU and is caught here."""
    asked: list[str] = []

    def choose(preference: str) -> torch.device:
        asked.append(preference)
        return torch.device("meta")

    monkeypatch.setattr(train, "resolve_device", choose)
    cfg = get_preset("syn-small").config.with_overrides({"optim.method": method, "model.device": "cpu"})
    tr = Trainer(cfg)
    assert asked == ["cpu"], "the trainer must choose the device the config asks for"
    assert tr.device == torch.device("meta")
    for name, opt in tr.opt.items():  # one update creates a replica optimiser's state (momentum, Adam's m and v)
        if isinstance(opt, ReplicaOptimizer):  # the decoder's BlockOptimizer holds its state from the start
            opt.step(tr._state[name], torch.zeros_like(tr._state[name]))
    owners = {"trainer": tr, "setup": tr.setup, "kind": tr.kind}
    tensors = {f"{o}.{k}": v for o, obj in owners.items() for k, v in vars(obj).items() if isinstance(v, torch.Tensor)}
    tensors |= {f"params.{k}": v for k, v in tr._state.items()}
    tensors |= {f"opt.{n}.{k}": v for n, o in tr.opt.items() for k, v in [("lr", o.lr), *o.state.items()]}
    assert all(o.state for o in tr.opt.values()), "the update created no optimiser state to check"
    off = {k: str(t.device) for k, t in tensors.items() if t.device != tr.device}
    assert not off, f"tensors off the trainer's device: {off}"


def test_the_run_records_the_device_its_trainer_chose(monkeypatch, tmp_path):
    """The store's record of where a run trains is its trainer's device, not where the test runs: a
    trainer on the second GPU of a (faked) machine is recorded as such."""

    class OnSecondGpu(Trainer):
        def __init__(self, cfg):
            super().__init__(cfg)  # built on the CPU; only the device it reports is faked
            self.device = torch.device("cuda", 1)

    monkeypatch.setattr(yz_training, "Trainer", OnSecondGpu)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: f"Fake GPU {torch.device(d).index}")
    with RunStore(tmp_path) as store:
        job = runner.RunJob(get_preset("syn-small").config.with_overrides({"optim.steps": 2}), store)
        recorded = store.get_run(job.run_id)["device"]
    assert recorded.startswith("cuda:1 ") and "Fake GPU 1" in recorded, recorded


def test_a_cpu_run_records_cpu_and_the_versions(tmp_path):
    with RunStore(tmp_path) as store:
        cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 2, "model.device": "cpu"})
        job = runner.RunJob(cfg, store)
        job.run()
        run = store.get_run(job.run_id)
    assert run["device"].startswith("cpu (") and run["device"].endswith(" threads)"), run["device"]
    assert run["versions"]["torch"] == torch.__version__ and run["versions"]["numpy"] == np.__version__
    assert run["versions"]["python"] == platform.python_version()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")
def test_cuda_run_matches_the_cpu_run():
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 20, "model.dtype": "float64"})
    snaps = {dev: list(Trainer(cfg.with_overrides({"model.device": dev})).run()) for dev in ("cpu", "cuda")}
    for a, b in zip(snaps["cpu"], snaps["cuda"], strict=True):
        np.testing.assert_allclose(a.arrays["z"], b.arrays["z"], rtol=1e-9, atol=1e-12)
