"""Independent float64 numpy cross-checks of the engine against the spec (science §1–§7).

Everything below recomputes a quantity from its definition in the spec with numpy written here,
not with the engine's code paths, and compares.  The last three pin defects found in review.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scansnap.kinds.synthetic.science import theory as th
from scansnap.kinds.synthetic.science.config import DataConfig, RunConfig
from scansnap.kinds.synthetic.science.data import KIND_COMMON, KIND_DISTINCT, KIND_NONE, ContextSampler, build_problem
from scansnap.kinds.synthetic.science.model import loss_and_grads_lemma3
from scansnap.kinds.synthetic.science.optim import ReplicaOptimizer
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.paper import verdicts as vd
from tests.core.stepgrad import engine_gradients

# ============================================================================ numpy helpers


def softmax(a: np.ndarray, axis: int = -1) -> np.ndarray:
    a = a - a.max(axis=axis, keepdims=True)
    e = np.exp(a)
    return e / e.sum(axis=axis, keepdims=True)


def dataset2(num_last, num_next_per_last, num_common, num_common_per_last, num_unique, lo=0.1, hi=1.0):
    """Dataset2.__init__ of decoder_only.py, re-typed: (P over M_code ids, query id, next id, M_code)."""
    K = num_last * num_next_per_last
    cpl_off = num_common
    uniq_off = cpl_off + num_common_per_last * num_last
    last_off = uniq_off + num_unique * K
    next_off = last_off + num_last
    M = next_off + K
    P, q, y = np.zeros((K, M)), [], []
    idx = 0
    for m in range(num_last):
        c0 = cpl_off + m * num_common_per_last
        for _ in range(num_next_per_last):
            u0 = uniq_off + num_unique * idx
            toks = [*range(num_common), *range(c0, c0 + num_common_per_last), *range(u0, u0 + num_unique)]
            w = np.concatenate([np.ones(num_common + num_common_per_last), np.linspace(lo, hi, num_unique)])
            P[idx, toks] = w / w.sum()
            q.append(last_off + m)
            y.append(next_off + idx)
            idx += 1
    return P, np.array(q), np.array(y), M


def c_tilde_f(Zrows: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """c̃ = P e^z, c = c̃/Σc̃, f = c̃/‖c̃‖ (science §2.5), rows over the last axis."""
    ct = P * np.exp(Zrows - Zrows.max(-1, keepdims=True))
    return ct, ct / ct.sum(-1, keepdims=True), ct / np.linalg.norm(ct, axis=-1, keepdims=True)


def ent(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(-1)


def own_h(s: np.ndarray, M: float, eta_y: float) -> np.ndarray:
    """Eqn. 45 by bisection: e^{Mh} + (M−1)Mh = Mη_Y s + 1, written as expm1(x) + (M−1)x = Mη_Y s, x = Mh."""
    s = np.atleast_1d(np.asarray(s, dtype=np.float64))
    c = M * eta_y * s
    lo, hi = np.zeros_like(s), np.log1p(c) + 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        g = np.expm1(mid) + (M - 1) * mid - c
        lo, hi = np.where(g < 0, mid, lo), np.where(g < 0, hi, mid)
    return 0.5 * (lo + hi) / M


def own_B(t, M, K, eta_y, eta_z, C0=1.0):
    """Eqn. 129: B = ¼ ln(C_0 + 2(η_Z/η_Y) K (M−1)² h(t/K)²)."""
    h = own_h(np.asarray(t, dtype=np.float64) / K, M, eta_y)
    return 0.25 * np.log(C0 + 2 * (eta_z / eta_y) * K * (M - 1) ** 2 * h**2)


# ============================================================================ data (§1.2–1.3)


@pytest.mark.parametrize(
    "args",
    [(2, 1, 10, 0, 10), (1, 2, 10, 0, 10), (3, 2, 10, 0, 10), (10, 2, 10, 0, 10), (3, 2, 4, 2, 5), (2, 3, 0, 1, 3)],
)
def test_generator_equals_retyped_dataset2(args):
    num_last, per, n_c, n_cpl, n_u = args
    P, q, y, M = dataset2(*args)
    pb = build_problem(
        DataConfig(
            num_last=num_last,
            num_next_per_last=per,
            num_common=n_c,
            num_common_per_last=n_cpl,
            num_distinct_per_next=n_u,
        )
    )
    assert pb.M == M == pb.M_out
    np.testing.assert_allclose(pb.P, P[:, : pb.M_ctx], rtol=0, atol=1e-15)
    assert (P[:, pb.M_ctx :] == 0).all()  # query and next tokens are never contextual
    np.testing.assert_array_equal(pb.query_of_class_id, q)
    np.testing.assert_array_equal(pb.label_ids, y)
    if args == (2, 1, 10, 0, 10):  # Syn-Small's numbers, science §1.3
        assert M == 34
        np.testing.assert_allclose(P[0, :10], 1 / 15.5)
        np.testing.assert_allclose(P[1, 20:30], 0.1 * np.arange(1, 11) / 15.5)


def test_token_kinds_use_the_global_omega():
    """Ω(l) = {n : P(l|n) > 0} over all n (science §1.2).  With one next token per query, a
    per-query 'common' token has |Ω(l)| = 1 and is therefore *distinct*."""
    for cfg in (
        DataConfig(num_last=2, num_next_per_last=1, num_common=3, num_common_per_last=2),
        DataConfig(num_last=3, num_next_per_last=2, num_common=0, num_common_per_last=1),
        DataConfig(source="table", table=((1, 1, 0, 2, 0), (1, 0, 3, 0, 0), (0, 0, 0, 5, 1)), psi=(0, 1, 1)),
    ):
        pb = build_problem(cfg)
        omega = (pb.P > 0).sum(0)
        want = np.where(pb.P > 0, np.where(omega[None] > 1, KIND_COMMON, KIND_DISTINCT), KIND_NONE)
        np.testing.assert_array_equal(pb.token_kind, want)
    pb = build_problem(DataConfig(num_last=2, num_next_per_last=1, num_common=3, num_common_per_last=2))
    assert (pb.token_kind[0, 3:5] == KIND_DISTINCT).all() and (pb.token_kind[1, 5:7] == KIND_DISTINCT).all()


def test_inverse_cdf_branch_with_unequal_supports():
    """The draws+bincount branch (T−1 ≤ s/4) with padded support rows: exact multinomial law.
    Class 0 has 48 tokens (non-uniform), class 1 only 3, so class 1's row is padded."""
    rng = np.random.default_rng(0)
    w0 = np.concatenate([rng.random(48) + 0.05, np.zeros(3)])
    w1 = np.concatenate([np.zeros(48), [1.0, 3.0, 6.0]])
    cfg = DataConfig(source="table", table=(tuple(w0), tuple(w1)), psi=(0, 1), T=9)
    pb = build_problem(cfg)
    sm = ContextSampler(pb, 9, seed=5)
    assert sm.n_draws * 4 <= sm.M  # the branch under test
    cls, xs = sm.sample(20000)
    x = pb.dense_counts(cls, xs)
    assert (x.sum(1) == 8).all() and (x[pb.P[cls] == 0] == 0).all()
    for n in range(2):
        rows = x[cls == n]
        p = pb.P[n]
        # Pearson χ² of the pooled token frequencies (df = |supp| − 1): mean df, sd √(2 df)
        obs, exp = rows.sum(0), 8 * len(rows) * p
        sup = p > 0
        chi2 = float((((obs - exp) ** 2)[sup] / exp[sup]).sum())
        df = int(sup.sum()) - 1
        assert chi2 < df + 6 * math.sqrt(2 * df), (n, chi2, df)
        # the marginal of the largest-P token is Binomial(8, p): variance 8p(1−p).  A sample variance over N
        # rows has a relative SE √((2 + κ)/N), κ = (1 − 6p(1−p))/(8p(1−p)) the excess kurtosis: 0.022 for
        # class 0 (p ≈ 0.04), 0.013 for class 1 (p = 0.6), N ≈ 10⁴ each, so 8 % is 3.7 and 6 SEs
        j = int(np.argmax(p))
        assert rows[:, j].var() == pytest.approx(8 * p[j] * (1 - p[j]), rel=0.08)


