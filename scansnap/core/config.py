"""One frozen, validated run configuration (pydantic v2).

Every field is checked on creation; unknown keys are rejected.  ``RunConfig`` round-trips through JSON
(``to_json`` / ``from_json``) and through flat ``key=value`` pairs (``with_overrides``), which is what
the CLI's ``--set`` and the dashboard's URL use.  Errors are re-raised as :class:`ConfigError` whose
message names the field, the value and what is allowed.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scansnap.core.config_fields import DecayRate, Epsilon, PositiveFloat, WeightDecay

MAX_VOCAB = 200_000  # contextual tokens M_ctx of one problem
MAX_TABLE_CELLS = 10_000_000  # K × M_ctx entries of P(l|n): 80 MB as float64, already past any lesson
MAX_T = 10**9
MAX_SEED = 2**31 - 1
MAX_STEPS = 10**7  # optimiser steps of one run (the schema's bound; a server may allow fewer)
MAX_SEEDS = 1024  # seeds of one run (replicas = (η_Y, η_Z) pairs × seeds)


class ConfigError(ValueError):
    """A configuration that cannot be used; the message says what is wrong and what is allowed.
    ``places``: (dotted place, message) per problem, place ``""`` for the whole config."""

    def __init__(self, message: str, places: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.places = places or (("", message),)


class FrozenConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


class RootConfig(FrozenConfig):
    """A run's whole config (every kind's): the JSON round trip and dotted overrides, every problem
    raised as a :class:`ConfigError` that names its place and what is allowed."""

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def check_keys(cls, d: Any) -> None:
        """Raise ConfigError for what pydantic's messages would not name well (a kind may add checks)."""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Self:
        cls.check_keys(d)
        try:
            return cls.model_validate(d)
        except ValidationError as e:
            raise config_error(e) from None

    @classmethod
    def from_json(cls, text: str) -> Self:
        try:
            d = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            raise ConfigError(f"config is not valid JSON: {e}") from None
        except ValueError as e:  # an integer literal of more than 4300 digits
            raise ConfigError(f"config JSON has a number too long to read: {e}") from None
        if not isinstance(d, dict):
            raise ConfigError("config JSON must be an object with keys: " + ", ".join(cls.model_fields))
        return cls.from_dict(d)

    def with_overrides(self, overrides: dict[str, Any]) -> Self:
        """Apply dotted overrides, e.g. ``{"optim.eta_y": "10", "data.T": "inf"}``."""
        d = self.to_dict()
        for key, value in overrides.items():
            set_dotted(d, key, value)
        return type(self).from_dict(d)


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


class SnapshotConfig(FrozenConfig):
    """Snapshot schedule: every ``linear_every`` steps plus ``log_count`` log-spaced steps,
    thinned to at most ``max_count`` (step 0 and the last step always included)."""

    linear_every: int | None = Field(None, ge=1, le=MAX_STEPS)  # more than the run's steps: only 0 and the end
    log_count: int = Field(60, ge=0, le=2000)
    max_count: int = Field(300, ge=2, le=2000)


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


# ---------------------------------------------------------------------------- dotted keys
# The one helper for dotted config keys ("optim.eta_y"): the CLI's --set, the dashboard's URL and
# widgets, and the config diffs of the Compare page all go through these three functions.


def get_dotted(d: dict[str, Any], key: str) -> Any:
    """``d["a"]["b"]`` for key ``"a.b"``; None when the path does not exist."""
    node: Any = d
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def set_dotted(d: dict[str, Any], key: str, value: Any) -> None:
    """Set ``d["a"]["b"] = parse_value(value)`` for key ``"a.b"``; unknown paths raise ConfigError.

    Text stays text where the current value is text (a name "2024" is not the number 2024)."""
    parts = key.split(".")
    node: Any = d
    for i, part in enumerate(parts):
        if not isinstance(node, dict) or part not in node:
            where = ".".join(parts[:i]) or "config"
            allowed = ", ".join(sorted(node)) if isinstance(node, dict) else "(none)"
            raise ConfigError(f"unknown key {key[:80]!r}: {where} has keys {allowed}")
        if i == len(parts) - 1:
            keep_text = isinstance(node[part], str) and isinstance(value, str)
            node[part] = value if keep_text else parse_value(value)
        else:
            node = node[part]


def flatten_dotted(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` → ``{"a.b": 1}`` (leaves that are lists or tuples stay as they are)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten_dotted(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def parse_value(value: Any) -> Any:
    """Strings from a command line or URL: JSON if it parses ("10", "[1,2]", "null"), else the text.

    A number with more digits than Python converts (4300) stays text: validation then says why."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):  # JSONDecodeError, or an integer literal over 4300 digits
        return value


def config_error(e: ValidationError) -> ConfigError:
    """The ConfigError of a failed validation: its lines, and each line's place."""
    places = tuple(validation_places(e))
    return ConfigError("; ".join(line for _, line in places), places)


def validation_places(e: ValidationError) -> list[tuple[str, str]]:
    """(dotted place, line) per problem (place ``""``: the whole config); the line is
    ``field = value: what is allowed``, or ``place: rule`` for a rule across a section's fields."""
    out = []
    errors = e.errors(include_url=False)
    deeper = {tuple(err["loc"][:i]) for err in errors for i in range(len(err["loc"]))}
    for err in errors:
        if tuple(err["loc"]) in deeper:  # a container's follow-up error ("0 items after validation")
            continue
        place = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        loc = place or "config"
        value = err.get("input")
        shown = repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = f"unknown key; allowed keys: {', '.join(_allowed_keys(tuple(map(str, err['loc'][:-1]))))}"
            out.append((place, f"{loc}: {msg}"))
            continue
        msg = msg.removeprefix("Value error, ")
        if isinstance(value, dict):  # a rule across fields: the message names them and their values
            out.append((place, f"{loc}: {msg}"))
            continue
        out.append((place, f"{loc} = {shown}: {msg}"))
    return out


def _allowed_keys(parent: tuple[str, ...]) -> list[str]:
    model: type[BaseModel] = RunConfig
    for part in parent:
        if part not in model.model_fields:
            return []
        ann = model.model_fields[part].annotation
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        model = ann
    return list(model.model_fields)


def field_bounds(key: str, root: type[BaseModel] | None = None) -> tuple[float | None, float | None]:
    """(lowest, highest) value the schema (``root``, default RunConfig) allows for dotted key ``key``
    (None where unbounded); a strict bound (gt / lt) is returned as is, so callers must step inside
    it themselves."""
    model: type[BaseModel] = root or RunConfig
    *path, last = key.split(".")
    for part in path:
        ann = model.model_fields[part].annotation
        assert isinstance(ann, type) and issubclass(ann, BaseModel), key
        model = ann
    lo = hi = None
    for m in model.model_fields[last].metadata:
        lo = getattr(m, "ge", getattr(m, "gt", lo))
        hi = getattr(m, "le", getattr(m, "lt", hi))
    return lo, hi
