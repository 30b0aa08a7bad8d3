"""The gradient the engine's training step follows, read through the public API: one plain SGD step
(η_Y = η_Z = 1, no momentum, no decay) from given parameters on a given mini-batch moves Y and Zq by −∇L."""

from __future__ import annotations

import numpy as np

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Trainer


class Replay:
    """A sampler that hands out the given (classes, support-coordinate counts) mini-batches in turn."""

    def __init__(self, *batches: tuple[np.ndarray, np.ndarray]):
        self.items = list(batches)

    def sample(self, batch: int) -> tuple[np.ndarray, np.ndarray]:
        return self.items.pop(0)


def engine_gradients(
    data: dict, Y: np.ndarray, Zq: np.ndarray, classes: np.ndarray, counts: np.ndarray, kind: str = "yz"
) -> tuple[float, np.ndarray, np.ndarray]:
    """(loss, ∂L/∂Y (M_ctx, M_out), ∂L/∂Zq (Q, M_ctx)) of the engine's step at (Y, Zq) on one batch, float64."""
    cfg = RunConfig.from_dict(
        {
            "data": data,
            "model": {"kind": kind, "dtype": "float64"},
            "optim": {"method": "sgd", "eta_y": 1.0, "eta_z": 1.0, "momentum": 0.0, "batch": len(classes)},
        }
    )
    tr = Trainer(cfg)
    arrays, meta = tr.checkpoint()
    arrays["param.Y"], arrays["param.Zq"] = Y[None], Zq[None]
    tr.restore(arrays, meta)
    tr.samplers = [Replay((classes, counts))]
    tr.step()
    loss = float(tr.snapshot().scalars["train_loss"][0])
    return loss, Y - tr.params["Y"][0].numpy(), Zq - tr.params["Zq"][0].numpy()
