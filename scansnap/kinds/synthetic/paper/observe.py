"""A stored synthetic run as the claims see it: per-token colour facts, the row of ψ(n), the run's
:class:`~scansnap.kinds.synthetic.science.data.Problem` from its statics, and the view of one replica that
:mod:`scansnap.kinds.synthetic.paper.claims` judges, with the theorems' conditions checked on it (pure numpy)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, overload

import numpy as np

from scansnap.kinds.synthetic.paper.claims import Observed, run_claims
from scansnap.kinds.synthetic.paper.run_theory import replica_t0, unmet_conditions
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import KIND_COMMON, KIND_DISTINCT, Problem
from scansnap.paper.history import RunHistory, TokenInfo


def token_info(P: np.ndarray, token_kind: np.ndarray) -> TokenInfo:
    K, M = P.shape
    kind = np.zeros(M, dtype=np.int64)
    kind[(token_kind == KIND_DISTINCT).any(0)] = KIND_DISTINCT
    kind[(token_kind == KIND_COMMON).any(0)] = KIND_COMMON
    owner = np.where(kind == KIND_DISTINCT, np.argmax(token_kind == KIND_DISTINCT, axis=0), -1)
    p = np.where(owner >= 0, P[np.maximum(owner, 0), np.arange(M)], P.max(0))
    rank = np.zeros(M)
    for n in range(K):
        idx = np.flatnonzero(owner == n)
        if len(idx) > 1:
            lo, hi = P[n, idx].min(), P[n, idx].max()
            rank[idx] = (P[n, idx] - lo) / (hi - lo) if hi > lo else 1.0
        elif len(idx) == 1:
            rank[idx] = 1.0
    return TokenInfo(kind, owner, p, rank)


def query_row(statics: dict[str, np.ndarray], n: int) -> int:
    """Row of the stored z arrays that holds ψ(n)'s logits."""
    return int(np.flatnonzero(np.asarray(statics["query_tokens"]) == int(statics["query_of_class_id"][n]))[0])


def problem_from_statics(statics: dict[str, np.ndarray], cfg: RunConfig) -> Problem:
    """The run's :class:`~scansnap.kinds.synthetic.science.data.Problem` from its stored statics (nothing is
    rebuilt)."""
    P, query_ids = statics["P"], np.asarray(statics["query_tokens"], dtype=np.int64)
    psi = np.searchsorted(query_ids, np.asarray(statics["query_of_class_id"], dtype=np.int64))
    K, M_ctx = P.shape
    M = M_ctx + len(query_ids) + K
    return Problem(P, psi, query_ids, np.asarray(statics["label_ids"]), M, M if cfg.data.layout == "paper" else K)


class ReplicaRows(Sequence[np.ndarray]):
    """One replica's query rows of Z at each stored step, ``z[i][replica]`` taken when indexed: a claim
    reads a few steps of them, so nothing is stacked (a copy of the run's z per replica)."""

    def __init__(self, z: Sequence[Any], replica: int):
        self._z, self._replica = z, replica

    def __len__(self) -> int:
        return len(self._z)

    @overload
    def __getitem__(self, i: int) -> np.ndarray: ...
    @overload
    def __getitem__(self, i: slice) -> list[np.ndarray]: ...
    def __getitem__(self, i: int | slice) -> np.ndarray | list[np.ndarray]:
        if isinstance(i, slice):
            return [self._z[j][self._replica] for j in range(*i.indices(len(self._z)))]
        return np.asarray(self._z[i][self._replica])


def observed(
    hist: RunHistory, statics: dict[str, np.ndarray], replica: int = 0, cfg: RunConfig | None = None
) -> Observed:
    """The view of replica ``replica`` that :mod:`scansnap.kinds.synthetic.paper.claims` judges (with ``cfg``, the
    theorems' conditions are checked on it too, and where Theorem 4 applies its calibrated curve,
    stored with the run's scalars, and predicted t_0 come with it)."""
    P = statics["P"]
    steps, H = hist.metric("entropy_distinct", replica)
    z = ReplicaRows(hist.z, replica) if hist.z and not hist.topk else None
    shares = {}
    for name in ("share_common_down", "share_distinct_up"):
        v = hist.metric(name, replica)[1]
        shares[name] = float(v[-1]) if len(v) else float("nan")
    rows = np.array([query_row(statics, n) for n in range(P.shape[0])])
    zsteps = np.asarray(hist.steps, dtype=np.int64)
    if z is None or len(zsteps) != len(steps):  # the scalar series decides the steps when there are no z rows
        zsteps = steps
    dz_steps, dz_common = hist.metric("dz_common", replica)
    dz = dz_common if len(dz_steps) == len(zsteps) else None
    obs = Observed(zsteps, z, H, P, statics["token_kind"], rows, shares, dz)
    return obs if cfg is None else _with_theory(obs, hist, statics, replica, cfg)


def _with_theory(
    obs: Observed, hist: RunHistory, statics: dict[str, np.ndarray], replica: int, cfg: RunConfig
) -> Observed:
    """``obs`` with the theorems' failed conditions, the optimiser and, where Theorem 4 applies, the
    calibrated −Δz_common the worker stored with the run (NaN elsewhere) and the predicted t_0."""
    problem = problem_from_statics(statics, cfg)
    z0 = obs.z[0] if obs.z is not None else np.zeros((len(statics["query_tokens"]), obs.P.shape[1]))
    unmet = unmet_conditions(cfg, problem, z0, replica)
    failed = {name: tuple(c.detail for c in cs) for name, cs in unmet.items()}
    plain = {name: tuple(c.plain for c in cs) for name, cs in unmet.items()}
    th_steps, th = hist.metric("dz_common_theory", replica)
    found = not failed["theorem4"] and np.array_equal(th_steps, obs.steps) and bool(np.isfinite(th).all())
    t0 = replica_t0(cfg, problem, replica) if found else math.nan
    return replace(
        obs, failed=failed, failed_plain=plain, method=cfg.optim.method, dz_theory=th if found else None, t0=t0
    )


def run_verdicts(
    hist: RunHistory, statics: dict[str, np.ndarray], cfg: RunConfig, max_replicas: int = 16
) -> list[dict]:
    """The four claims of every replica (at most ``max_replicas``), JSON-ready, each with its replica."""
    out = []
    for r in range(min(cfg.n_replicas, max_replicas)):
        for v in run_claims(observed(hist, statics, r, cfg)):
            out.append({**v.to_dict(), "replica": r})
    return out
