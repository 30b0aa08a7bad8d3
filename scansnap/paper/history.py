"""A stored run as chart data: its history read incrementally from the run store, per-token
colour facts, and the view of one replica that the claims judge (pure numpy/pandas; the store is
any object with ``steps``, ``snapshot`` and ``scalars`` methods, :class:`scansnap.service.store.RunStore`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, overload

import numpy as np
import pandas as pd

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import KIND_COMMON, KIND_DISTINCT, Problem
from scansnap.paper.claims import Observed, run_claims
from scansnap.paper.run_theory import replica_t0, unmet_conditions


def decimate(n: int, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` of ``n`` samples: half log-spaced (the fast early
    dynamics), half evenly spaced; first and last always kept."""
    if n <= max_points:
        return np.arange(n)
    half = max(2, max_points // 2)
    log = np.unique(np.round(np.logspace(0, np.log10(n), half)).astype(np.int64) - 1)
    lin = np.round(np.linspace(0, n - 1, max_points - len(log))).astype(np.int64)
    return np.union1d(np.union1d(log, lin), [0, n - 1])[:max_points]


def rnd(a: Any, digits: int = 4) -> np.ndarray:
    """Round to ``digits`` significant digits (smaller JSON payloads, same picture)."""
    x = np.asarray(a, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where(np.isfinite(x) & (x != 0), np.floor(np.log10(np.abs(x))), 0)
        scale = 10.0 ** np.clip(digits - 1 - mag, -300, 300)
        return np.round(x * scale) / scale


@dataclass(frozen=True)
class TokenInfo:
    """Per contextual token l: global kind (1 distinct, 2 common, 0 unused), owner class
    (distinct tokens; −1 otherwise), P(l|owner) (max over classes for common tokens) and the
    token's P-rank within its class in [0, 1] (used to colour distinct tokens by P)."""

    kind: np.ndarray
    owner: np.ndarray
    p: np.ndarray
    rank: np.ndarray


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


def read_new(store: Any, run_id: str, last: int, upto: int | None = None) -> tuple[list[int], pd.DataFrame]:
    """The steps stored after ``last`` (up to ``upto``: the step a page shows) and their scalar rows, both
    cut at the latest step that has both, so every chart drawn from them ends at one step however the
    reads interleave with the writes (a snapshot stored meanwhile comes with the next read).  Any kind."""
    new = [s for s in store.steps(run_id) if s > last and (upto is None or s <= upto)]
    if not new:
        return [], pd.DataFrame()
    rows = store.scalars(run_id, since_step=last)
    common = min(new[-1], int(rows["step"].max())) if len(rows) else last
    return [s for s in new if s <= common], rows[rows["step"] <= common] if len(rows) else rows


@dataclass
class RunHistory:
    """Everything stored for one run so far, read incrementally (only new steps each time)."""

    run_id: str
    steps: list[int] = field(default_factory=list)
    z: list[np.ndarray] = field(default_factory=list)  # each (R, Q, M_ctx)
    c: list[np.ndarray] = field(default_factory=list)  # each (R, K, M_ctx)
    scalars: pd.DataFrame = field(default_factory=pd.DataFrame)
    topk: bool = False
    _index: dict[tuple[str, int, int], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def update(self, store: Any) -> bool:
        """Read the snapshots and scalar rows written since the last update, up to the latest step that
        has both (so every chart drawn from the history ends at one step, however the reads interleave
        with the writes); True if any."""
        new, rows = read_new(store, self.run_id, self.last_step)
        self._append(store, new, rows)
        return bool(new)

    def extended(self, store: Any) -> RunHistory:
        """This history with what the store gained since, as :meth:`update` reads it, in a NEW object
        (``self`` when nothing is new): a history never changes once handed out, so one object can serve
        every session showing the run, whichever of them reads the next snapshot."""
        new, rows = read_new(store, self.run_id, self.last_step)
        if not new:
            return self
        grown = replace(self, steps=list(self.steps), z=list(self.z), c=list(self.c), _index={})
        grown._append(store, new, rows)
        return grown

    def _append(self, store: Any, new: list[int], rows: pd.DataFrame) -> None:
        for s in new:
            snap = store.snapshot(self.run_id, s)
            self.steps.append(s)
            if "z" not in snap:  # top-k layout (huge vocabularies): no per-token history
                self.topk = True
                continue
            self.z.append(snap["z"])
            self.c.append(snap["c"])
        if new:
            self.scalars = rows if self.scalars.empty else pd.concat([self.scalars, rows], ignore_index=True)
            self._index = {}

    def _build_index(self) -> None:
        """(metric, replica, n or −1 for the class mean) → (steps, values), sorted by step."""
        df = self.scalars.sort_values("step", kind="stable")
        n = df["n"].fillna(-1).astype(np.int64)
        groups = df.groupby([df["metric"], df["replica"], n], sort=False)
        # built whole, then set: a session reading a shared history never sees half an index
        self._index = {
            (str(m), int(r), int(k)): (g["step"].to_numpy(np.int64), g["value"].to_numpy(np.float64))
            for (m, r, k), g in groups
        }

    @property
    def last_step(self) -> int:
        return self.steps[-1] if self.steps else -1

    def c_of(self, replica: int, n: int) -> np.ndarray:
        """c_n over stored steps: (S, M_ctx)."""
        return np.stack([c[replica, n] for c in self.c]) if self.c and not self.topk else np.zeros((0, 0))

    def z_of(self, replica: int, q: int) -> np.ndarray:
        """z_q over stored steps: (S, M_ctx)."""
        return np.stack([z[replica, q] for z in self.z]) if self.z and not self.topk else np.zeros((0, 0))

    def metric(self, name: str, replica: int = 0, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values) of one metric; ``n=None`` is the mean over classes."""
        if self.scalars.empty:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        if not self._index:
            self._build_index()
        return self._index.get((name, replica, -1 if n is None else n), (np.zeros(0, dtype=np.int64), np.zeros(0)))


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
    """The view of replica ``replica`` that :mod:`scansnap.paper.claims` judges (with ``cfg``, the
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