# ============================================================================ model (§2.3–2.5, Lemma 1)


def seq_loss(Y, Zq, seqs, qrow, lab):
    """Mean cross-entropy, position by position: b = softmax over the T−1 keys of z_{x_T, x_t}."""
    tot = 0.0
    for s, qi, n in zip(seqs, qrow, lab, strict=True):
        b = softmax(Zq[qi, s])
        c = np.zeros(Zq.shape[1])
        np.add.at(c, s, b)
        f = c / np.linalg.norm(c)
        o = f @ Y
        tot += -(o[n] - o.max() - np.log(np.exp(o - o.max()).sum()))
    return tot / len(seqs)


def test_step_gradients_equal_numpy_finite_differences():
    """The engine's step direction (one SGD step with η = 1: decoder by token role, class slots with padding)
    vs central finite differences of a numpy position-by-position forward pass (2 queries × 2 next tokens,
    per-query common tokens)."""
    data = dict(num_last=2, num_next_per_last=2, num_common=2, num_common_per_last=1, num_distinct_per_next=3)
    pb = build_problem(DataConfig(**data))
    ids, probs = pb.support
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(pb.M_ctx, pb.M_out))
    Zq = rng.normal(size=(pb.Q, pb.M_ctx))
    T = 8
    cls = np.array([0, 1, 1, 2, 3, 3])
    seqs = [rng.choice(ids[n], size=T - 1, p=probs[n]) for n in cls]
    qrow, lab = pb.psi[cls], pb.label_ids[cls]
    counts = np.array([[np.sum(seq == tok) for tok in ids[n]] for seq, n in zip(seqs, cls, strict=True)], float)
    loss, dY, dZ = engine_gradients(data, Y.copy(), Zq.copy(), cls, counts)
    dY, dZ = dY[None], dZ[None]
    loss = np.array([loss])
    assert float(loss[0]) == pytest.approx(seq_loss(Y, Zq, seqs, qrow, lab), abs=1e-12)
    eps = 1e-6
    for P_, grad in ((Y, dY[0]), (Zq, dZ[0])):
        fd = np.zeros_like(P_)
        for i in np.ndindex(P_.shape):
            old = P_[i]
            P_[i] = old + eps
            up = seq_loss(Y, Zq, seqs, qrow, lab)
            P_[i] = old - eps
            dn = seq_loss(Y, Zq, seqs, qrow, lab)
            P_[i] = old
            fd[i] = (up - dn) / (2 * eps)
        assert np.abs(fd - grad).max() < 1e-8, np.abs(fd - grad).max()
        assert np.abs(grad).max() > 1e-3


