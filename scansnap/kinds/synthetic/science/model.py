"""The YZ model on context histograms, with closed-form gradients (science §2.3–2.5).

Shapes: R replicas, B samples, M = M_ctx contextual tokens, O = decoder outputs, Q queries.
Y: (R, M, O) decoder; Zq: (R, Q, M) the query rows of Z (only rows of query tokens ever
change, Lemma 1, so only those are stored); x: (R, B, M) context counts (or P(·|n) for T=∞).

Forward (per sample, query m, label n):
    s = X^T b = softmax(z_m + ln x)           (attention mass per token id, query masked)
    f = s/‖s‖₂,  o = Y^T f,  α = softmax(o),  loss = −ln α_n   (mean over the batch)
"""

from __future__ import annotations

import math

import torch


def attention_mass(z_rows: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """s_l = x_l e^{z_ml} / Σ_l' x_l' e^{z_ml'}  (= X^T b for a context with counts x)."""
    return torch.softmax(z_rows + torch.log(x), dim=-1)


def loss_yz(Y: torch.Tensor, Zq: torch.Tensor, x: torch.Tensor, q: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-replica mean cross-entropy (R,), differentiable (used for autograd paths and tests).

    q: (R, B) query index of each sample; y: (R, B) label index in [0, O)."""
    z_rows = torch.gather(Zq, 1, q.unsqueeze(-1).expand(-1, -1, Zq.shape[-1]))  # (R, B, M)
    s = attention_mass(z_rows, x)
    f = s / s.norm(dim=-1, keepdim=True)
    o = torch.bmm(f, Y)  # (R, B, O)
    logp = torch.log_softmax(o, dim=-1)
    return -torch.gather(logp, 2, y.unsqueeze(-1)).squeeze(-1).mean(1)


def loss_and_grads_yz(
    Y: torch.Tensor, Zq: torch.Tensor, x: torch.Tensor, q: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Closed-form gradients of the mean cross-entropy (Lemma 1, Eqns. 3–4), minus sign included.

        ∂L/∂Y   = (1/B) Σ_b f (α − e_n)^T
        ∂L/∂z_m = (1/B) Σ_{b: x_T=m} s ∘ [P^⊥_f Y(α − e_n)] / ‖s‖
    (diag(s) = X^T diag(b) X for one-hot rows, and s^T P^⊥_f = 0 removes the softmax's
    −s s^T term).  Returns (loss (R,), accuracy (R,), dY, dZq).
    """
    _, B, M = x.shape
    z_rows = torch.gather(Zq, 1, q.unsqueeze(-1).expand(-1, -1, M))
    s = attention_mass(z_rows, x)
    norm = s.norm(dim=-1, keepdim=True)
    f = s / norm
    o = torch.bmm(f, Y)  # (R, B, O)
    logp = torch.log_softmax(o, dim=-1)
    loss = -torch.gather(logp, 2, y.unsqueeze(-1)).squeeze(-1).mean(1)
    acc = (o.argmax(-1) == y).to(o.dtype).mean(1)
    delta = logp.exp()
    delta.scatter_add_(2, y.unsqueeze(-1), torch.full_like(y, -1, dtype=o.dtype).unsqueeze(-1))
    delta /= B  # (α − e_n)/B
    dY = torch.bmm(f.transpose(1, 2), delta)  # (R, M, O)
    g = torch.bmm(delta, Y.transpose(1, 2))  # Y(α − e_n)/B : (R, B, M)
    u = (g - f * (f * g).sum(-1, keepdim=True)) / norm
    dz_rows = s * u
    dZq = torch.zeros_like(Zq).scatter_add_(1, q.unsqueeze(-1).expand(-1, -1, M), dz_rows)
    return loss, acc, dY, dZq


def loss_and_grads_lemma3(
    W: torch.Tensor, Zq: torch.Tensor, P: torch.Tensor, psi: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """T→∞ expected dynamics with the decoder kept in span(F) (Lemma 3 + Eqn. 10).

    The decoder is W = F^T Y (R, K, O), so o_n = w_n, and Y = F (F^T F)^{-1} W.  The
    back-propagated gradient g_n = Y(α_n − e_n) then lies in span(F), which makes
    ż_{ml} = η_Z f_{nl}² ξ_n exact for distinct tokens (Theorem 3's identity).
    Classes are weighted uniformly (1/K).  Returns (loss, accuracy, dW, dZq).
    """
    R, K, _ = W.shape
    M = P.shape[-1]
    Pb = P.unsqueeze(0).expand(R, -1, -1)
    qb = psi.unsqueeze(0).expand(R, -1)
    z_rows = torch.gather(Zq, 1, qb.unsqueeze(-1).expand(-1, -1, M))
    s = attention_mass(z_rows, Pb)  # c_n : (R, K, M)
    norm = s.norm(dim=-1, keepdim=True)
    f = s / norm
    logp = torch.log_softmax(W, dim=-1)
    yb = y.unsqueeze(0).expand(R, -1)
    loss = -torch.gather(logp, 2, yb.unsqueeze(-1)).squeeze(-1).mean(1)
    acc = (W.argmax(-1) == yb).to(W.dtype).mean(1)
    delta = logp.exp()
    delta.scatter_add_(2, yb.unsqueeze(-1), torch.full_like(yb, -1, dtype=W.dtype).unsqueeze(-1))
    delta /= K
    G = torch.bmm(f, f.transpose(1, 2))  # F^T F : (R, K, K)
    C = solve_gram(G, torch.bmm(W, delta.transpose(1, 2)))  # (F^TF)^{-1} W D^T
    g = torch.bmm(C.transpose(1, 2), f)  # row n: Σ_n' C[n', n] f_n' = Y(α_n − e_n)/K : (R, K, M)
    u = (g - f * (f * g).sum(-1, keepdim=True)) / norm
    dZq = torch.zeros_like(Zq).scatter_add_(1, qb.unsqueeze(-1).expand(-1, -1, M), s * u)
    return loss, acc, delta, dZq


def decoder_from_lemma3(W: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """Y = F (F^T F)^{-1} W, the minimum-norm decoder with F^T Y = W.  f: (R, K, M)."""
    G = torch.bmm(f, f.transpose(1, 2))
    return torch.bmm(f.transpose(1, 2), solve_gram(G, W))


def solve_gram(G: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """X = G⁻¹B for the Gram matrices G = FᵀF (R, K, K), by least squares (G may be singular).  LAPACK's
    gelsd (SVD), not torch's default gelsy on the CPU: gelsy's answers moved in their 16th digit from one
    call to the next with the very same inputs (a Theorem 4 run's z drifted by 1e-17 after 7 steps, a
    different step each run, in one process and across processes), and were the same each time only with
    torch's fill of uninitialised memory turned on: it reads memory nobody wrote (likely its column pivots)."""
    return torch.linalg.lstsq(G, B, driver="gelsd" if G.device.type == "cpu" else None).solution


def effective_yz_standard(
    U: torch.Tensor,
    WQ: torch.Tensor,
    WK: torch.Tensor,
    WV: torch.Tensor,
    ctx: torch.Tensor,
    query: torch.Tensor,
    out: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Y = U W_V^T U^T and Z = U W_Q W_K^T U^T / √d (science §2.2), restricted to the rows and
    columns that matter: Y[ctx, out] (R, M, O) and Z[query, ctx] (R, Q, M).  U: (R, V, d)."""
    d = U.shape[-1]
    Uc, Uq, Uo = U[:, ctx], U[:, query], U[:, out]
    Zq = torch.bmm(torch.bmm(Uq, WQ), torch.bmm(Uc, WK).transpose(1, 2)) / math.sqrt(d)
    Y = torch.bmm(torch.bmm(Uc, WV.transpose(1, 2)), Uo.transpose(1, 2))
    return Y, Zq
