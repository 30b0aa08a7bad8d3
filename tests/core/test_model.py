"""The count-vector YZ model against independent computations (science §2.3–2.5, §6.12)."""

import numpy as np
import pytest
import torch

from scansnap.kinds.synthetic.science.model import (
    decoder_from_lemma3,
    effective_yz_standard,
    loss_and_grads_lemma3,
    loss_and_grads_yz,
    loss_yz,
)


@pytest.fixture(autouse=True)
def float64_default():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def random_case(R=3, B=5, M=12, NO=9, Q=2, seed=0, T=20):
    g = torch.Generator().manual_seed(seed)
    Y = torch.randn(R, M, NO, generator=g)
    Zq = torch.randn(R, Q, M, generator=g)
    x = torch.zeros(R, B, M)
    for r in range(R):
        for b in range(B):
            toks = torch.randint(0, M, (T - 1,), generator=g)
            x[r, b] = torch.bincount(toks, minlength=M).double()
    q = torch.randint(0, Q, (R, B), generator=g)
    y = torch.randint(0, NO, (R, B), generator=g)
    return Y, Zq, x, q, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_closed_form_gradients_equal_autograd_float64(seed):
    Y, Zq, x, q, y = random_case(seed=seed)
    loss, _, dY, dZ = loss_and_grads_yz(Y, Zq, x, q, y)
    Ya, Za = Y.clone().requires_grad_(), Zq.clone().requires_grad_()
    la = loss_yz(Ya, Za, x, q, y)
    gY, gZ = torch.autograd.grad(la.sum(), [Ya, Za])
    assert torch.allclose(loss, la, atol=1e-12, rtol=0)
    assert (dY - gY).abs().max() < 1e-10
    assert (dZ - gZ).abs().max() < 1e-10
    assert gZ.abs().max() > 1e-3  # the check is not vacuous


def explicit_sequence_loss(Y, z_row, seq, label):
    """Position by position (science §2.1/2.3): one-hot X over T−1 positions, b = softmax over
    positions of z_{x_T, x_t} (the query itself is not a key), s = X^T b, f = s/‖s‖, o = Y^T f."""
    M = Y.shape[0]
    X = torch.nn.functional.one_hot(seq, M).double()  # (T−1, M)
    a = X @ z_row
    b = torch.softmax(a, 0)
    s = X.T @ b
    f = s / s.norm()
    o = Y.T @ f
    return -torch.log_softmax(o, 0)[label]


def test_counts_equal_position_by_position_computation():
    g = torch.Generator().manual_seed(3)
    M, NO, Q, T, B = 10, 7, 2, 33, 6
    Y = torch.randn(1, M, NO, generator=g, requires_grad=True)
    Zq = torch.randn(1, Q, M, generator=g, requires_grad=True)
    seqs = torch.randint(0, M, (B, T - 1), generator=g)
    q = torch.randint(0, Q, (1, B), generator=g)
    y = torch.randint(0, NO, (1, B), generator=g)
    ref = torch.stack([explicit_sequence_loss(Y[0], Zq[0, q[0, b]], seqs[b], y[0, b]) for b in range(B)]).mean()
    gY_ref, gZ_ref = torch.autograd.grad(ref, [Y, Zq])
    x = torch.stack([torch.bincount(s, minlength=M) for s in seqs]).double().unsqueeze(0)
    loss, _, dY, dZ = loss_and_grads_yz(Y.detach(), Zq.detach(), x, q, y)
    assert abs(float(loss[0]) - float(ref.detach())) < 1e-12
    assert (dY - gY_ref).abs().max() < 1e-12
    assert (dZ - gZ_ref).abs().max() < 1e-12


def test_only_query_rows_of_z_receive_gradient():
    Y, Zq, x, q, y = random_case(Q=4)
    q[:] = 1
    _, _, _, dZ = loss_and_grads_yz(Y, Zq, x, q, y)
    assert dZ[:, [0, 2, 3]].abs().max() == 0
    assert dZ[:, 1].abs().max() > 0


def test_zero_decoder_gives_zero_attention_gradient():
    """At Y = 0 the back-propagated g = Y(α − e_n) vanishes, so the first Z update is 0 (science §6.1)."""
    Y, Zq, x, q, y = random_case()
    _, _, dY, dZ = loss_and_grads_yz(torch.zeros_like(Y), Zq, x, q, y)
    assert dZ.abs().max() == 0
    assert dY.abs().max() > 0


def test_lemma1_direction_matches_paper_formula():
    """ż_m = η_Z X^T diag(b) X (P⊥_{X^T b}/‖X^T b‖) Y(e_n − α) for one sample (Eqn. 4)."""
    Y, Zq, x, q, y = random_case(R=1, B=1)
    _, _, _, dZ = loss_and_grads_yz(Y, Zq, x, q, y)
    m = int(q[0, 0])
    z = Zq[0, m]
    xv = x[0, 0]
    s = xv * torch.exp(z) / (xv * torch.exp(z)).sum()
    Pperp = torch.eye(len(s)) - torch.outer(s, s) / (s @ s)
    alpha = torch.softmax(Y[0].T @ (s / s.norm()), 0)
    e = torch.zeros_like(alpha)
    e[y[0, 0]] = 1
    zdot = torch.diag(s) @ (Pperp / s.norm()) @ Y[0] @ (e - alpha)
    assert torch.allclose(-dZ[0, m], zdot, atol=1e-12)