def test_lemma3_attention_gradient_is_f_squared_times_a_class_factor():
    """Lemma 3 + Eqn. 10, numpy: Y = F(FᵀF)⁻¹W, g_n = Y(α_n − e_n)/K, ż = c∘P⊥_f g/‖c‖.  For a
    distinct l of n, ż_{ml}/f_{nl}² is the same for all l (Eqn. 98) — the basis of B̂_n."""
    pb = build_problem(DataConfig(num_last=2, num_next_per_last=2, num_common=3, num_distinct_per_next=6))
    rng = np.random.default_rng(2)
    K, n_out = pb.K, pb.M_out
    Zq = 0.5 * rng.normal(size=(pb.Q, pb.M_ctx))
    W = rng.normal(size=(K, n_out))
    _, c, f = c_tilde_f(Zq[pb.psi], pb.P)
    F = f.T
    Yd = F @ np.linalg.solve(F.T @ F, W)
    zdot = np.zeros_like(Zq)
    for n in range(K):
        alpha = softmax(f[n] @ Yd)
        e = np.zeros(n_out)
        e[pb.label_ids[n]] = 1
        g = Yd @ (alpha - e) / K
        zdot[pb.psi[n]] += c[n] * (g - f[n] * (f[n] @ g)) / np.linalg.norm(c[n])
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)
    _, _, _, dZ = loss_and_grads_lemma3(
        t(W)[None], t(Zq)[None], t(pb.P), torch.as_tensor(pb.psi), torch.as_tensor(pb.label_ids)
    )
    np.testing.assert_allclose(dZ[0].numpy(), zdot, rtol=0, atol=1e-12)
    for n in range(K):
        d = pb.distinct_mask[n]
        ratio = zdot[pb.psi[n]][d] / f[n][d] ** 2
        assert np.ptp(ratio) < 1e-10 * np.abs(ratio).max()


# ============================================================================ optimiser (§2.8)


