"""The replica-batched trainer: determinism, batching, the T→∞ limit, divergence, memory layout."""

import json

import numpy as np
import pytest
import torch

from scansnap.core.errors import DivergedError
from scansnap.core.scalar_columns import NO_CLASS
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Trainer

SMALL = {
    "data": {"num_last": 1, "num_next_per_last": 2},
    "model": {"dtype": "float64"},
    "optim": {"steps": 30, "batch": 64},
}


def cfg(**over):
    d = {k: dict(v) for k, v in SMALL.items()}
    for key, value in over.items():
        section, field = key.split("__")
        d.setdefault(section, {})[field] = value
    return RunConfig.from_dict(d)


def final(c: RunConfig) -> tuple[np.ndarray, np.ndarray]:
    tr = Trainer(c)
    tr.advance(c.optim.steps)
    Y, Zq = tr.yz()
    return Y.numpy().copy(), Zq.numpy().copy()


def test_same_seed_same_trajectory_and_chunking_does_not_matter():
    c = cfg(model__init="torch-default")
    a, b = Trainer(c), Trainer(c)
    a.advance(30)
    for _ in range(30):
        b.advance(1)
    assert torch.equal(a.params["Zq"], b.params["Zq"]) and torch.equal(a.params["Y"], b.params["Y"])
    other = Trainer(cfg(model__init="torch-default", replicas__seeds=[9]))
    other.advance(30)
    assert not torch.equal(a.params["Zq"], other.params["Zq"])


@pytest.mark.parametrize("method", ["sgd", "adam"])
def test_batched_replicas_equal_separate_runs(method):
    pairs = [[1.0, 1.0], [5.0, 0.5]]
    seeds = [1, 2, 3]
    batched = Trainer(
        cfg(
            replicas__seeds=seeds,
            replicas__lr_pairs=pairs,
            model__init="torch-default",
            optim__method=method,
            optim__eta_y=0.1,
            optim__eta_z=0.1,
        )
    )
    batched.advance(30)
    assert batched.R == 6
    r = 0
    for ey, ez in pairs:
        for s in seeds:
            Y, Zq = final(
                cfg(
                    replicas__seeds=[s],
                    optim__eta_y=ey,
                    optim__eta_z=ez,
                    model__init="torch-default",
                    optim__method=method,
                )
            )
            np.testing.assert_allclose(batched.params["Zq"][r].numpy(), Zq[0], atol=1e-10)
            np.testing.assert_allclose(batched.params["Y"][r].numpy(), Y[0], atol=1e-10)
            r += 1


def test_finite_T_approaches_mean_field_like_one_over_sqrt_T():
    """Same class sequence for every T (separate RNG streams); only the context noise differs."""
    Ts = [16, 64, 256, 1024, 4096]
    seeds = (1, 2)
    limit = {s: final(cfg(data__T="inf", replicas__seeds=[s]))[1] for s in seeds}
    errs = [
        np.mean([np.abs(final(cfg(data__T=T, replicas__seeds=[s]))[1] - limit[s]).max() for s in seeds]) for T in Ts
    ]
    slope = np.polyfit(np.log(Ts), np.log(errs), 1)[0]
    assert all(np.diff(errs) < 0), errs
    assert -0.8 < slope < -0.35, (slope, errs)


def test_meanfield_plain_equals_infinite_T_with_every_class_in_the_batch():
    """yz-meanfield takes the exact expectation over classes: one step from a random state equals
    the average of the K single-class T=∞ gradients."""
    c = cfg(model__kind="yz-meanfield", model__init="torch-default", optim__momentum=0.0)
    tr = Trainer(c)
    Y0, Z0 = tr.params["Y"].clone(), tr.params["Zq"].clone()
    tr.advance(1)
    from scansnap.kinds.synthetic.science.model import loss_and_grads_yz

    K = tr.problem.K
    x = tr.P.unsqueeze(0)
    _, _, dY, dZ = loss_and_grads_yz(Y0, Z0, x, tr.psi.view(1, K), tr.labels.view(1, K))
    assert torch.allclose(tr.params["Zq"], Z0 - c.optim.eta_z * dZ, atol=1e-14)
    assert torch.allclose(tr.params["Y"], Y0 - c.optim.eta_y * dY, atol=1e-14)


def test_divergence_is_detected_and_names_the_learning_rates():
    # η·λ ≫ 2 makes the weight-decay term p ← p(1 − ηλ) blow up geometrically.
    c = cfg(
        model__init="torch-default",
        model__dtype="float32",
        optim__weight_decay=1.0,
        optim__eta_y=1e3,
        optim__eta_z=1e3,
        optim__steps=200,
    )
    tr = Trainer(c)
    with pytest.raises(DivergedError) as e:
        tr.advance(200)
    assert 0 < e.value.step < 200
    assert "η_Y=1000" in str(e.value) and "lower the learning rates" in str(e.value)


def test_only_query_rows_are_stored():
    tr = Trainer(
        RunConfig.from_dict(
            {"data": {"num_last": 10, "num_next_per_last": 2, "num_distinct_per_next": 500, "layout": "compact"}}
        )
    )
    Q, M = tr.problem.Q, tr.problem.M_ctx
    assert tr.params["Zq"].shape == (1, Q, M) and tr.params["Y"].shape == (1, M, 20)


