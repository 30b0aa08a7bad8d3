"""The synthetic kind's memory and work estimate, and its slot seconds for the queue.

The estimate counts the tensors the trainer keeps (parameters and optimiser state; for ``yz`` and the
plain mean field no decoder gradient: it is written straight into the optimiser's buffer), the step's
workspace (one chunk of replicas' logits, the scratch gradient of Adam or momentum-free SGD), the numpy
copies a checkpoint makes, the tracking of Z(0) and f(0), times a safety factor of 1.5
(:mod:`scansnap.service.budget`).  The work per run (replicas × steps × per-step size) is capped by
``SCANSNAP_MAX_RUN_WORK`` so that no single request can occupy a worker for hours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from scansnap.core.schedule import TOPK, full_snapshots, snapshot_steps
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.slots import CHUNK_REPLICAS, padded_slots
from scansnap.service.budget import (
    CHECKPOINT_DISK_COPIES,
    PACKED_COPIES,
    WAL_BYTES,
    Estimate,
    WorkLimit,
    check_within,
    checkpoint_seconds,
)

MEANFIELD_MAX_STEPS = 1500  # the twin's steps at most (science.meanfield imports torch: not here)
MEANFIELD_MAX_FLOATS = 2_000_000  # the twin's stored floats at most (likewise)

PER_CLASS_ROWS = 4000  # the synthetic trainer's: above this R·K only class means of per-class metrics are kept
METRICS = 16  # scalar metrics a snapshot stores at most (14 today)
VALUE_BYTES = 24  # a stored scalar value: float64 and its two index columns
ARRAY_HEADER_BYTES = 512  # a stored array's .npy header and its zip entry (≈ 250 bytes measured)
STATIC_ARRAYS = 32  # statics a synthetic run stores (21 today)
REPLICA_TEXT_BYTES = 8192  # a replica's statics beside its curves: rates, seed, its theory's failed conditions

DEFAULT_MAX_RUN_WORK = 2e13  # element-operations; ≈ hours of CPU at the top end

# The slot time of a run, as the queue counts it, with every slot busy (bench/estimates.py measures
# it against these: BENCHMARKS.md).  Chosen to overstate rather than understate: a queued visitor's stated
# wait is a sum of them.
# Measured on 2 cores, both slots busy (second runs, twin cached): syn-small 1.1-1.7 ms a step, 6 ms a
# snapshot, a start of 0.3 s and up to 2 s more for an uncached twin; syn-medium-1 3·10^8 element-operations
# a second.
RUN_START_S = 1.0  # a worker's start, the run's statics, an uncached mean-field twin
STEP_OVERHEAD_S = 2e-3  # per optimiser step, whatever its size
SNAPSHOT_S = 8e-3  # per stored snapshot (its metrics and one SQLite transaction)
OPS_PER_S = 3e8  # element-operations a second of one slot
# Per element of a sampled step's grouped batch (streams × K × G × (s + 1)): zeroed, scattered into, its log
# taken, then read by the attention; slower than OPS_PER_S's mix (a compact run of s = 100,000 tokens a
# class spends 0.87 CPU-s a step, 0.41 s by its element-operations alone: 3·10^-8 s an element more).
BATCH_ELEMENT_S = 6e-8


@dataclass(frozen=True)
class SyntheticEstimate(Estimate):
    bytes_params: float
    bytes_step: float
    bytes_tracking: float
    work: float  # element-operations for the whole run
    bytes_checkpoint: float = 0.0  # the checkpoint as it is stored (PACKED_COPIES of its arrays)
    note: str = ""  # why the decoder is large, when it is most of the estimate
    bytes_twin: float = 0.0  # the mean-field twin, trained beside the run in the same worker
    stored: tuple[tuple[str, float], ...] = ()  # what the run stores (:func:`stored_parts`)

    def parts(self) -> tuple[tuple[str, float], ...]:
        return (
            ("parameters+optimiser", self.bytes_params),
            ("per-step temporaries", self.bytes_step),
            ("checkpoint copies", self.bytes_checkpoint),
            ("tracking", self.bytes_tracking),
            ("mean-field twin", self.bytes_twin),
        )

    def disk_parts(self) -> tuple[tuple[str, float], ...]:
        return self.stored


def problem_sizes(cfg: RunConfig) -> tuple[int, int, int, int, int]:
    """(K, Q, M_ctx, M_out, s) without building the distribution (s = largest |supp(n)|)."""
    d = cfg.data
    if d.source == "table" and d.table is not None and d.psi is not None:
        K, M_ctx = len(d.table), len(d.table[0])
        Q = max(d.psi) + 1
        s = max(sum(1 for x in row if x > 0) for row in d.table)
    else:
        Q, K = d.num_last, d.num_last * d.num_next_per_last
        M_ctx = d.num_common + d.num_common_per_last * Q + d.num_distinct_per_next * K
        s = d.num_common + d.num_common_per_last + d.num_distinct_per_next
    M = M_ctx + Q + K
    M_out = M if d.layout == "paper" else K
    return K, Q, M_ctx, M_out, s


def role_columns(cfg: RunConfig) -> int:
    """S = m_c + d, the columns of a class's context in the fused step's role coordinates
    (:mod:`scansnap.kinds.synthetic.science.roles`): every token two or more classes share (m_c), then the widest
    block of tokens one
    class owns alone (d); at least the largest |supp(n)|, often far more (Q queries each with common tokens
    of their own).  Counted from the config, without building the distribution."""
    d = cfg.data
    if d.source == "table" and d.table is not None:
        supp = np.array([np.asarray(row) > 0 for row in d.table])  # a bool a cell: no float copy of the table
        owners = supp.sum(0)
        return int((owners > 1).sum() + (supp & (owners == 1)).sum(1).max())
    Q, per_query = d.num_last, d.num_next_per_last
    if Q * per_query == 1:  # one class owns every token
        return d.num_common + d.num_common_per_last + d.num_distinct_per_next
    shared = d.num_common + (d.num_common_per_last * Q if per_query > 1 else 0)
    return shared + d.num_distinct_per_next + (d.num_common_per_last if per_query == 1 else 0)


def estimate(cfg: RunConfig) -> SyntheticEstimate:
    K, Q, M_ctx, M_out, s = problem_sizes(cfg)
    R, B = cfg.n_replicas, cfg.optim.batch
    el = 8 if cfg.model.dtype == "float64" else 4
    opt_state = 2 if cfg.optim.method == "adam" else (1 if cfg.optim.momentum > 0 else 0)
    kind = cfg.model.kind
    lemma3 = kind == "yz-meanfield" and cfg.model.meanfield_decoder == "lemma3"
    rows = K if kind == "yz-meanfield" else B + 4 * math.sqrt(B * K) + K  # K·G ≈ B + a few σ (the old step)
    old_step = R * (rows * (s * 6 + M_out * 5) + K * s * M_out * 3 + M_ctx * M_out)
    tracking = R * (K * M_ctx * 6 + Q * M_ctx * 2)
    if kind == "standard":
        d = cfg.model.d
        n_params = R * ((M_ctx + Q + K) * d + 3 * d * d)
        step: float = R * (B * M_ctx * 6 + B * M_out * 4 + M_ctx * M_out * 2 + Q * M_ctx * 2)
        kept = n_params * (2 + opt_state)  # parameters, autograd's gradients, optimiser state
    elif lemma3:
        n_params, step = R * (Q * M_ctx + K * M_out), old_step
        kept = n_params * (2 + opt_state)
    else:
        n_params, step = R * (Q * M_ctx + M_ctx * M_out), role_step(cfg, K, Q, M_ctx, M_out, opt_state)
        kept = n_params * (1 + opt_state)
    work = cfg.optim.steps * (old_step + n_params * (2 + opt_state) + tracking)
    checkpoint = n_params * (1 + opt_state)
    decoder = R * M_ctx * M_out if kind != "standard" and not lemma3 else 0
    note = ""
    if decoder * (1 + opt_state) * 2 > 0.5 * (kept + step + checkpoint + tracking):
        note = (
            f"the decoder Y alone is R × M_ctx × M_out = {R} × {M_ctx:,} × {M_out:,} values "
            f"= {el * decoder / 2**20:,.1f} MB, "
            f"held once more by each optimiser buffer ({opt_state}) and copied into every checkpoint"
            + (" (layout='paper' maps onto all M tokens; 'compact' onto the K next tokens)" if M_out > K else "")
        )
    return SyntheticEstimate(
        el * kept,
        el * step,
        el * tracking + 8 * R * K * 4,
        work,
        PACKED_COPIES * el * checkpoint,
        note,
        twin_bytes(cfg),
        stored_parts(cfg, el * checkpoint),
    )


def snapshot_bytes(cfg: RunConfig) -> float:
    """One snapshot's arrays: z (R × Q × M_ctx) and c (R × K × M_ctx) float32 while R·(Q+K)·M ≤ the per-run
    bound, else the top-k tokens per class (R × K × k ids, c and z: 12 bytes each); and each array's .npy
    and zip headers (:data:`ARRAY_HEADER_BYTES`)."""
    K, Q, M_ctx, _, _ = problem_sizes(cfg)
    R = cfg.n_replicas
    if full_snapshots(R, Q, K, M_ctx):
        return 4.0 * R * (Q + K) * M_ctx + 2 * ARRAY_HEADER_BYTES
    return 12.0 * R * K * min(TOPK, M_ctx) + 3 * ARRAY_HEADER_BYTES


def statics_bytes(cfg: RunConfig, snapshots: int) -> float:
    """The run's statics: P and the token kinds and ids (≤ 24 bytes per (class, token)); per replica its
    rates, seed and theory overlay (its curves at ≤ 2 floats a snapshot, and the sentences of its failed
    conditions: ≤ :data:`REPLICA_TEXT_BYTES`); the mean-field twin's stored z and c (4 bytes each of its
    stored floats); :data:`STATIC_ARRAYS` headers."""
    K, Q, M_ctx, _, _ = problem_sizes(cfg)
    fit = twin_replicas(cfg)
    twin = len(snapshot_steps(min(cfg.optim.steps, MEANFIELD_MAX_STEPS), cfg.snapshots)) * fit * (Q + K) * M_ctx
    replicas = cfg.n_replicas * (REPLICA_TEXT_BYTES + 16.0 * snapshots)
    return 24.0 * K * M_ctx + replicas + 4.0 * twin + STATIC_ARRAYS * ARRAY_HEADER_BYTES


def stored_parts(cfg: RunConfig, checkpoint: float) -> tuple[tuple[str, float], ...]:
    """What a run stores: its snapshots' arrays (:func:`snapshot_bytes`) and scalars (≤ :data:`METRICS`
    metrics, each R values and R·K per class while R·K ≤ PER_CLASS_ROWS, :data:`VALUE_BYTES` each), its
    statics (:func:`statics_bytes`) and its checkpoint (CHECKPOINT_DISK_COPIES times: as it is replaced)."""
    K = problem_sizes(cfg)[0]
    R = cfg.n_replicas
    count = len(snapshot_steps(cfg.optim.steps, cfg.snapshots))
    values = METRICS * (R + (R * K if R * K <= PER_CLASS_ROWS else 0))
    return (
        (f"{count:,} snapshots", count * snapshot_bytes(cfg)),
        ("their scalars", count * values * VALUE_BYTES),
        ("statics", statics_bytes(cfg, count)),
        ("checkpoint, as it is replaced", CHECKPOINT_DISK_COPIES * checkpoint),
        ("the store's write-ahead log", WAL_BYTES + snapshot_bytes(cfg)),
    )


def twin_replicas(cfg: RunConfig) -> int:
    """Replicas of the run's mean-field twin (``science.meanfield.twin_plan``, without building
    the distribution): as many as store at most MEANFIELD_MAX_FLOATS floats, none but for ``model.kind = yz``."""
    if cfg.model.kind != "yz":
        return 0
    K, Q, M_ctx, _, _ = problem_sizes(cfg)
    stored = len(snapshot_steps(min(cfg.optim.steps, MEANFIELD_MAX_STEPS), cfg.snapshots))
    return min(cfg.n_replicas, MEANFIELD_MAX_FLOATS // max((Q + K) * M_ctx * stored, 1))


def twin_bytes(cfg: RunConfig) -> float:
    """What the twin holds while it trains: a mean-field run of :func:`twin_replicas` replicas (its
    parameters, step temporaries and tracking: it stores no checkpoint and has no twin of its own), and its
    snapshots, gathered then stacked (2 × 4 bytes × its stored floats)."""
    fit = twin_replicas(cfg)
    if fit < 1:
        return 0.0
    twin = cfg.with_overrides(
        {"model.kind": "yz-meanfield", "replicas.seeds": list(range(fit)), "replicas.lr_pairs": [list(cfg.lr_pairs[0])]}
    )
    est = estimate(twin)
    return est.bytes_params + est.bytes_step + est.bytes_tracking + 8.0 * MEANFIELD_MAX_FLOATS


OVERFLOW_SHARE = 1e-3  # steps whose largest class count may pass :func:`step_slots`


@lru_cache(maxsize=1024)
def step_slots(batch: int, K: int, streams: int) -> int:
    """G, the slots a step's grouped batch holds per class: at least
    :func:`~scansnap.kinds.synthetic.science.slots.padded_slots`,
    and the step's largest class count over its ``streams`` × K classes, bounded by the smallest g with
    U·K·P(Binom(B, 1/K) > g) ≤ :data:`OVERFLOW_SHARE` (a union bound: a step passes it at most that often;
    with K ≥ B the largest count is several times B/K)."""
    if K == 1:
        return batch
    p, tail = 1.0 / K, 1.0
    log_norm, log_p, log_q = math.lgamma(batch + 1), math.log(p), math.log1p(-p)
    for g in range(batch + 1):
        tail -= math.exp(log_norm - math.lgamma(g + 1) - math.lgamma(batch - g + 1) + g * log_p + (batch - g) * log_q)
        if streams * K * max(tail, 0.0) <= OVERFLOW_SHARE:
            return max(g, padded_slots(batch, K))
    return batch


def role_step(cfg: RunConfig, K: int, Q: int, M_ctx: int, M_out: int, opt_state: int) -> float:
    """Values the fused step holds besides its parameters: one chunk's logits (chunk × K × G × M_out), its
    small per-column tensors (~10 × chunk × K × G × S, S = :func:`role_columns`), the batches, ∂L/∂Zq, and
    for Adam or momentum-free SGD a scratch gradient of the chunk's decoder rows."""
    R, s = cfg.n_replicas, role_columns(cfg)
    chunk = min(R, CHUNK_REPLICAS)
    seeds = len(set(cfg.replicas.seeds))
    G = 1 if cfg.model.kind == "yz-meanfield" else step_slots(cfg.optim.batch, K, seeds)
    scratch = 0 if cfg.optim.method == "sgd" and cfg.optim.momentum > 0 else chunk * M_ctx * M_out
    return chunk * K * G * (M_out + 10 * s) + 3 * seeds * K * G * s + 2 * R * Q * M_ctx + scratch