def test_optimisers_with_a_constant_gradient_have_closed_forms():
    """SGD(momentum μ): after k steps p = p0 − η g Σ_{i≤k}(1−μ^i)/(1−μ) (torch: buf = g at step 1).
    Adam: m̂ = g, v̂ = g², so every step is η g/(|g| + ε)."""
    from scansnap.kinds.synthetic.science.config import OptimConfig

    lr = torch.tensor([0.3, 2.0], dtype=torch.float64)
    g = torch.tensor([[1.5, -0.25], [0.5, 4.0]], dtype=torch.float64)
    k = 7
    for mu in (0.0, 0.9):
        p = torch.zeros(2, 2, dtype=torch.float64)
        opt = ReplicaOptimizer(OptimConfig(method="sgd", momentum=mu), lr.clone())
        for _ in range(k):
            opt.step(p, g)
        factor = sum(sum(mu**j for j in range(i)) for i in range(1, k + 1))
        np.testing.assert_allclose(p.numpy(), -(lr[:, None] * g).numpy() * factor, rtol=1e-13)
    p = torch.zeros(2, 2, dtype=torch.float64)
    opt = ReplicaOptimizer(OptimConfig(method="adam", eps=1e-8), lr.clone())
    for _ in range(k):
        opt.step(p, g)
    np.testing.assert_allclose(p.numpy(), -k * (lr[:, None] * g / (g.abs() + 1e-8)).numpy(), rtol=1e-9)


# ============================================================================ metrics (§3, §4)


def test_zero_init_reference_values_closed_form():
    """At z = 0: q_k = k/55 on the distinct block, H = ln 55 − Σ k ln k/55 = 2.1512 nats, and the
    common mass is 10/15.5 = 0.645 (science §3, §6.5)."""
    k = np.arange(1, 11)
    H = math.log(55) - float((k * np.log(k)).sum()) / 55
    assert round(H, 3) == 2.151
    for over in ({}, {"data.num_last": 3, "data.num_next_per_last": 2, "model.init": "zero"}):
        cfg = RunConfig.from_dict({"model": {"dtype": "float64"}}).with_overrides(over)
        s = Trainer(cfg).snapshot().scalars
        np.testing.assert_allclose(s["entropy_distinct"], H, rtol=0, atol=1e-12)
        np.testing.assert_allclose(s["common_mass"], 10 / 15.5, rtol=0, atol=1e-12)
        P = build_problem(cfg.data).P
        np.testing.assert_allclose(s["entropy_all"][0], ent(P), rtol=0, atol=1e-12)


def test_snapshot_metrics_and_B_hat_against_numpy():
    """Every per-class metric of a snapshot, recomputed from the raw Z trajectory with numpy:
    c_n, H_n on G_DT(n), common mass, Δz_{l0}, r_{l0/l1}, r(0)e^{2Δz}, the bracket's lower end,
    the shares, and B̂_n = Σ_steps Σ_{l∈DT} Δz_{ml} / Σ_{l∈DT} f_{nl}² (the engine's pooled form)."""
    cfg = RunConfig.from_dict(
        {
            "data": {"num_last": 3, "num_next_per_last": 2, "num_common_per_last": 1, "T": 64},
            "model": {"init": "torch-default", "dtype": "float64"},
            "optim": {"batch": 32, "steps": 6},
            "replicas": {"seeds": [1, 2], "lr_pairs": [[1.0, 1.0], [5.0, 0.5]]},
        }
    )
    tr = Trainer(cfg)
    pb = tr.problem
    D, C = pb.distinct_mask, pb.common_mask
    Z0 = tr.params["Zq"].numpy().copy()
    ct0, _, f0 = c_tilde_f(Z0[:, pb.psi], pb.P)
    score = np.where(D, ct0, -np.inf)
    order = np.argsort(-score, axis=-1)
    l0, l1 = order[..., 0], order[..., 1]
    B = np.zeros((tr.R, pb.K))
    Z = Z0
    for _ in range(cfg.optim.steps):
        f = c_tilde_f(Z[:, pb.psi], pb.P)[2]
        tr.step()
        Zn = tr.params["Zq"].numpy().copy()
        dz = (Zn - Z)[:, pb.psi]
        B += (dz * D).sum(-1) / (f**2 * D).sum(-1)
        Z = Zn
    s = tr.snapshot().scalars
    _, c, f = c_tilde_f(Z[:, pb.psi], pb.P)
    q = np.where(D, c, 0)
    q = q / q.sum(-1, keepdims=True)
    dz_all = (Z - Z0)[:, pb.psi]
    take = lambda a, i: np.take_along_axis(a, i[..., None], -1)[..., 0]
    dz0 = take(dz_all, l0)
    r0 = (take(f0, l0) / take(f0, l1)) ** 2 - 1
    want = {
        "entropy_distinct": ent(q),
        "entropy_all": ent(c),
        "common_mass": (c * C).sum(-1),
        "B_hat": B,
        "dz_dominant": dz0,
        "bracket_lo": take(f0, l0) ** 2 * B,
        "rel_gain": (take(f, l0) / take(f, l1)) ** 2 - 1,
        "rel_gain_pred": r0 * np.exp(2 * dz0),
        "share_distinct_up": ((dz_all > 0) & D).sum(-1) / D.sum(-1),
        "share_common_down": ((dz_all < 0) & C).sum(-1) / C.sum(-1),
    }
    for name, v in want.items():
        np.testing.assert_allclose(s[name], v, rtol=1e-10, atol=1e-12, err_msg=name)
    assert np.abs(dz0).min() > 1e-4 and np.abs(B).min() > 1e-4  # things moved


