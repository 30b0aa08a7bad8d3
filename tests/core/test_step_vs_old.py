"""The engine's training step against the step as it was before issue 16 (tests/oracles/old_step.py), on every
model kind and layout: paper and compact layouts, generator and table data (unequal distinct blocks, a class
without distinct tokens, tokens of no class, no common token), per-query common tokens, T finite and ∞, SGD
with and without momentum (and weight decay), Adam.

The new step computes the same sums in another order (role blocks, fused update), so it agrees to rounding:
float64 to 1e-10 of the parameters' scale (measured ≤ 4e-14); float32 to 2e-6 of the scale with SGD (measured
≤ 6e-7, a few ulp grown over 8 steps) and to 1e-4 with Adam (measured ≤ 2.5e-5: Adam divides each gradient
entry by its own running RMS, so an entry whose gradient is near 0 carries its relative rounding error into a
step of size ~η).  ``standard`` and the Lemma-3 decoder kept their step: bit-identical / 1e-10 (MKL lstsq)."""

import numpy as np
import pytest
import torch

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.kinds import Lemma3YZ, StandardModel
from scansnap.kinds.synthetic.science.model import loss_and_grads_yz
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.kinds.synthetic.science.yz_kinds import MeanFieldYZ, SampledYZ
from tests.oracles.old_step import OldTrainer

TABLE = {  # token 0 in every class, 1 and 2 shared by two classes, 3–6 distinct (5 of class 1, 6 of class 2)
    "source": "table",
    "table": [[1, 1, 0, 2, 0, 0, 0], [1, 0, 1, 0, 3, 0.5, 0], [2, 1, 1, 0, 0, 0, 1]],
    "psi": [0, 1, 0],
}
ODD_TABLE = {  # distinct tokens: 3, 4 of class 0, 5 of class 1, none of classes 2 and 3; token 6 of no class
    "source": "table",
    "table": [[1, 2, 0, 1, 3, 0, 0], [1, 0, 1, 0, 0, 2, 0], [0, 1, 1, 0, 0, 0, 0], [0.5, 0, 0, 0, 0, 0, 0]],
    "psi": [0, 0, 1, 1],
}
DISJOINT = {"source": "table", "table": [[1, 2, 0, 0], [0, 0, 1, 1]], "psi": [0, 0]}  # no common token
DATA = {
    "paper": {"num_last": 2, "num_next_per_last": 2, "num_common": 3, "num_distinct_per_next": 4},
    "per-query-common": {"num_last": 2, "num_next_per_last": 2, "num_common": 2, "num_common_per_last": 2},
    "per-query-common-1": {"num_last": 3, "num_next_per_last": 1, "num_common": 2, "num_common_per_last": 2},
    "compact": {"num_last": 2, "num_next_per_last": 2, "num_distinct_per_next": 5, "layout": "compact"},
    "table": TABLE,
    "table-compact": {**TABLE, "layout": "compact"},
    "odd-table": ODD_TABLE,
    "disjoint": DISJOINT,
}
OPTIM = {
    "sgd-momentum": {"method": "sgd"},
    "sgd-plain-decay": {"method": "sgd", "momentum": 0.0, "weight_decay": 0.01},
    "sgd-momentum-decay": {"method": "sgd", "weight_decay": 0.01},
    "adam": {"method": "adam", "eta_y": 0.1, "eta_z": 0.1, "weight_decay": 0.001},
}
KINDS = {
    "yz": {"kind": "yz"},
    "meanfield": {"kind": "yz-meanfield"},
    "lemma3": {"kind": "yz-meanfield", "meanfield_decoder": "lemma3"},
    "standard": {"kind": "standard", "d": 8},
}


def config(kind: str, data: str, optim: str, T: object, dtype: str) -> RunConfig:
    return RunConfig.from_dict(
        {
            "data": {**DATA[data], "T": T},
            "model": {**KINDS[kind], "init": "torch-default", "dtype": dtype},
            "optim": {**OPTIM[optim], "batch": 24, "steps": 8},
            "replicas": {"seeds": [1, 2], "lr_pairs": [[1.0, 1.0], [3.0, 0.5]]},
        }
    )


def compare(cfg: RunConfig, steps: int = 8) -> tuple[Trainer, OldTrainer]:
    new, old = Trainer(cfg), OldTrainer(cfg)
    new.advance(steps)
    old.advance(steps)
    return new, old


