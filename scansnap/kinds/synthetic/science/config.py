"""The synthetic kind's run configuration: the token distribution (``data``), the model, the optimiser,
the replicas (seeds × (η_Y, η_Z) pairs) and the snapshots; frozen and validated (:mod:`scansnap.core.config`)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from scansnap.core.config import MAX_SEED, MAX_STEPS, FrozenConfig, RootConfig, SnapshotConfig
from scansnap.core.config_fields import DecayRate, Epsilon, PositiveFloat, WeightDecay

MAX_VOCAB = 200_000  # contextual tokens M_ctx of one problem
MAX_TABLE_CELLS = 10_000_000  # K × M_ctx entries of P(l|n): 80 MB as float64, already past any lesson
MAX_T = 10**9
MAX_SEEDS = 1024  # seeds of one run (replicas = (η_Y, η_Z) pairs × seeds)


class DataConfig(FrozenConfig):
    """Sequence classes: the paper's ``Dataset2`` generator or an explicit P(l|n) table.

    Generator layout (science §1.3): ``num_common`` global common tokens, then
    ``num_common_per_last``·num_last per-query common tokens, then ``num_distinct_per_next``
    distinct tokens per class; K = num_last · num_next_per_last classes.
    Table mode: ``table`` is K×M_ctx with P(l|n) (rows are normalised), ``psi[n]`` the query
    index of class n.
    """

    source: Literal["generator", "table"] = "generator"
    num_last: int = Field(2, ge=1, le=1000)
    num_next_per_last: int = Field(1, ge=1, le=1000)
    num_common: int = Field(10, ge=0, le=MAX_VOCAB - 1)  # every class has ≥ 1 distinct token
    num_common_per_last: int = Field(0, ge=0, le=MAX_VOCAB - 1)
    num_distinct_per_next: int = Field(10, ge=1, le=MAX_VOCAB)
    distinct_weights: Literal["linspace", "uniform", "zipf", "dirichlet"] = "linspace"
    distinct_min: float = Field(0.1, gt=0, le=1e6, allow_inf_nan=False)
    distinct_max: float = Field(1.0, gt=0, le=1e6, allow_inf_nan=False)
    zipf_s: float = Field(1.0, ge=0, le=10, allow_inf_nan=False)
    dirichlet_alpha: float = Field(1.0, gt=0, le=1e3, allow_inf_nan=False)
    dirichlet_seed: int = Field(0, ge=0, le=2**31 - 1)
    common_weight: float = Field(1.0, ge=0, le=1e6, allow_inf_nan=False)
    table: tuple[tuple[float, ...], ...] | None = None
    psi: tuple[int, ...] | None = None
    T: int | Literal["inf"] = 128
    layout: Literal["paper", "compact"] = "paper"

    @field_validator("T", mode="before")
    @classmethod
    def _parse_T(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip().lower() in {"inf", "infinity", "∞"}:
            return "inf"
        if isinstance(v, float) and math.isinf(v) and v > 0:
            return "inf"
        if isinstance(v, int | float | str) and not isinstance(v, bool):
            try:
                iv = int(str(v))
            except ValueError:
                raise ValueError(f"T must be an integer from 2 to {MAX_T} or 'inf'") from None
            if not 2 <= iv <= MAX_T:
                raise ValueError(f"T must be an integer from 2 to {MAX_T} or 'inf'")
            return iv
        raise ValueError(f"T must be an integer from 2 to {MAX_T} or 'inf'")

    @model_validator(mode="after")
    def _check(self) -> DataConfig:
        if self.source == "generator":
            if self.table is not None or self.psi is not None:
                raise ValueError("table/psi are only allowed with source='table'")
            if self.distinct_weights == "linspace" and self.distinct_min > self.distinct_max:
                raise ValueError(f"distinct_min={self.distinct_min} must be ≤ distinct_max={self.distinct_max}")
            _check_size(self.num_last * self.num_next_per_last, self.generator_tokens)
            return self
        _check_table(self.table, self.psi)
        return self

    @property
    def infinite_T(self) -> bool:
        return self.T == "inf"

    @property
    def generator_tokens(self) -> int:
        """M_ctx of the generator: global common + per-query common + distinct tokens (science §1.3)."""
        Q, K = self.num_last, self.num_last * self.num_next_per_last
        return self.num_common + self.num_common_per_last * Q + self.num_distinct_per_next * K

    @property
    def num_classes(self) -> int:
        """K, the next tokens (classes), known without building P(l|n)."""
        if self.source == "table" and self.table:
            return len(self.table)
        return self.num_last * self.num_next_per_last

    @property
    def num_queries(self) -> int:
        """Q, the query tokens (the table's ψ uses every index 0..Q−1)."""
        if self.source == "table" and self.psi:
            return max(self.psi) + 1
        return self.num_last

    @property
    def table_cells(self) -> int:
        """K × M_ctx, the entries of P(l|n), known without building it."""
        width = len(self.table[0]) if self.source == "table" and self.table else self.generator_tokens
        return self.num_classes * width


def _check_size(K: int, M_ctx: int) -> None:
    """Sizes that can only be absurd are refused before anything is built."""
    if M_ctx > MAX_VOCAB:
        raise ValueError(f"the problem has M_ctx = {M_ctx:,} contextual tokens; at most {MAX_VOCAB:,} are allowed")
    if K * M_ctx > MAX_TABLE_CELLS:
        raise ValueError(
            f"P(l|n) would have K × M_ctx = {K:,} × {M_ctx:,} = {K * M_ctx:,} entries; "
            f"at most {MAX_TABLE_CELLS:,} are allowed (fewer classes or tokens)"
        )


def _check_table(table: tuple[tuple[float, ...], ...] | None, psi: tuple[int, ...] | None) -> None:
    if not table:
        raise ValueError("source='table' needs a non-empty table (K rows × M_ctx columns of P(l|n))")
    width = len(table[0])
    if width < 1 or width > MAX_VOCAB:
        raise ValueError(f"table rows must have 1..{MAX_VOCAB} columns, got {width}")
    for n, row in enumerate(table):
        if len(row) != width:
            raise ValueError(f"table row {n} has {len(row)} columns; every row needs {width}")
        bad = [x for x in row if not math.isfinite(x) or x < 0]
        if bad:
            raise ValueError(f"table row {n} has {bad[0]!r}: entries must be finite and ≥ 0")
        total = sum(row)
        if not math.isfinite(total):
            raise ValueError(f"table row {n} sums to {total}: entries must add up to a finite number")
        if total <= 0:
            raise ValueError(f"table row {n} has no positive mass: every class needs P(l|n) > 0 somewhere")
    _check_size(len(table), width)
    shown = "missing" if psi is None else f"psi = {list(psi)[:20]}"
    if psi is None or len(psi) != len(table):
        raise ValueError(f"{shown}: psi must list the query index of each of the {len(table)} classes")
    if min(psi) < 0:
        raise ValueError(f"{shown}: psi entries are query indices and must be ≥ 0 (got {min(psi)})")
    if sorted(set(psi)) != list(range(max(psi) + 1)):
        raise ValueError(f"{shown}: psi must use every query index 0..Q-1 at least once (Q = {max(psi) + 1})")


class ModelConfig(FrozenConfig):
    """``yz``: sampled finite-T contexts; ``yz-meanfield``: T→∞ expected dynamics over all
    classes (``meanfield_decoder='lemma3'`` keeps Y in span(F) as the paper's analysis does);
    ``standard``: embeddings U, W_Q, W_K, W_V (d dims) with ℓ2 normalisation."""

    kind: Literal["yz", "yz-meanfield", "standard"] = "yz"
    meanfield_decoder: Literal["plain", "lemma3"] = "plain"
    d: int = Field(64, ge=1, le=4096)
    init: Literal["zero", "torch-default", "normal"] = "zero"
    init_std: float = Field(0.01, gt=0, le=10, allow_inf_nan=False)
    dtype: Literal["float32", "float64"] = "float32"
    device: Literal["auto", "cpu", "cuda"] = "auto"

    @model_validator(mode="after")
    def _check(self) -> ModelConfig:
        if self.kind == "standard" and self.init == "zero":
            raise ValueError("init='zero' is a saddle point of the standard model: use 'torch-default' or 'normal'")
        return self


class OptimConfig(FrozenConfig):
    """Two optimisers as in the paper's code: one on Y (η_Y), one on Z (η_Z)."""

    method: Literal["sgd", "adam"] = "sgd"
    eta_y: PositiveFloat = 1.0
    eta_z: PositiveFloat = 1.0
    momentum: DecayRate = 0.9
    beta1: DecayRate = 0.9
    beta2: DecayRate = 0.999
    eps: Epsilon = 1e-8
    weight_decay: WeightDecay = 0.0
    batch: int = Field(128, ge=1, le=65536)
    steps: int = Field(100, ge=0, le=MAX_STEPS)


class ReplicaConfig(FrozenConfig):
    """Replicas trained together on one replica axis: every (η_Y, η_Z) pair × every seed.
    ``lr_pairs=None`` uses the optimiser's single (η_Y, η_Z)."""

    seeds: tuple[int, ...] = Field((1,), min_length=1, max_length=MAX_SEEDS)
    lr_pairs: tuple[tuple[PositiveFloat, PositiveFloat], ...] | None = Field(None, min_length=1, max_length=4096)

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if any(s < 0 or s > MAX_SEED for s in v):
            raise ValueError(f"seeds must be integers in [0, {MAX_SEED}]")
        return v


class RunConfig(RootConfig):
    name: str = Field("", max_length=200)
    data: DataConfig = DataConfig()
    model: ModelConfig = ModelConfig()
    optim: OptimConfig = OptimConfig()
    replicas: ReplicaConfig = ReplicaConfig()
    snapshots: SnapshotConfig = SnapshotConfig()

    @property
    def lr_pairs(self) -> list[tuple[float, float]]:
        return list(self.replicas.lr_pairs or [(self.optim.eta_y, self.optim.eta_z)])

    @property
    def n_replicas(self) -> int:
        return len(self.lr_pairs) * len(self.replicas.seeds)