def test_snapshot_arrays_are_copies_and_scalars_have_expected_shapes():
    tr = Trainer(cfg(replicas__seeds=[1, 2]))
    s0 = tr.snapshot()
    z0 = s0.arrays["z"].copy()
    tr.advance(5)
    s1 = tr.snapshot()
    np.testing.assert_array_equal(s0.arrays["z"], z0)  # not a view of the live parameters
    assert s1.scalars["entropy_distinct"].shape == (2, tr.problem.K)
    assert s1.scalars["loss"].shape == (2,)
    blocks = s1.scalar_blocks()
    assert set(blocks) >= {"loss", "entropy_distinct", "B_hat"}
    ent = blocks["entropy_distinct"]  # 2 class means, then 2 × K per-class rows
    assert list(ent.n[:2]) == [NO_CLASS, NO_CLASS]
    np.testing.assert_allclose(ent.value[:2], s1.scalars["entropy_distinct"].mean(axis=1))
    np.testing.assert_array_equal(ent.value[2:], s1.scalars["entropy_distinct"].reshape(-1))
    np.testing.assert_array_equal(ent.replica[2:], np.repeat([0, 1], tr.problem.K))
    K = tr.problem.K  # above per_class_limit values (R·K), a per-class metric keeps its class means only
    assert len(s1.scalar_blocks(per_class_limit=2 * K)["entropy_distinct"].value) == 2 + 2 * K
    means_only = s1.scalar_blocks(per_class_limit=2 * K - 1)["entropy_distinct"]
    assert list(means_only.n) == [NO_CLASS, NO_CLASS] and len(blocks["loss"].value) == 2


def test_large_vocabulary_snapshots_keep_top_k():
    tr = Trainer(
        RunConfig.from_dict(
            {
                "data": {"num_last": 10, "num_next_per_last": 2, "num_distinct_per_next": 3000, "layout": "compact"},
                "optim": {"batch": 8},
            }
        )
    )
    s = tr.snapshot()
    assert set(s.arrays) == {"topk_idx", "topk_c", "topk_z"}
    assert s.arrays["topk_c"].shape == (1, 20, 32)
    assert np.all(np.diff(s.arrays["topk_c"], axis=-1) <= 0)


@pytest.mark.parametrize("kind", ["standard", "yz-meanfield"])
def test_other_model_kinds_train_and_report_every_metric(kind):
    c = cfg(model__kind=kind, model__init="torch-default", model__d=16, optim__steps=20)
    tr = Trainer(c)
    snaps = list(tr.run())
    last = snaps[-1].scalars
    assert last["loss"].mean() < snaps[0].scalars["loss"].mean()
    for name in ("entropy_distinct", "common_mass", "B_hat", "dz_dominant", "share_common_down"):
        assert np.isfinite(last[name]).all(), name


def _trajectory(c: RunConfig, steps: int, slots: int | None = None) -> Trainer:
    tr = Trainer(c)
    if slots is not None:
        tr.kind.slots = slots
    tr.advance(steps)
    return tr


REPLICA_CASES = [
    {},  # finite T, SGD with momentum
    {"data__T": "inf", "optim__method": "adam"},
    {"model__kind": "yz-meanfield", "optim__weight_decay": 0.01},
    {"model__dtype": "float32", "data__num_common_per_last": 2, "data__num_last": 2},
]
REPLICA_STEPS = 6


