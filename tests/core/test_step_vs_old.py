"""The engine's training step against the step as it was before issue 16 (tests/oracles/old_step.py), on every
model kind and layout: paper and compact layouts, generator and table data, per-query common tokens, T finite
and ∞, SGD with and without momentum (and weight decay), Adam."""

import numpy as np
import pytest
import torch

from engine.core.config import RunConfig
from engine.core.kinds import Lemma3YZ, MeanFieldYZ, SampledYZ, StandardModel
from engine.core.train import Trainer
from tests.oracles.old_step import OldTrainer

TABLE = {  # token 0 in every class, 1 and 2 shared by two classes, 3–6 distinct (5 of class 1, 6 of class 2)
    "source": "table",
    "table": [[1, 1, 0, 2, 0, 0, 0], [1, 0, 1, 0, 3, 0.5, 0], [2, 1, 1, 0, 0, 0, 1]],
    "psi": [0, 1, 0],
}
DATA = {
    "paper": {"num_last": 2, "num_next_per_last": 2, "num_common": 3, "num_distinct_per_next": 4},
    "per-query-common": {"num_last": 2, "num_next_per_last": 2, "num_common": 2, "num_common_per_last": 2},
    "per-query-common-1": {"num_last": 3, "num_next_per_last": 1, "num_common": 2, "num_common_per_last": 2},
    "compact": {"num_last": 2, "num_next_per_last": 2, "num_distinct_per_next": 5, "layout": "compact"},
    "table": TABLE,
    "table-compact": {**TABLE, "layout": "compact"},
}
OPTIM = {
    "sgd-momentum": {"method": "sgd"},
    "sgd-plain-decay": {"method": "sgd", "momentum": 0.0, "weight_decay": 0.01},
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


@pytest.mark.parametrize("kind", ["yz", "meanfield", "standard"])
@pytest.mark.parametrize("data", list(DATA))
@pytest.mark.parametrize("optim", list(OPTIM))
def test_step_is_bit_identical_to_the_old_step(kind, data, optim):
    for T, dtype in ((16, "float32"), ("inf", "float64")):
        new, old = compare(config(kind, data, optim, T, dtype))
        assert set(new.params) == set(old.params)
        for name in old.params:
            assert torch.equal(new.params[name], old.params[name]), (name, T, dtype)
        np.testing.assert_array_equal(new.B_hat.numpy(), old.B_hat.numpy())  # NaN where f² underflows, in both
        assert not torch.equal(new.Z0, new.kind.zq(new.params))  # it trained


def test_lemma3_step_equals_the_old_step():
    """The Lemma-3 decoder solves (FᵀF)C = … with MKL's lstsq, whose last bits vary from call to call (the old
    step against itself differs too), so here the comparison is to float64 rounding."""
    for data in ("paper", "table", "compact"):
        new, old = compare(config("lemma3", data, "sgd-momentum", "inf", "float64"))
        for name in old.params:
            np.testing.assert_allclose(new.params[name].numpy(), old.params[name].numpy(), rtol=1e-10, atol=1e-12)


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
