"""Sequence classes and their sampler (science §1.2–1.3).

A class n has query m = ψ(n) and contextual distribution P(l|n).  Without positional
encoding the model only sees the attention-weighted histogram of the context, so a context
of T−1 i.i.d. tokens is exactly its count vector x ~ Multinomial(T−1, P(·|n)).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from scansnap.kinds.synthetic.science.config import DataConfig

KIND_NONE, KIND_DISTINCT, KIND_COMMON = 0, 1, 2


@dataclass(frozen=True)
class TokenRoles:
    """A token permutation by role, so that every class's decoder rows are two contiguous blocks.

    common:   (m_c,) ids of the tokens of more than one class (|Ω(l)| > 1): one block shared by every class
              (a class's counts are 0 on the common tokens outside supp(n), e.g. other queries' tokens);
    distinct: (K, d) ids of each class's distinct tokens (Ω(l) = {n}), d = max_n |G_DT(n)|, short rows
              padded with −1;
    unused:   ids of the tokens of no class (P(l|n) = 0 for every n).
    ``order`` lists every contextual token once: common, then class 0's distinct tokens, class 1's, …, unused.
    """

    common: np.ndarray
    distinct: np.ndarray
    unused: np.ndarray

    @property
    def order(self) -> np.ndarray:
        d = self.distinct.ravel()
        return np.concatenate([self.common, d[d >= 0], self.unused])


@dataclass(frozen=True)
class Problem:
    """The resolved data distribution.

    P:          (K, M_ctx) float64, P(l|n) over contextual tokens (rows sum to 1).
    psi:        (K,) query index q ∈ [0, Q) of class n.
    query_ids:  (Q,) vocabulary ids of the query tokens.
    label_ids:  (K,) decoder output index of each next token (its vocabulary id in the
                paper layout, n in the compact layout).
    M:          vocabulary size (paper layout: contextual + query + next tokens, as Dataset2).
    M_out:      decoder output size (M in the paper layout, K in the compact one).
    """

    P: np.ndarray
    psi: np.ndarray
    query_ids: np.ndarray
    label_ids: np.ndarray
    M: int
    M_out: int

    @property
    def K(self) -> int:
        return self.P.shape[0]

    @property
    def M_ctx(self) -> int:
        return self.P.shape[1]

    @property
    def Q(self) -> int:
        return len(self.query_ids)

    @property
    def token_kind(self) -> np.ndarray:
        """(K, M_ctx) int8: 1 = distinct token of n (Ω(l) = {n}), 2 = common (|Ω(l)| > 1), 0 = ∉ supp(n)."""
        supp = self.P > 0
        common = supp.sum(0) > 1
        kind = np.where(supp, np.where(common[None, :], KIND_COMMON, KIND_DISTINCT), KIND_NONE)
        return kind.astype(np.int8)

    @property
    def distinct_mask(self) -> np.ndarray:
        return self.token_kind == KIND_DISTINCT

    @property
    def common_mask(self) -> np.ndarray:
        return self.token_kind == KIND_COMMON

    @cached_property
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """supp(n) as (K, s) token ids and (K, s) probabilities, s = max_n |supp(n)|; short rows
        are padded with their first token id and probability 0 (so they never draw a count)."""
        sizes = (self.P > 0).sum(1)
        ids = np.zeros((self.K, int(sizes.max())), dtype=np.int64)
        probs = np.zeros(ids.shape)
        for n in range(self.K):
            nz = np.flatnonzero(self.P[n])
            ids[n] = nz[0]
            ids[n, : len(nz)] = nz
            probs[n, : len(nz)] = self.P[n, nz]
        return ids, probs

    @cached_property
    def token_roles(self) -> TokenRoles:
        """The contextual tokens grouped by role (see :class:`TokenRoles`)."""
        supp = self.P > 0
        owners = supp.sum(0)
        distinct = [np.flatnonzero(supp[n] & (owners == 1)) for n in range(self.K)]
        width = max(len(d) for d in distinct)
        table = np.full((self.K, width), -1, dtype=np.int64)
        for n, d in enumerate(distinct):
            table[n, : len(d)] = d
        return TokenRoles(np.flatnonzero(owners > 1), table, np.flatnonzero(owners == 0))

    def dense_counts(self, classes: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """(B, s) support-coordinate counts → (B, M_ctx) counts over the vocabulary."""
        ids = self.support[0][classes]
        out = np.zeros((len(classes), self.M_ctx))
        np.add.at(out, (np.arange(len(classes))[:, None], ids), counts)
        return out

    @property
    def next_ids(self) -> np.ndarray:
        """(K,) vocabulary ids of the next tokens (after the contextual and query tokens)."""
        return self.M_ctx + self.Q + np.arange(self.K)

    @property
    def output_ids(self) -> np.ndarray:
        """(M_out,) vocabulary id of each decoder output: all M tokens (paper) or the K next tokens (compact)."""
        return np.arange(self.M) if self.M_out == self.M else self.next_ids

    @property
    def query_of_class_id(self) -> np.ndarray:
        """(K,) vocabulary id of ψ(n)."""
        return self.query_ids[self.psi]


def distinct_weights(cfg: DataConfig) -> np.ndarray:
    """Unnormalised weights of one class's distinct block (linspace as Dataset2, or alternatives)."""
    k = cfg.num_distinct_per_next
    if cfg.distinct_weights == "linspace":
        return np.linspace(cfg.distinct_min, cfg.distinct_max, k)
    if cfg.distinct_weights == "uniform":
        return np.ones(k)
    if cfg.distinct_weights == "zipf":
        return 1.0 / np.arange(k, 0, -1) ** cfg.zipf_s  # increasing with token id, as linspace
    rng = np.random.default_rng(cfg.dirichlet_seed)
    return np.sort(rng.dirichlet(np.full(k, cfg.dirichlet_alpha))) + 1e-12