def _per_token_B(decoder: str, momentum: float, steps: int = 120):
    cfg = RunConfig.from_dict(
        {
            "data": {"num_last": 1, "num_next_per_last": 2, "T": "inf"},
            "model": {"kind": "yz-meanfield", "meanfield_decoder": decoder, "init": "zero", "dtype": "float64"},
            "optim": {"momentum": momentum, "steps": steps},
        }
    )
    tr = Trainer(cfg)
    pb = tr.problem
    D = pb.distinct_mask
    per = np.zeros((pb.K, pb.M_ctx))
    Z = tr.params["Zq"].numpy()[0].copy()
    for _ in range(steps):
        f = c_tilde_f(Z[pb.psi], pb.P)[2]
        tr.step()
        Zn = tr.params["Zq"].numpy()[0].copy()
        per += np.where(D, (Zn - Z)[pb.psi] / np.where(D, f, 1.0) ** 2, 0.0)
        Z = Zn
    return [per[n][D[n]] for n in range(pb.K)], tr.B_hat.numpy()[0]


def test_B_hat_equals_the_per_token_estimator_of_every_distinct_token_in_mean_field():
    """science §4: B̂_n = Σ Δz_{ml}/f_{nl}² for ANY distinct l, all equal — exact in the T→∞
    model with the Lemma-3 decoder and plain gradient steps; the engine's pooled ratio equals it."""
    per, B = _per_token_B("lemma3", 0.0)
    for n, v in enumerate(per):
        np.testing.assert_allclose(v, B[n], rtol=1e-9)
        assert B[n] > 1.0


def test_per_token_estimators_disagree_outside_the_exact_regime():
    """With the plain decoder (g ∉ span F) or with momentum, Σ Δz_l/f_l² depends on l, so the
    spec's 'any l' estimator is not defined there; the engine's pooled value lies inside their range."""
    for decoder, mom in (("plain", 0.0), ("lemma3", 0.9)):
        per, B = _per_token_B(decoder, mom, steps=60)
        for n, v in enumerate(per):
            assert np.ptp(v) > 0.1 * np.abs(v).max(), (decoder, mom)
            assert v.min() <= B[n] <= v.max()


def test_torch_default_init_is_uniform_with_bound_one_over_sqrt_M_code():
    """Syn-Medium (science §1.3): nn.Linear(M, M) default init, U(−1/√M, 1/√M), M = M_code = 79 for 3 queries."""
    from scipy.stats import kstest

    cfg = RunConfig.from_dict(
        {
            "data": {"num_last": 3, "num_next_per_last": 2},
            "model": {"init": "torch-default"},
            "replicas": {"seeds": list(range(1, 41))},
        }
    )
    tr = Trainer(cfg)
    num_last, K = 3, 6
    M_code = 10 + 10 * K + num_last + K  # common + distinct + queries + next tokens = 79
    bound = 1 / math.sqrt(M_code)
    for name in ("Zq", "Y"):
        v = tr.params[name].double().numpy().ravel()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.999 * bound
        # a uniform's sd is its half-width/√3.  The sample sd's relative SE is √((2 + κ)/(4N)) with κ = −1.2:
        # 0.0049 for Zq (N = 8400), 0.00095 for Y (N = 221 200), so 1 % is 2 and 10 SEs (the seeds are fixed)
        assert v.std() == pytest.approx(bound / math.sqrt(3), rel=0.01)
        assert kstest(v, "uniform", args=(-bound, 2 * bound)).pvalue > 1e-3  # a 0.1 % significance level


