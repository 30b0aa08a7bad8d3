"""How a reproduce item trains: every scheduled snapshot of ``trainer.run()``, bit for bit, while its progress
callback hears of the steps between snapshots too, so a stop (raised by the callback) lands within a chunk of
steps, not at the next snapshot: Fig. 6's panels snapshot only at their first and last step."""

from __future__ import annotations

import numpy as np
import pytest

from scansnap.kinds.synthetic.paper.items.configs import fig6_config
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.paper.items.common import collect
from scansnap.service.reproduction_run import StopRequestedError
from tests.core.test_text_trainer import small_cfg, synthetic_corpus

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def fig6_like() -> RunConfig:
    """A Fig. 6 panel's snapshot schedule (step 0 and the last) on a small problem: 40 steps, 2 replicas."""
    over = {"optim.steps": 40, "optim.batch": 32, "replicas.seeds": [1], "replicas.lr_pairs": [[1.0, 1.0], [2.0, 1.0]]}
    return fig6_config(1, quick=True).with_overrides(over)


def same_snapshots(a, b) -> None:
    assert [s.step for s in a] == [s.step for s in b]
    for x, y in zip(a, b, strict=True):
        assert x.scalars.keys() == y.scalars.keys() and x.arrays.keys() == y.arrays.keys()
        for k in x.scalars:
            np.testing.assert_array_equal(x.scalars[k], y.scalars[k], err_msg=f"step {x.step}: {k}")
        for k in x.arrays:
            np.testing.assert_array_equal(x.arrays[k], y.arrays[k], err_msg=f"step {x.step}: {k}")


def test_fig6_schedule_snapshots_only_first_and_last_step():
    """The premise: without telling progress between snapshots, a stop would wait for a whole panel."""
    assert list(Trainer(fig6_like()).schedule) == [0, 40]


def test_yz_item_snapshots_are_the_trainers_and_every_step_is_told():
    cfg = fig6_like()
    told: list[int] = []
    snaps = collect(Trainer(cfg), told.append)
    same_snapshots(snaps, list(Trainer(cfg).run()))
    assert sum(told) == 40 and len(told) >= 2 and told[0] == 1  # the first chunk is one step, then sized by time


def test_text_item_snapshots_are_the_trainers_and_every_step_is_told():
    from scansnap.kinds.text.science.trainer import TextTrainer

    cfg = small_cfg()
    told: list[int] = []
    snaps = collect(TextTrainer(cfg, synthetic_corpus()), told.append)
    same_snapshots(snaps, list(TextTrainer(cfg, synthetic_corpus()).run()))
    assert sum(told) == 12 and told[0] == 1


def test_a_stop_raised_by_progress_ends_the_training_within_the_chunk():
    tr = Trainer(fig6_like())

    def stop_at_once(n: int) -> None:
        raise StopRequestedError

    with pytest.raises(StopRequestedError):
        collect(tr, stop_at_once)
    assert tr.step_count == 1  # not 40: the panel's next snapshot


def test_without_progress_the_trainer_advances_to_each_snapshot_in_one_go():
    cfg = fig6_like()
    same_snapshots(collect(Trainer(cfg)), list(Trainer(cfg).run()))