def _replica_runs(over: dict, slots: int | None, monkeypatch) -> list[tuple[str, Trainer, Trainer, int]]:
    """(what, a replica's run alone, a run holding it among others, its index there) for each of the 10 replicas
    of a run (5 seeds, one twice, × 2 learning-rate pairs) and of the same run with seeds and pairs reversed.
    Chunks of 3 replicas cut groups and join seeds; ``slots=2`` makes most batches overflow the padded slots, so
    chunks of different shapes alternate."""
    import scansnap.kinds.synthetic.science.yz_kinds as yk

    monkeypatch.setattr(yk, "CHUNK_REPLICAS", 3)
    pairs = [[1.0, 1.0], [5.0, 0.5]]
    seeds = [3, 1, 2, 1, 4]
    over = {"model__init": "torch-default", **over}
    big = _trajectory(cfg(replicas__seeds=seeds, replicas__lr_pairs=pairs, **over), REPLICA_STEPS, slots)
    rev = cfg(replicas__seeds=seeds[::-1], replicas__lr_pairs=pairs[::-1], **over)
    flipped = _trajectory(rev, REPLICA_STEPS, slots)
    out = []
    for r, ((ey, ez), seed) in enumerate(zip(big.replica_lr, big.replica_seed, strict=True)):
        alone = _trajectory(cfg(replicas__seeds=[seed], replicas__lr_pairs=[[ey, ez]], **over), REPLICA_STEPS, slots)
        r2 = (1 - r // len(seeds)) * len(seeds) + (len(seeds) - 1 - r % len(seeds))  # same replica, flipped run
        out += [("alone vs among others", alone, big, r), ("order of the others", alone, flipped, r2)]
    return out


def _replica_values(tr: Trainer, r: int) -> dict[str, torch.Tensor]:
    """What replica ``r``'s trajectory leaves: its parameters, B̂ and summed training loss."""
    return {**{k: p[r] for k, p in tr.params.items()}, "B_hat": tr.B_hat[r], "train_loss": tr._train_loss_sum[r]}


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("over", REPLICA_CASES)
@pytest.mark.parametrize("slots", [None, 2])
def test_a_replica_does_not_depend_on_the_others_bit_for_bit(over, slots, monkeypatch):
    """With one intra-op thread (a training worker's setting when the server runs one job per core) a
    replica's trajectory (parameters, B̂, training loss) is the same, to the last bit, whether it trains alone
    or among other replicas, in whatever order."""
    for what, alone, other, r in _replica_runs(over, slots, monkeypatch):
        theirs = _replica_values(other, r)
        for name, v in _replica_values(alone, 0).items():
            assert torch.equal(v, theirs[name]), (r, name, what)


@pytest.mark.parametrize("over", REPLICA_CASES)
def test_with_several_threads_a_replica_matches_its_run_alone_to_rounding(over, monkeypatch):
    """At torch's default thread count a BLAS may split one product's sum between threads, and differently
    for different replica counts (MKL with 2 threads on AMD EPYC does), so the last bits may differ; the
    difference is rounding only.  Reordering a sum of n terms changes it by at most about n·u times the terms'
    magnitudes (u the dtype's unit roundoff: Higham's γ_n bound), and S steps add S such changes, so each value
    stays within S·n·u·max|value| of its run alone, n the longest sum of a step: the K·B sample terms of
    ∂L/∂Y_c, or the M_ctx columns of an attention row."""
    for what, alone, other, r in _replica_runs(over, None, monkeypatch):
        u = torch.finfo(alone.dtype).eps / 2
        n = max(alone.problem.K * alone.cfg.optim.batch, alone.problem.M_ctx)
        theirs = _replica_values(other, r)
        for name, v in _replica_values(alone, 0).items():
            tol = REPLICA_STEPS * n * u * v.abs().max().item()
            assert (v - theirs[name]).abs().max().item() <= tol, (r, name, what, tol)


def test_reused_buffers_may_hold_anything():
    """The step's workspace and scratch buffers are reused uninitialised: filling them with NaN between steps
    changes nothing (every buffer is overwritten, or ignored with β = 0, before it is read)."""
    for over in ({"optim__momentum": 0.0, "optim__weight_decay": 0.01}, {"optim__method": "adam"}, {}):
        c = cfg(
            model__init="torch-default",
            data__source="table",
            data__table=[[1, 1, 0], [1, 0, 1], [0, 0, 0.5]],
            data__psi=[0, 0, 1],
            data__num_last=1,
            data__num_next_per_last=1,
            **over,
        )
        clean, poisoned = Trainer(c), Trainer(c)
        for _ in range(5):
            clean.step()
            poisoned.step()
            for ws in poisoned.kind.lanes.workspaces:
                for buf in ws.buffers.values():
                    buf.fill_(float("nan"))
        for name, p in clean.params.items():
            assert torch.equal(p, poisoned.params[name]), (over, name)


def test_checkpoints_of_the_old_step_resume():
    """Runs stored before issue 16 hold Y and its optimiser state in token order ("param.Y", "opt.Y.buf", …):
    the new trainer restores them and continues as the old step would (to float64 rounding)."""
    from tests.oracles.old_step import OldTrainer

    for over in ({}, {"optim__method": "adam"}, {"data__num_common_per_last": 1, "data__num_last": 3}):
        pairs = [[1.0, 1.0], [2.0, 0.5]]
        c = cfg(model__init="torch-default", replicas__seeds=[1, 2], replicas__lr_pairs=pairs, **over)
        old = OldTrainer(c)
        old.advance(5)
        arrays, meta = old.checkpoint()
        new = Trainer(c)
        new.restore(arrays, meta)
        old.advance(5)
        new.advance(5)
        for name, p in old.params.items():
            np.testing.assert_allclose(new.params[name].numpy(), p.numpy(), rtol=0, atol=1e-12)
        again, meta2 = new.checkpoint()  # and the new trainer writes the same format
        assert set(again) == set(arrays) and json.loads(meta2).keys() == json.loads(meta).keys()
        assert all(again[k].shape == v.shape for k, v in arrays.items())


def test_divergence_names_the_replica_that_diverged():
    """Among replicas with small and huge rates (weight decay η·λ ≫ 2 blows the parameters up), the error names
    the huge rates, whichever check (loss or parameters) catches it first."""
    pairs = [[1e-3, 1e-3], [1e3, 1e3], [2e-3, 2e-3]]
    c = cfg(model__init="torch-default", optim__weight_decay=1.0, replicas__seeds=[1, 2], replicas__lr_pairs=pairs)
    with pytest.raises(DivergedError) as e:
        Trainer(c).advance(200)
    assert "η_Y=1000, η_Z=1000" in str(e.value)