# ============================================================================ theory (§2.6, §4, §5)


@pytest.mark.parametrize(("M", "K", "eta_y"), [(34, 2, 10.0), (1e4, 1, 1.0), (100, 3, 0.3)])
def test_h_gamma_Gamma_against_own_bisection_and_numeric_derivative(M, K, eta_y):
    eta_z = 0.7
    t = np.geomspace(1e-3, 1e6, 40) * K / eta_y
    h = own_h(t / K, M, eta_y)
    np.testing.assert_allclose(th.solve_h(t / K, M, eta_y), h, rtol=1e-12)
    gam = (M - 1) ** 2 * h / ((M - 1) + np.exp(M * h))  # Eqn. 85
    np.testing.assert_allclose(th.gamma(t, M, K, eta_y), gam, rtol=1e-11)
    # Eqn. 128 really is η_Z ∫γ: dΓ/dt = η_Z γ (central differences), and Γ(0) = 0
    d = 1e-5 * t
    dG = (th.Gamma(t + d, M, K, eta_y, eta_z) - th.Gamma(t - d, M, K, eta_y, eta_z)) / (2 * d)
    np.testing.assert_allclose(dG, eta_z * gam, rtol=1e-6)
    assert th.Gamma(0.0, M, K, eta_y, eta_z) == 0.0
    # Thm 4: B = ¼ ln(C_0 + 4Γ) solves Ḃ = η_Z ξ with ξ = γ/(C_0 + 4Γ)
    C0 = 2.5
    Bt = lambda u: th.B_exact(u, M, K, eta_y, eta_z, C0, zero_offset=True)  # log1p form: no cancellation
    dB = (Bt(t + d) - Bt(t - d)) / (2 * d)
    np.testing.assert_allclose(dB, eta_z * gam / (C0 + 4 * th.Gamma(t, M, K, eta_y, eta_z)), rtol=1e-6)


def test_gamma_late_phase_of_theorem_1b():
    """γ(t) ≈ K ln(Mη_Y t/K)/(η_Y t) for t ≫ t_0: the ratio tends to (M−1)²/M² from above."""
    M, K, ey = 1e4, 2.0, 0.5
    t = np.array([10, 1e2, 1e3, 1e5, 1e9]) * th.t0(M, K, ey)
    ratio = th.gamma(t, M, K, ey) * ey * t / (K * np.log(M * ey * t / K))
    gap = ratio - (M - 1) ** 2 / M**2
    assert np.all(gap > 0) and np.all(np.diff(gap) < 0) and gap[-1] < 1e-6 and abs(ratio[2] - 1) < 2e-3
    # early phase (Lemma 9): γ ≈ η_Y t/K for t ≪ t'_0
    t = np.array([1e-4, 1e-3]) * th.t0_prime(M, K, ey)
    np.testing.assert_allclose(th.gamma(t, M, K, ey), ey * t / K, rtol=1e-3)


@pytest.mark.parametrize(
    ("nu", "M", "t_end", "b_t0", "b_end"), [(10.0, 100, 5.0, 0.51, 0.78), (1.0, 1e4, 50.0, 1.38, 1.53)]
)
def test_fig9_numbers_from_own_bisection(nu, M, t_end, b_t0, b_end):
    """science §5 Fig. 9 with K = 1, C_0 = 1, t_0 = 2K ln M/η_Y — from numpy only, then the engine."""
    vals = []
    for ez in (0.5, 1, 2, 4, 8):
        ey = nu * ez
        t0 = 2 * math.log(M) / ey
        assert th.t0(M, 1, ey) == pytest.approx(t0, rel=1e-14)
        assert th.t0_prime(M, 1, ey) == pytest.approx(t0 / 2, rel=1e-14)
        vals.append(float(own_B(t0, M, 1, ey, ez)[0]))
        tt = np.linspace(0, t_end, 9)
        np.testing.assert_allclose(th.B_exact(tt, M, 1, ey, ez), own_B(tt, M, 1, ey, ez), rtol=1e-11, atol=1e-14)
    assert np.ptp(vals) < 1e-12
    assert vals[0] == pytest.approx(b_t0, abs=0.005)
    assert float(own_B(t_end, M, 1, nu * 8, 8)[0]) == pytest.approx(b_end, abs=0.005)