def generator_table(cfg: DataConfig) -> tuple[np.ndarray, np.ndarray]:
    """``Dataset2``'s P(l|n) over contextual tokens and ψ (science §1.3).

    Ids: [0, num_common) global common; then num_common_per_last per query; then
    num_distinct_per_next per class.  Class n belongs to query n // num_next_per_last.
    """
    Q, per = cfg.num_last, cfg.num_next_per_last
    K = Q * per
    n_pq = cfg.num_common_per_last
    n_d = cfg.num_distinct_per_next
    M_ctx = cfg.num_common + n_pq * Q + n_d * K
    W = np.zeros((K, M_ctx))
    psi = np.arange(K) // per
    W[:, : cfg.num_common] = cfg.common_weight
    for n in range(K):
        q = psi[n]
        start = cfg.num_common + q * n_pq
        W[n, start : start + n_pq] = cfg.common_weight
        d0 = cfg.num_common + n_pq * Q + n * n_d
        W[n, d0 : d0 + n_d] = distinct_weights(cfg)
    return W, psi


def build_problem(cfg: DataConfig) -> Problem:
    if cfg.source == "table":
        assert cfg.table is not None and cfg.psi is not None  # checked by the config
        W = np.asarray(cfg.table, dtype=np.float64)
        psi = np.asarray(cfg.psi, dtype=np.int64)
    else:
        W, psi = generator_table(cfg)
    P = W / W.sum(1, keepdims=True)
    K, M_ctx = P.shape
    Q = int(psi.max()) + 1
    query_ids = M_ctx + np.arange(Q)
    M = M_ctx + Q + K
    if cfg.layout == "paper":
        label_ids, M_out = M_ctx + Q + np.arange(K), M
    else:
        label_ids, M_out = np.arange(K), K
    return Problem(P=P, psi=psi, query_ids=query_ids, label_ids=label_ids, M=M, M_out=M_out)


class ContextSampler:
    """Draws mini-batches (classes n ~ Uniform[K], counts x ~ Multinomial(T−1, P(·|n))).

    A seed fixes the data stream whatever else the run does.  Classes and contexts come from
    two independent streams spawned from the seed, so runs that differ only in T see the same
    class sequence (finite-T runs can then be compared with T = ∞ sample by sample).
    Counts live in support coordinates (slot j of class n is token ``support[0][n, j]``) and
    are drawn by the cheaper exact method: inverse-CDF draws + bincount when T−1 ≤ s/4
    (O(T) per sample), else numpy's conditional-binomial multinomial (O(s) per sample,
    independent of T).  No B×T×M one-hot tensor is ever built.
    """

    def __init__(self, problem: Problem, T: int | None, seed: int):
        self.P = problem.support[1]
        self.K, self.M = self.P.shape
        self.n_draws = None if T is None else T - 1
        self.cdf = np.cumsum(self.P, axis=1)
        self.cdf[:, -1] = 1.0
        class_seq, count_seq = np.random.SeedSequence(seed).spawn(2)
        self.rng_classes = np.random.default_rng(class_seq)
        self.rng = np.random.default_rng(count_seq)

    def sample(self, batch: int) -> tuple[np.ndarray, np.ndarray]:
        """Returns (classes (B,) int64, context counts (B, s) float64 in support coordinates).

        For T = ∞ the weights are P(·|n) itself (the context histogram's limit)."""
        classes = self.rng_classes.integers(0, self.K, size=batch)
        if self.n_draws is None:
            return classes, self.P[classes]
        if self.n_draws * 4 <= self.M:
            return classes, self._counts_by_draws(classes)
        return classes, self.rng.multinomial(self.n_draws, self.P[classes]).astype(np.float64)

    def _counts_by_draws(self, classes: np.ndarray) -> np.ndarray:
        assert self.n_draws is not None
        B, M, n = len(classes), self.M, self.n_draws
        offsets = np.arange(B)[:, None]
        cdf = (self.cdf[classes] + offsets).ravel()  # row b's CDF shifted into [b, b+1]
        u = self.rng.random((B, n)) + offsets
        flat = np.searchsorted(cdf, u.ravel(), side="right")
        flat = np.minimum(flat, (np.repeat(np.arange(B), n) + 1) * M - 1)
        return np.bincount(flat, minlength=B * M).reshape(B, M).astype(np.float64)


def run_statics(pairs: list[tuple[float, float]], seeds: list[int], problem: Problem) -> dict[str, np.ndarray]:
    """The arrays stored once per run: P(l|n), ψ(n) as vocabulary ids, the query tokens (row q of the
    stored z arrays is token ``query_tokens[q]``), token kinds, label ids, and per replica (every
    (η_Y, η_Z) pair × every seed, pair-major) its η_Y, η_Z and seed."""
    replicas = [(p, s) for p in pairs for s in seeds]
    return {
        "P": problem.P,
        "query_of_class_id": problem.query_of_class_id.astype(np.int64),
        "query_tokens": problem.query_ids,
        "token_kind": problem.token_kind,
        "label_ids": problem.label_ids,
        "eta_y": np.array([p[0] for p, _ in replicas]),
        "eta_z": np.array([p[1] for p, _ in replicas]),
        "seed": np.array([s for _, s in replicas]),
    }
