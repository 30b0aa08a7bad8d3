"""The decoder stored by token role (scansnap/kinds/synthetic/science/roles.py): the token permutation, Y ⇄ blocks,
mini-batches in
role coordinates, the padded slots, the replica groups and their chunks."""

import math

import numpy as np
import pytest
import torch

from scansnap.kinds.synthetic.science.config import DataConfig, RunConfig
from scansnap.kinds.synthetic.science.data import ContextSampler, build_problem
from scansnap.kinds.synthetic.science.roles import ReplicaGroups, RoleLayout
from scansnap.kinds.synthetic.science.slots import padded_slots
from scansnap.kinds.synthetic.science.train import Trainer
from tests.oracles.old_step import OldTrainer

PROBLEMS = {
    "generator": DataConfig(num_last=2, num_next_per_last=2, num_common=3, num_distinct_per_next=4),
    "per-query-common": DataConfig(num_last=3, num_next_per_last=2, num_common=1, num_common_per_last=2),
    "per-query-common, one class per query": DataConfig(num_last=3, num_next_per_last=1, num_common_per_last=2),
    "table": DataConfig(
        source="table",
        table=((1, 2, 0, 1, 3, 0, 0), (1, 0, 1, 0, 0, 2, 0), (0, 1, 1, 0, 0, 0, 0), (0.5, 0, 0, 0, 0, 0, 0)),
        psi=(0, 0, 1, 1),
    ),
}


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_token_roles_partition_the_vocabulary_by_owners(name):
    pb = build_problem(PROBLEMS[name])
    roles = pb.token_roles
    owners = (pb.P > 0).sum(0)
    assert sorted(roles.order) == list(range(pb.M_ctx))
    assert set(roles.common) == set(np.flatnonzero(owners > 1))
    assert set(roles.unused) == set(np.flatnonzero(owners == 0))
    for n in range(pb.K):
        row = roles.distinct[n][roles.distinct[n] >= 0]
        assert set(row) == set(np.flatnonzero(pb.distinct_mask[n]))
        assert np.all(roles.distinct[n][len(row) :] == -1)  # padding only at the end


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_split_and_join_are_inverse(name):
    pb = build_problem(PROBLEMS[name])
    L = RoleLayout(pb, torch.device("cpu"), torch.float64)
    Y = torch.randn(3, pb.M_ctx, pb.M_out, dtype=torch.float64)
    Yc, Yd, Yu = L.split(Y)
    assert Yc.shape == (3, L.mc, pb.M_out) and Yd.shape == (3, pb.K, L.d, pb.M_out) and Yu.shape[1] == L.mu
    assert torch.equal(L.join(Yc, Yd, Yu), Y)
    pads = torch.as_tensor(pb.token_roles.distinct < 0)
    assert Yd[:, pads].abs().max() == 0 if pads.any() else True


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_batches_hold_the_sampled_counts_in_role_columns(name):
    """Each sample's counts, read back from its class's role columns, are its dense count vector; padding slots
    have weight 0; every stream has max(slots, its largest class count) slots."""
    pb = build_problem(PROBLEMS[name])
    L = RoleLayout(pb, torch.device("cpu"), torch.float64)
    draws = [ContextSampler(pb, 9, s).sample(13) for s in (1, 2, 3)]
    batches = L.batches(draws, slots=2)
    for (classes, counts), b in zip(draws, batches, strict=True):
        per_class = np.bincount(classes, minlength=pb.K)
        assert b.slots == max(2, per_class.max())
        x, mask = b.logx[0].exp().numpy(), b.mask[0, ..., 0].numpy()
        assert mask.sum() == len(classes) and np.all(mask.sum(1) == per_class)
        np.testing.assert_allclose(b.neg_w[0].numpy(), -mask.ravel() / len(classes))
        dense = pb.dense_counts(classes, counts)
        seen = np.zeros(pb.K, dtype=int)
        for cls, want in zip(classes, dense, strict=True):
            got = np.zeros(pb.M_ctx)
            ok = L.token[cls] >= 0
            np.add.at(got, L.token[cls][ok], x[cls, seen[cls]][ok])
            np.testing.assert_allclose(got, want, rtol=1e-14)  # exp(ln x): a rounding off
            seen[cls] += 1


def test_padded_slots_is_the_mean_plus_two_binomial_sd():
    # B = 128, K = 20: B/K = 6.4, σ = √(6.4·0.95) = 2.466, 6.4 + 2σ = 11.33 → 12; never more than B.
    assert padded_slots(128, 20) == 12
    assert padded_slots(128, 2) == math.ceil(64 + 2 * math.sqrt(32))
    assert padded_slots(4, 1) == 4


def test_groups_put_each_seed_together_and_chunks_keep_equal_slots():
    g = ReplicaGroups(n_pairs=4, seed_data=[0, 1, 0], shared=False)  # public replica r = pair·3 + seed position
    assert g.order.tolist() == [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]
    assert torch.equal(g.to_public(g.to_groups(torch.arange(12))), torch.arange(12))
    chunks = g.chunks((5, 7), chunk=3)  # data stream 0 has 5 slots, stream 1 has 7
    rows = [r for c in chunks for r in range(c.rows.start, c.rows.stop)]
    assert rows == list(range(12))
    assert all(c.rows.stop - c.rows.start <= 3 for c in chunks)
    assert all(len({(5, 7)[d] for d, _ in c.parts}) == 1 for c in chunks)
    assert [c.parts for c in chunks] == [((0, 3),), ((0, 1),), ((1, 3),), ((1, 1),), ((0, 3),), ((0, 1),)]
    assert ReplicaGroups(4, [0, 1, 0], shared=True).identity


@pytest.mark.parametrize("init", ["zero", "torch-default", "normal"])
@pytest.mark.parametrize("name", list(PROBLEMS))
def test_initial_parameters_are_the_old_trainers_bit_for_bit(init, name):
    """Y(0) is drawn in row pieces straight into the role blocks: the same numbers as one draw of the whole Y."""
    reps = {"seeds": [1, 2], "lr_pairs": [[1, 1], [2, 1]]}
    cfg = RunConfig.from_dict({"data": PROBLEMS[name].model_dump(), "model": {"init": init}, "replicas": reps})
    new, old = Trainer(cfg), OldTrainer(cfg)
    for key, p in old.params.items():
        assert torch.equal(new.params[key], p), key