def assert_close(new: torch.Tensor, old: torch.Tensor, rel: float, what: str) -> None:
    scale = float(old.abs().max())
    err = float((new - old).abs().max())
    assert err <= rel * scale, f"{what}: max |new − old| = {err:.3g}, {err / scale:.3g} of the scale {scale:.3g}"


@pytest.mark.parametrize("kind", ["yz", "meanfield"])
@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("optim", list(OPTIM))
def test_step_equals_the_old_step_to_rounding(kind, data, optim):
    runs = ((16, "float64"), ("inf", "float64"), (16, "float32"))
    for T, dtype in runs if kind == "yz" else runs[::2]:  # the mean field has no T
        new, old = compare(config(kind, data, optim, T, dtype))
        rel = 1e-10 if dtype == "float64" else (1e-4 if optim == "adam" else 2e-6)
        assert set(new.params) == set(old.params) == {"Y", "Zq"}
        for name in old.params:
            assert_close(new.params[name], old.params[name], rel, f"{name}, T={T}, {dtype}")
        assert_close(new._train_loss_sum, old._train_loss_sum, rel, "train loss")
        if dtype == "float64":
            np.testing.assert_allclose(new.B_hat.numpy(), old.B_hat.numpy(), rtol=1e-8, atol=1e-10)
        assert not torch.equal(new.Z0, new.params["Zq"])  # it trained


@pytest.mark.parametrize("data", ["paper", "compact", "table", "odd-table"])
@pytest.mark.parametrize("optim", list(OPTIM))
def test_standard_step_is_the_old_step(data, optim):
    for T, dtype in ((16, "float32"), ("inf", "float64")):
        new, old = compare(config("standard", data, optim, T, dtype))
        for name in old.params:
            assert torch.equal(new.params[name], old.params[name]), (name, T, dtype)
        np.testing.assert_allclose(new.B_hat.numpy(), old.B_hat.numpy(), rtol=1e-4 if dtype == "float32" else 1e-9)


def test_lemma3_step_equals_the_old_step():
    """The Lemma-3 decoder solves (FᵀF)C = … with MKL's lstsq, whose last bits vary from call to call (the old
    step against itself differs too), so here the comparison is to float64 rounding."""
    for data in ("paper", "table", "compact"):
        new, old = compare(config("lemma3", data, "sgd-momentum", "inf", "float64"))
        for name in old.params:
            assert_close(new.params[name], old.params[name], 1e-10, name)


@pytest.mark.parametrize("kind", ["yz", "meanfield"])
@pytest.mark.parametrize("data", ["per-query-common", "odd-table", "compact"])
def test_population_loss_and_accuracy_equal_the_dense_formula(kind, data):
    """The role-block forward (snapshot's loss and accuracy) against loss_and_grads_yz on the token-order Y."""
    tr = Trainer(config(kind, data, "sgd-momentum", 16, "float64"))
    tr.advance(8)
    loss, acc = tr.population_loss()
    Y, Zq = tr.yz()
    K = tr.problem.K
    x = tr.P.unsqueeze(0).expand(tr.R, -1, -1)
    ref_loss, ref_acc, _, _ = loss_and_grads_yz(Y, Zq, x, tr.psi.expand(tr.R, K), tr.labels.expand(tr.R, K))
    np.testing.assert_allclose(loss.numpy(), ref_loss.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(acc.numpy(), ref_acc.numpy())


def test_each_kind_has_its_strategy_and_shapes():
    cases = {"yz": SampledYZ, "meanfield": MeanFieldYZ, "lemma3": Lemma3YZ, "standard": StandardModel}
    for kind, cls in cases.items():
        tr = Trainer(config(kind, "paper", "sgd-momentum", 16, "float32"))
        pb = tr.problem
        assert type(tr.kind) is cls
        Y, Zq = tr.yz()
        assert Y.shape == (tr.R, pb.M_ctx, pb.M_out) and Zq.shape == (tr.R, pb.Q, pb.M_ctx)
        assert {n: tuple(p.shape[1:]) for n, p in tr.params.items() if n != "W"} == {
            n: s for n, s in tr.kind.shapes().items() if n in tr.params
        }
