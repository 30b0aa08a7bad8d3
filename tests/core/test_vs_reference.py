"""End to end: the engine's trainer equals the naive re-implementation of the paper's code
(tests/oracles/reference.py: one-hot B×T×M sequences, attention over positions, autograd, two
torch.optim optimisers) when both see the very same mini-batches."""

import numpy as np
import pytest
import torch

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Trainer
from tests.oracles.reference import paper_tokens, sample_sequences, train_reference


class ReplaySampler:
    """Feeds the trainer pre-drawn batches, converted to support-coordinate counts."""

    def __init__(self, batches, problem):
        self.items = []
        ids = problem.support[0]
        for seq, classes in batches:
            dense = torch.stack([torch.bincount(s[:-1], minlength=problem.M) for s in seq]).numpy()
            cls = classes.numpy()
            self.items.append((cls, np.take_along_axis(dense, ids[cls], 1).astype(np.float64)))

    def sample(self, batch):
        return self.items.pop(0)


@pytest.mark.parametrize(
    "data,optim,init",
    [
        ({"num_last": 2, "num_next_per_last": 1}, {"method": "sgd"}, "zero"),  # Syn-Small
        (
            {"num_last": 2, "num_next_per_last": 2, "num_common_per_last": 2},
            {"method": "sgd", "eta_y": 3.0},
            "torch-default",
        ),
        ({"num_last": 1, "num_next_per_last": 3}, {"method": "adam", "eta_y": 0.1, "eta_z": 0.1}, "torch-default"),
    ],
)
def test_trainer_equals_reference_on_the_same_batches(data, optim, init):
    steps, B, T = 8, 32, 24
    cfg = RunConfig.from_dict(
        {
            "data": {**data, "T": T},
            "model": {"init": init, "dtype": "float64"},
            "optim": {**optim, "batch": B, "steps": steps},
        }
    )
    tr = Trainer(cfg)
    pb = tr.problem
    tokens = paper_tokens(data["num_last"], data["num_next_per_last"], 10, data.get("num_common_per_last", 0), 10)
    assert tokens["M"] == pb.M
    gen = torch.Generator().manual_seed(0)
    batches = [sample_sequences(tokens, B, T, gen) for _ in range(steps)]
    tr.samplers = [ReplaySampler(batches, pb)]
    Y0 = np.zeros((pb.M, pb.M))
    Z0 = np.zeros((pb.M, pb.M))
    Y0[: pb.M_ctx] = tr.params["Y"][0].numpy()
    Z0[pb.query_ids, : pb.M_ctx] = tr.params["Zq"][0].numpy()
    ref = train_reference(
        tokens,
        T=T,
        batch=B,
        steps=steps,
        lr_y=cfg.optim.eta_y,
        lr_z=cfg.optim.eta_z,
        momentum=cfg.optim.momentum,
        method=cfg.optim.method,
        dtype=torch.float64,
        init=(Y0, Z0),
        batches=batches,
    )
    tr.advance(steps)
    np.testing.assert_allclose(tr.params["Zq"][0].numpy(), ref["Z"][pb.query_ids, : pb.M_ctx], atol=1e-9)
    np.testing.assert_allclose(tr.params["Y"][0].numpy(), ref["Y"][: pb.M_ctx], atol=1e-9)
    assert np.abs(ref["Z"][pb.query_ids] - Z0[pb.query_ids]).max() > 1e-3  # attention really moved
