"""A naive, faithful re-implementation of the paper's own code path (science §1.3, §2.8).

Scan and Snap (Tian et al. 2023) trains its YZ model with ``ssl/real-dataset/decoder_only.py`` of
github.com/facebookresearch/luckmatters: class ``Dataset2`` (the synthetic data) and class ``Model2``
(``K1`` = decoder, ``K2`` = attention, both ``nn.Linear(M, M, bias=False)``), trained with two SGD
optimisers. This module rebuilds that path with one-hot tensors, the slow way, and serves two purposes:

1. the speed baseline that the benchmarks compare the engine against;
2. an independent correctness reference for the tests.

It deliberately imports nothing from ``scansnap/``: torch and numpy only.

RNG (kept simple on purpose):

* ``train_reference`` calls ``torch.manual_seed(seed)``, builds the model (``nn.Linear`` draws its default
  init from the global generator even when ``zero_init`` then overwrites it with zeros, exactly as in the
  paper's code), and then samples every batch from that same global generator.
* ``sample_sequences`` draws the class of each row with ``torch.randint`` (the paper uses Python's
  ``random.choice``) and then, row by row as the paper does, ``T−1`` contextual tokens with
  ``torch.multinomial(probs, T−1, replacement=True)`` over the class support (float32 probabilities, as in
  the paper's ``facts``). So the streams are not the paper's bit for bit, only in distribution.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch
import torch.nn as nn

__all__ = [
    "ReferenceModel2",
    "attention_c",
    "distinct_mask",
    "entropy_distinct",
    "paper_tokens",
    "sample_sequences",
    "train_reference",
]


# --------------------------------------------------------------------------------------------------
# Data (Dataset2)
# --------------------------------------------------------------------------------------------------


def paper_tokens(
    num_last: int,
    num_next_per_last: int,
    num_common: int,
    num_common_per_last: int,
    num_unique_per_next: int,
    unique_min: float = 0.1,
    unique_max: float = 1.0,
    common_weight: float = 1.0,
) -> dict:
    """The token layout and class distributions of the paper's ``Dataset2`` (science §1.3).

    Ids: ``[0, num_common)`` global common tokens; then ``num_common_per_last`` common tokens per query
    (block of query ``m`` first for ``m = 0..num_last−1``); then one block of ``num_unique_per_next``
    distinct tokens per class; then the ``num_last`` query tokens; then the ``K`` next tokens. Class ``n``
    (``n = m·num_next_per_last + j``) has query token ``ψ(n) = query_offset + m`` and next-token id
    ``next_offset + n`` (the label), i.e. classes ``m·npl … (m+1)·npl−1`` share query ``m``.

    Returns a dict with ``M``, ``K``, ``P`` (float64, K×M, P(l|n)), ``query_of_next`` and
    ``next_token_ids`` (int64, length K), plus: ``support`` (list of int64 arrays, the class tokens in the
    paper's order), ``support_probs`` (list of float32 tensors, the paper's ``facts[n]["probs"]``),
    ``distinct_block`` (K × num_unique_per_next int64, each class's own block), the offsets and the
    constructor arguments.
    """
    K = num_last * num_next_per_last
    common_per_last_offset = num_common
    unique_offset = common_per_last_offset + num_common_per_last * num_last
    query_offset = unique_offset + num_unique_per_next * K
    next_offset = query_offset + num_last
    M = next_offset + K

    P = np.zeros((K, M), dtype=np.float64)
    query_of_next = np.zeros(K, dtype=np.int64)
    next_token_ids = np.zeros(K, dtype=np.int64)
    distinct_block = np.zeros((K, num_unique_per_next), dtype=np.int64)
    support: list[np.ndarray] = []
    support_probs: list[torch.Tensor] = []

    unique_w = np.linspace(unique_min, unique_max, num_unique_per_next, dtype=np.float64)
    n = 0
    for m in range(num_last):
        cpl_start = common_per_last_offset + m * num_common_per_last
        for _j in range(num_next_per_last):
            u_start = unique_offset + num_unique_per_next * n
            toks = np.concatenate(
                [
                    np.arange(num_common),
                    np.arange(cpl_start, cpl_start + num_common_per_last),
                    np.arange(u_start, u_start + num_unique_per_next),
                ]
            ).astype(np.int64)
            w = np.concatenate(
                [
                    np.full(num_common, common_weight, dtype=np.float64),
                    np.full(num_common_per_last, common_weight, dtype=np.float64),
                    unique_w,
                ]
            )
            P[n, toks] = w / w.sum()
            # The paper's own float32 probabilities (torch.linspace / torch.ones, then / sum).
            w32 = torch.cat(
                [
                    torch.ones(num_common) * common_weight,
                    torch.ones(num_common_per_last) * common_weight,
                    torch.linspace(unique_min, unique_max, num_unique_per_next),
                ]
            )
            support.append(toks)
            support_probs.append(w32 / w32.sum())
            query_of_next[n] = query_offset + m
            next_token_ids[n] = next_offset + n
            distinct_block[n] = np.arange(u_start, u_start + num_unique_per_next)
            n += 1

    return dict(
        M=M,
        K=K,
        P=P,
        query_of_next=query_of_next,
        next_token_ids=next_token_ids,
        support=support,
        support_probs=support_probs,
        distinct_block=distinct_block,
        common_per_last_offset=common_per_last_offset,
        unique_offset=unique_offset,
        query_offset=query_offset,
        next_offset=next_offset,
        num_last=num_last,
        num_next_per_last=num_next_per_last,
        num_common=num_common,
        num_common_per_last=num_common_per_last,
        num_unique_per_next=num_unique_per_next,
    )


def sample_sequences(
    tokens: dict, batch: int, T: int, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """One mini-batch as ``Dataset2.generate`` builds it.

    Each row: a class ``n`` uniform over the K classes, then ``T−1`` contextual tokens i.i.d. from
    ``P(·|n)`` (``torch.multinomial`` with replacement over the class support), then the query ``ψ(n)``.
    Returns ``seq`` (LongTensor B×T) and ``classes`` (LongTensor B, the class index; the label id is
    ``tokens["next_token_ids"][n]``). ``generator=None`` uses torch's global generator.
    """
    K = tokens["K"]
    classes = torch.randint(0, K, (batch,), generator=generator)
    seq = torch.empty(batch, T, dtype=torch.long)
    supports = [torch.as_tensor(s, dtype=torch.long) for s in tokens["support"]]
    for i in range(batch):  # row by row, as the paper's generator does
        n = int(classes[i])
        idx = torch.multinomial(tokens["support_probs"][n], T - 1, replacement=True, generator=generator)
        seq[i, :-1] = supports[n][idx]
        seq[i, -1] = int(tokens["query_of_next"][n])
    return seq, classes


# --------------------------------------------------------------------------------------------------
# Model (Model2)
# --------------------------------------------------------------------------------------------------


class ReferenceModel2(nn.Module):
    """The paper's ``Model2`` with ``normalize=true``, ``residual=false``, ``attn_include_base_token=false``.

    ``Y = K1.weight.T`` (decoder), ``Z = K2.weight`` (attention; row = query). ``forward`` returns the
    logits (B×M); the loss is taken outside. ``paper_matmul=True`` computes the attention logits exactly
    as the paper does (``bmm(K2(X_key), x_T)``, O(B·T·M²)); the default gathers ``K2.weight[x_T, x_t]``.
    """

    def __init__(self, M: int, zero_init: bool = True, paper_matmul: bool = False):
        super().__init__()
        self.M = M
        self.K1 = nn.Linear(M, M, bias=False)
        self.K2 = nn.Linear(M, M, bias=False)
        self.paper_matmul = paper_matmul
        if zero_init:
            with torch.no_grad():
                self.K1.weight.zero_()
                self.K2.weight.zero_()

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        dtype = self.K1.weight.dtype
        X = nn.functional.one_hot(seq, num_classes=self.M).to(dtype)  # B×T×M
        X_key = X[:, :-1, :]  # B×(T−1)×M, the query is not a key
        if self.paper_matmul:
            a = torch.bmm(self.K2(X_key), X[:, -1, :].unsqueeze(2)).squeeze(2)
        else:
            z_rows = self.K2.weight[seq[:, -1]]  # B×M, row ψ = x_T of Z
            a = torch.gather(z_rows, 1, seq[:, :-1])  # a_t = Z[x_T, x_t]
        b = nn.functional.softmax(a, dim=1)  # B×(T−1)
        combined = torch.bmm(b.unsqueeze(1), X_key).squeeze(1)  # B×M, s = X^T b
        combined = combined / combined.norm(dim=1, keepdim=True)  # plain ℓ2, no eps
        return self.K1(combined)


# --------------------------------------------------------------------------------------------------
# Training (the paper's main loop)
# --------------------------------------------------------------------------------------------------


def _make_opt(method: str, params, lr: float, momentum: float, weight_decay: float) -> torch.optim.Optimizer:
    if method == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    if method == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    raise ValueError(f"unknown method {method!r}")


def train_reference(
    tokens: dict,
    *,
    T: int = 128,
    batch: int = 128,
    steps: int = 100,
    lr_y: float = 1.0,
    lr_z: float = 1.0,
    momentum: float = 0.9,
    method: str = "sgd",
    weight_decay: float = 0.0,
    zero_init: bool = True,
    seed: int = 1,
    dtype: torch.dtype = torch.float32,
    record_every: int | None = None,
    init: tuple[np.ndarray, np.ndarray] | None = None,
    batches: Iterable[tuple[torch.Tensor, torch.Tensor]] | None = None,
    device: str | torch.device = "cpu",
    paper_matmul: bool = False,
) -> dict:
    """Train ``ReferenceModel2`` the way ``decoder_only.py`` does (science §2.8).

    ``torch.manual_seed(seed)``, build the model, ``optimizer_y`` on ``K1.weight`` (lr_y) and
    ``optimizer_z`` on ``K2.weight`` (lr_z), both SGD(momentum, weight_decay) or Adam(weight_decay). Each
    step: sample a batch (global generator), mean cross-entropy against the next-token ids, zero_grad both,
    backward, step both. No projection, schedule or clipping.

    Extras beyond the paper: ``init=(Y0, Z0)`` overrides the initial weights (K1.weight = Y0.T,
    K2.weight = Z0); ``batches`` (an iterable of ``(seq, classes)``) replaces the sampler, so that another
    implementation can be fed the very same data.

    Returns ``Y`` (= K1.weight.T) and ``Z`` (= K2.weight) as M×M numpy arrays, ``loss`` (list, one value per
    step, computed before that step's update, as the paper logs it) and, when ``record_every`` is set,
    ``record_steps`` plus ``Z_history``/``Y_history`` (n×M×M): the weights *before* the update of every step
    ``t`` with ``t % record_every == 0`` (the paper's ``iter-{t}.pth``) and the final weights at ``steps``.
    """
    torch.manual_seed(seed)
    M = tokens["M"]
    model = ReferenceModel2(M, zero_init=zero_init, paper_matmul=paper_matmul).to(device=device, dtype=dtype)
    if init is not None:
        with torch.no_grad():
            model.K1.weight.copy_(torch.as_tensor(np.asarray(init[0]).T, dtype=dtype))
            model.K2.weight.copy_(torch.as_tensor(np.asarray(init[1]), dtype=dtype))
    optimizer_y = _make_opt(method, [model.K1.weight], lr_y, momentum, weight_decay)
    optimizer_z = _make_opt(method, [model.K2.weight], lr_z, momentum, weight_decay)
    loss_func = nn.CrossEntropyLoss()
    next_ids = torch.as_tensor(tokens["next_token_ids"], dtype=torch.long)
    batch_iter = iter(batches) if batches is not None else None

    losses: list[float] = []
    record_steps: list[int] = []
    Z_hist: list[np.ndarray] = []
    Y_hist: list[np.ndarray] = []

    def snapshot(t: int) -> None:
        record_steps.append(t)
        Z_hist.append(model.K2.weight.detach().cpu().double().numpy().copy())
        Y_hist.append(model.K1.weight.detach().cpu().double().numpy().T.copy())

    for t in range(steps):
        if record_every and t % record_every == 0:
            snapshot(t)
        if batch_iter is None:
            seq, classes = sample_sequences(tokens, batch, T, None)
        else:
            seq, classes = next(batch_iter)
        seq = seq.to(device)
        label = next_ids[classes].to(device)
        logits = model(seq)
        loss = loss_func(logits, label)
        optimizer_y.zero_grad()
        optimizer_z.zero_grad()
        loss.backward()
        optimizer_y.step()
        optimizer_z.step()
        losses.append(float(loss.detach()))
    if record_every:
        snapshot(steps)

    out = dict(
        Y=model.K1.weight.detach().cpu().double().numpy().T.copy(),
        Z=model.K2.weight.detach().cpu().double().numpy().copy(),
        loss=losses,
    )
    if record_every:
        out.update(record_steps=record_steps, Z_history=np.stack(Z_hist), Y_history=np.stack(Y_hist))
    return out


# --------------------------------------------------------------------------------------------------
# Derived quantities (science §3)
# --------------------------------------------------------------------------------------------------


def attention_c(Z: np.ndarray, tokens: dict) -> np.ndarray:
    """c_n (K×M) as ``figure_4_create.get_c`` computes it (in float64).

    For each class: ``c = exp(Z[ψ(n), :])``; on the class support multiply by P(l|n), elsewhere set 0;
    divide by the sum. Exactly c_{l|n} = P(l|n) e^{z_{ψ(n),l}} / Σ_{l'} P(l'|n) e^{z_{ψ(n),l'}}.
    """
    Z = np.asarray(Z, dtype=np.float64)
    P = tokens["P"]
    K = tokens["K"]
    out = np.zeros((K, tokens["M"]), dtype=np.float64)
    for n in range(K):
        c = np.exp(Z[tokens["query_of_next"][n], :])
        sel = P[n] > 0
        c[sel] *= P[n, sel]
        c[~sel] = 0.0
        out[n] = c / c.sum()
    return out


def distinct_mask(tokens: dict) -> np.ndarray:
    """K×M boolean: l ∈ G_DT(n), i.e. P(l|n) > 0 and |Ω(l)| = 1 (science §1.2, global over all classes)."""
    supp = tokens["P"] > 0
    return supp & (supp.sum(axis=0, keepdims=True) == 1)


def entropy_distinct(Z: np.ndarray, tokens: dict) -> np.ndarray:
    """H_n (nats, length K): c_n restricted to G_DT(n), renormalised, −Σ q ln q (science §3)."""
    c = attention_c(Z, tokens)
    mask = distinct_mask(tokens)
    H = np.zeros(tokens["K"], dtype=np.float64)
    for n in range(tokens["K"]):
        q = c[n, mask[n]]
        q = q / q.sum()
        q = q[q > 0]
        H[n] = -float(np.sum(q * np.log(q)))
    return H
