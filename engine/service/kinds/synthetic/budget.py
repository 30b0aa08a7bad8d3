"""The synthetic kind's memory and work estimate, and its slot seconds for the queue.

The estimate counts the tensors the trainer keeps (parameters and optimiser state; for ``yz`` and the
plain mean field no decoder gradient: it is written straight into the optimiser's buffer), the step's
workspace (one chunk of replicas' logits, the scratch gradient of Adam or momentum-free SGD), the numpy
copies a checkpoint makes, the tracking of Z(0) and f(0), times a safety factor of 1.5
(:mod:`engine.service.budget`).  The work per run (replicas × steps × per-step size) is capped by
``SCANSNAP_MAX_RUN_WORK`` so that no single request can occupy a worker for hours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.core.config import RunConfig
from engine.core.schedule import snapshot_steps
from engine.core.slots import CHUNK_REPLICAS, padded_slots
from engine.service.budget import Estimate, WorkLimit, check_within

DEFAULT_MAX_RUN_WORK = 2e13  # element-operations; ≈ hours of CPU at the top end

# The slot time of a run, as the queue counts it, with every slot busy (bench/queue_estimate.py measures
# it against these: BENCHMARKS.md).  Chosen to overstate rather than understate: a queued visitor's stated
# wait is a sum of them.
# Measured on 2 cores, both slots busy (second runs, twin cached): syn-small 1.1-1.7 ms a step, 6 ms a
# snapshot, a start of 0.3 s and up to 2 s more for an uncached twin; syn-medium-1 3·10^8 element-operations
# a second.
RUN_START_S = 1.0  # a worker's start, the run's statics, an uncached mean-field twin
STEP_OVERHEAD_S = 2e-3  # per optimiser step, whatever its size
SNAPSHOT_S = 8e-3  # per stored snapshot (its metrics and one SQLite transaction)
OPS_PER_S = 3e8  # element-operations a second of one slot


@dataclass(frozen=True)
class SyntheticEstimate(Estimate):
    bytes_params: float
    bytes_step: float
    bytes_tracking: float
    work: float  # element-operations for the whole run
    bytes_checkpoint: float = 0.0
    note: str = ""  # why the decoder is large, when it is most of the estimate

    def parts(self) -> tuple[tuple[str, float], ...]:
        return (
            ("parameters+optimiser", self.bytes_params),
            ("per-step temporaries", self.bytes_step),
            ("checkpoint copies", self.bytes_checkpoint),
            ("tracking", self.bytes_tracking),
        )


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
        n_params, step = R * (Q * M_ctx + M_ctx * M_out), role_step(cfg, K, Q, M_ctx, M_out, s, opt_state)
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
    return SyntheticEstimate(el * kept, el * step, el * tracking + 8 * R * K * 4, work, el * checkpoint, note)


def role_step(cfg: RunConfig, K: int, Q: int, M_ctx: int, M_out: int, s: int, opt_state: int) -> float:
    """Values the fused step holds besides its parameters: one chunk's logits (chunk × K × G × M_out), its
    small per-column tensors (~10 × chunk × K × G × s), the batches, ∂L/∂Zq, and for Adam or momentum-free SGD
    a scratch gradient of the chunk's decoder rows."""
    R = cfg.n_replicas
    chunk = min(R, CHUNK_REPLICAS)
    G = 1 if cfg.model.kind == "yz-meanfield" else padded_slots(cfg.optim.batch, K) + 2  # + a usual overflow
    scratch = 0 if cfg.optim.method == "sgd" and cfg.optim.momentum > 0 else chunk * M_ctx * M_out
    seeds = len(set(cfg.replicas.seeds))
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
    )
    return est


def estimated_seconds(cfg: RunConfig) -> float:
    """Slot seconds of a whole run on this machine, every slot busy: a start, a fixed cost per step and
    per snapshot, plus the budget's element-operations at :data:`OPS_PER_S` (the queue's estimate)."""
    snapshots = len(snapshot_steps(cfg.optim.steps, cfg.snapshots))
    work = estimate(cfg).work / OPS_PER_S
    return RUN_START_S + cfg.optim.steps * STEP_OVERHEAD_S + snapshots * SNAPSHOT_S + work