WORK = WorkLimit("SCANSNAP_MAX_RUN_WORK", DEFAULT_MAX_RUN_WORK, "element-operations")


def check_budget(cfg: RunConfig) -> SyntheticEstimate:
    """Raise ConfigError when the run would exceed the memory or work budget; else the estimate."""
    est = estimate(cfg)
    check_within(
        est,
        "this run",
        WORK,
        "reduce the vocabulary (M), replicas, batch, or use layout='compact'",
        "reduce steps, replicas, batch or the vocabulary",
        "keep fewer snapshots (snapshots.max_count), fewer replicas or a smaller vocabulary",
    )
    return est


def batch_elements(cfg: RunConfig) -> int:
    """Elements of one step's grouped batch of the sampled model (``yz``): U streams (unique seeds) × K classes ×
    G slots (:func:`step_slots`) × (S + 1) role columns (:func:`role_columns`); the mean-field kinds build
    their one batch once, and ``standard``'s dense (U, B, M_ctx) batch is in its element-operations."""
    if cfg.model.kind != "yz":
        return 0
    K = problem_sizes(cfg)[0]
    streams = len(set(cfg.replicas.seeds))
    return streams * K * step_slots(cfg.optim.batch, K, streams) * (role_columns(cfg) + 1)


def estimated_seconds(cfg: RunConfig) -> float:
    """Slot seconds of a whole run on this machine, every slot busy: a start, a fixed cost per step and
    per snapshot, the budget's element-operations at :data:`OPS_PER_S`, each step's batch built
    (:func:`batch_elements` × :data:`BATCH_ELEMENT_S`), and its checkpoints stored
    (:func:`~scansnap.service.budget.checkpoint_seconds`): the queue's estimate."""
    snapshots = len(snapshot_steps(cfg.optim.steps, cfg.snapshots))
    est = estimate(cfg)
    per_step = STEP_OVERHEAD_S + batch_elements(cfg) * BATCH_ELEMENT_S
    other = RUN_START_S + cfg.optim.steps * per_step + snapshots * SNAPSHOT_S + est.work / OPS_PER_S
    return other + checkpoint_seconds(other, snapshots, est.bytes_checkpoint / PACKED_COPIES)