def test_lemma3_decoder_reproduces_w_and_gradients():
    g = torch.Generator().manual_seed(5)
    R, K, M, NO, Q = 2, 3, 15, 8, 2
    P = torch.rand(K, M, generator=g) * (torch.rand(K, M, generator=g) > 0.3)
    P = P / P.sum(1, keepdim=True)
    psi = torch.tensor([0, 1, 1])
    Zq = torch.randn(R, Q, M, generator=g) * 0.3
    W = torch.randn(R, K, NO, generator=g)
    y = torch.tensor([5, 6, 7])
    loss, _, dW, dZ = loss_and_grads_lemma3(W, Zq, P, psi, y)
    c = torch.softmax(Zq[:, psi] + torch.log(P), -1)
    f = c / c.norm(dim=-1, keepdim=True)
    Y = decoder_from_lemma3(W, f)
    assert torch.allclose(torch.bmm(f, Y), W, atol=1e-10)  # F^T Y = W
    # With Y held fixed, the plain T=∞ gradient equals the Lemma-3 one.
    x = P.unsqueeze(0).expand(R, -1, -1)
    loss2, _, _, dZ2 = loss_and_grads_yz(Y, Zq, x, psi.expand(R, K), y.expand(R, K))
    assert torch.allclose(loss, loss2, atol=1e-10)
    assert torch.allclose(dZ, dZ2, atol=1e-10)
    Wa = W.clone().requires_grad_()
    la = -torch.log_softmax(Wa, -1)[:, torch.arange(K), y].mean(1)
    assert torch.allclose(torch.autograd.grad(la.sum(), Wa)[0], dW, atol=1e-12)


def test_standard_model_effective_yz():
    """Y = U W_V^T U^T and Z = U W_Q W_K^T U^T/√d, checked entrywise against the definitions."""
    g = torch.Generator().manual_seed(7)
    R, V, d = 1, 9, 4
    U = torch.randn(R, V, d, generator=g)
    WQ, WK, WV = (torch.randn(R, d, d, generator=g) for _ in range(3))
    ctx, query, out = torch.arange(5), torch.tensor([5, 6]), torch.arange(V)
    Y, Zq = effective_yz_standard(U, WQ, WK, WV, ctx, query, out)
    u = U[0]
    for i, m in enumerate(query):
        for l_ in ctx:
            assert torch.isclose(Zq[0, i, l_], u[m] @ WQ[0] @ WK[0].T @ u[l_] / np.sqrt(d))
    for k in ctx:
        for l_ in out:
            # logit_l = u_l^T W_V ũ with ũ = U^T f, i.e. o = Y^T f with Y[k, l] = u_l^T W_V u_k
            assert torch.isclose(Y[0, k, l_], u[l_] @ WV[0] @ u[k])


def test_engine_step_follows_the_dense_closed_form_gradient():
    """The trainer's step (class-grouped, decoder stored by token role, padding slots, per-query common tokens)
    moves Y and Zq along the dense count-vector gradient of :func:`loss_and_grads_yz`."""
    from scansnap.kinds.synthetic.science.config import DataConfig
    from scansnap.kinds.synthetic.science.data import ContextSampler, build_problem
    from tests.core.stepgrad import engine_gradients

    data = dict(num_last=2, num_next_per_last=2, num_common=3, num_common_per_last=1, num_distinct_per_next=4)
    pb = build_problem(DataConfig(**data))
    g = torch.Generator().manual_seed(11)
    Y = torch.randn(pb.M_ctx, pb.M_out, generator=g)
    Zq = torch.randn(pb.Q, pb.M_ctx, generator=g)
    cls, counts = ContextSampler(pb, 16, seed=3).sample(9)
    loss, dY, dZ = engine_gradients(data, Y.numpy(), Zq.numpy(), cls, counts)
    x = torch.as_tensor(pb.dense_counts(cls, counts))[None]
    psi, labels, c = torch.as_tensor(pb.psi), torch.as_tensor(pb.label_ids), torch.as_tensor(cls)
    ref = loss_and_grads_yz(Y[None], Zq[None], x, psi[c][None], labels[c][None])
    assert loss == pytest.approx(float(ref[0][0]), abs=1e-12)
    np.testing.assert_allclose(dY, ref[2][0].numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(dZ, ref[3][0].numpy(), rtol=0, atol=1e-12)
    assert np.abs(dZ).max() > 1e-3


def test_the_gram_solve_gives_the_same_bits_every_call_and_solves_exactly():
    """solve_gram(G, B) = G⁻¹B for G = FᵀF: the same bits on every call whatever the heap holds (torch's
    default CPU lstsq, gelsy, gave two different answers in 300 such calls here), and equal to numpy's float64
    solve to 1e-12."""
    from scansnap.kinds.synthetic.science.model import solve_gram

    gen = torch.Generator().manual_seed(0)
    f = torch.rand(3, 4, 21, dtype=torch.float64, generator=gen)
    G, B = torch.bmm(f, f.transpose(1, 2)), torch.rand(3, 4, 5, dtype=torch.float64, generator=gen)
    answers = set()
    for i in range(300):
        junk = torch.rand(64 + i % 7, dtype=torch.float64, generator=gen) * 1e3  # other numbers where it allocates
        answers.add(solve_gram(G, B).numpy().tobytes())
        del junk
    assert len(answers) == 1
    np.testing.assert_allclose(solve_gram(G, B).numpy(), np.linalg.solve(G.numpy(), B.numpy()), rtol=1e-12)
