"""The replica-batched trainer: determinism, batching, the T→∞ limit, divergence, memory layout."""

import numpy as np
import pytest
import torch

from engine.core.config import RunConfig
from engine.core.train import DivergedError, Trainer

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
    from engine.core.model import loss_and_grads_yz

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
    rows = s1.scalar_rows()
    assert {r[2] for r in rows} >= {"loss", "entropy_distinct", "B_hat"}
    assert any(r[1] is None for r in rows if r[2] == "entropy_distinct")  # class mean row


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