def test_regime_forms_and_B_at_t0_typed_from_the_spec():
    M, K, ey, ez, C0 = 500.0, 3.0, 2.0, 0.5, 1.7
    t = np.array([0.1, 1.0, 30.0, 4e3])
    scan = 0.25 * np.log(C0 + 2 * (M - 1) ** 2 / (K * M**2) * ey * ez * t**2)
    snap = 0.25 * np.log(C0 + 2 * K * (M - 1) ** 2 / M**2 * (ez / ey) * np.log(M * ey * t / K) ** 2)
    np.testing.assert_allclose(th.B_scan(t, M, K, ey, ez, C0), scan, rtol=1e-13)
    np.testing.assert_allclose(th.B_snap(t, M, K, ey, ez, C0), snap, rtol=1e-13)
    w1 = math.log(math.log(M)) / math.log(M)
    nu = ey / ez
    b_t0 = 0.25 * math.log(C0 + 2 * K * (M - 1) ** 2 / M**2 / nu * math.log(2 * (1 + w1) * M * math.log(M)) ** 2)
    assert th.B_at_t0(M, K, nu, C0) == pytest.approx(b_t0, rel=1e-13)
    np.testing.assert_allclose(
        th.B_exact(t, M, K, ey, ez, C0, zero_offset=True), own_B(t, M, K, ey, ez, C0) - 0.25 * math.log(C0), rtol=1e-10
    )


def test_joma_simulate_equals_own_euler_loop():
    mu = np.array([1.2, 1.9, 2.5, 3.1, 3.8])
    for nonlinear in (True, False):
        v = np.full(5, 0.05)
        H, V = [], []
        for _ in range(800):
            p = softmax(v**2 / 3.0)
            H.append(ent(p))
            V.append(v.copy())
            v = v + 0.02 * ((mu - v) if nonlinear else mu) * p
        r = th.joma_simulate(mu, iters=800, nonlinear=nonlinear)
        np.testing.assert_allclose(r["v"], np.array(V), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(r["entropy"], np.array(H), rtol=1e-12, atol=1e-14)


# ============================================================================ views (§2.8, §4 recipe)


# ============================================================================ defects found in review, fixed


def test_converges_faster_when_only_the_fast_run_converges():
    assert vd.converges_faster("fig4", [0, 2, 4, 6], [3, 0.5, 0.001, 0], [3, 2, 1, 0.5]).passed


def test_standard_model_compact_layout_uses_next_token_embeddings():
    cfg = RunConfig.from_dict(
        {
            "data": {"layout": "compact"},
            "model": {"kind": "standard", "init": "torch-default", "d": 16, "dtype": "float64"},
        }
    )
    tr = Trainer(cfg)
    pb = tr.problem
    U, WV = tr.params["U"][0].numpy(), tr.params["WV"][0].numpy()
    Y = tr.yz()[0][0].numpy()
    next_ids = pb.M_ctx + pb.Q + np.arange(pb.K)  # the next tokens' vocabulary ids
    want = U[: pb.M_ctx] @ WV.T @ U[next_ids].T  # Y[k, n] = u_n^T W_V u_k
    np.testing.assert_allclose(Y, want, atol=1e-12)


def test_lemma3_random_init_starts_from_the_plain_models_Y0():
    base = {
        "data": {"num_last": 1, "num_next_per_last": 2, "T": "inf"},
        "model": {"kind": "yz-meanfield", "init": "torch-default", "dtype": "float64"},
    }
    plain = Trainer(RunConfig.from_dict(base))
    lem = Trainer(RunConfig.from_dict({**base, "model": {**base["model"], "meanfield_decoder": "lemma3"}}))
    np.testing.assert_array_equal(lem.params["Zq"].numpy(), plain.params["Zq"].numpy())
    f0 = c_tilde_f(plain.params["Zq"].numpy()[0][plain.problem.psi], plain.problem.P)[2]
    np.testing.assert_allclose(lem.params["W"][0].numpy(), f0 @ plain.params["Y"][0].numpy(), atol=1e-12)
