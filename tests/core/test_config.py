"""Tests of engine.core.config: every validation rule, its message, JSON round trips, overrides, immutability.

Every rejected config must raise :class:`ConfigError` whose message names the field, the offending value
and what is allowed (e.g. ``data.num_last = 0: Input should be greater than or equal to 1``).
"""

from __future__ import annotations

import json
import math
import typing

import pytest
from pydantic import BaseModel, ValidationError

from engine.core.config import (
    MAX_T,
    ConfigError,
    DataConfig,
    ModelConfig,
    OptimConfig,
    ReplicaConfig,
    RunConfig,
    SnapshotConfig,
)
from engine.paper.presets import load_presets

SECTIONS: dict[str, type[BaseModel]] = {
    "data": DataConfig,
    "model": ModelConfig,
    "optim": OptimConfig,
    "replicas": ReplicaConfig,
    "snapshots": SnapshotConfig,
}


def _nested(path: str, value: object) -> dict:
    """``"optim.eta_y", 0`` -> ``{"optim": {"eta_y": 0}}``."""
    d: dict = {}
    node = d
    parts = path.split(".")
    for p in parts[:-1]:
        node[p] = {}
        node = node[p]
    node[parts[-1]] = value
    return d


def _error(d: dict) -> str:
    with pytest.raises(ConfigError) as exc:
        RunConfig.from_dict(d)
    msg = str(exc.value)
    assert "\n" not in msg, "a config error must fit on one line"
    return msg


def _numeric_fields() -> set[str]:
    out = set()
    for sec, model in SECTIONS.items():
        for name, f in model.model_fields.items():
            args = set(typing.get_args(f.annotation)) | {f.annotation}
            if args & {int, float}:
                out.add(f"{sec}.{name}")
    return out


# ---------------------------------------------------------------------------- numeric bounds
# (field, bad value, what the message must say is allowed)
BAD_NUMBERS = [
    ("data.num_last", 0, "greater than or equal to 1"),
    ("data.num_last", 1001, "less than or equal to 1000"),
    ("data.num_last", 1.5, "valid integer"),
    ("data.num_last", "abc", "valid integer"),
    ("data.num_next_per_last", 0, "greater than or equal to 1"),
    ("data.num_next_per_last", 1001, "less than or equal to 1000"),
    ("data.num_common", -1, "greater than or equal to 0"),
    ("data.num_common", 200_001, "less than or equal to 200000"),
    ("data.num_common_per_last", -1, "greater than or equal to 0"),
    ("data.num_common_per_last", 200_001, "less than or equal to 200000"),
    ("data.num_distinct_per_next", 0, "greater than or equal to 1"),
    ("data.num_distinct_per_next", 200_001, "less than or equal to 200000"),
    ("data.distinct_min", 0, "greater than 0"),
    ("data.distinct_min", 2e6, "less than or equal to 1000000"),
    ("data.distinct_max", -1.0, "greater than 0"),
    ("data.distinct_max", 2e6, "less than or equal to 1000000"),
    ("data.zipf_s", -0.5, "greater than or equal to 0"),
    ("data.zipf_s", 11, "less than or equal to 10"),
    ("data.dirichlet_alpha", 0, "greater than 0"),
    ("data.dirichlet_alpha", 1001, "less than or equal to 1000"),
    ("data.dirichlet_seed", -1, "greater than or equal to 0"),
    ("data.dirichlet_seed", 2**31, "less than or equal to 2147483647"),
    ("data.common_weight", -0.1, "greater than or equal to 0"),
    ("data.common_weight", 2e6, "less than or equal to 1000000"),
    ("data.T", 1, "integer from 2 to 1000000000 or 'inf'"),
    ("model.d", 0, "greater than or equal to 1"),
    ("model.d", 4097, "less than or equal to 4096"),
    ("model.init_std", 0, "greater than 0"),
    ("model.init_std", 10.5, "less than or equal to 10"),
    ("optim.eta_y", 0, "greater than 0"),
    ("optim.eta_y", -1, "greater than 0"),
    ("optim.eta_y", 2e6, "less than or equal to 1000000"),
    ("optim.eta_y", "fast", "valid number"),
    ("optim.eta_z", 0.0, "greater than 0"),
    ("optim.eta_z", 1e7, "less than or equal to 1000000"),
    ("optim.momentum", -0.1, "greater than or equal to 0"),
    ("optim.momentum", 1, "less than 1"),
    ("optim.beta1", -0.1, "greater than or equal to 0"),
    ("optim.beta1", 1.0, "less than 1"),
    ("optim.beta2", -1, "greater than or equal to 0"),
    ("optim.beta2", 1.5, "less than 1"),
    ("optim.eps", 0, "greater than 0"),
    ("optim.eps", 2, "less than or equal to 1"),
    ("optim.weight_decay", -1e-3, "greater than or equal to 0"),
    ("optim.weight_decay", 11, "less than or equal to 10"),
    ("optim.batch", 0, "greater than or equal to 1"),
    ("optim.batch", 65537, "less than or equal to 65536"),
    ("optim.steps", -1, "greater than or equal to 0"),
    ("optim.steps", 10**7 + 1, "less than or equal to 10000000"),
    ("optim.steps", 2.5, "valid integer"),
    ("snapshots.linear_every", 0, "greater than or equal to 1"),
    ("snapshots.log_count", -1, "greater than or equal to 0"),
    ("snapshots.log_count", 2001, "less than or equal to 2000"),
    ("snapshots.max_count", 1, "greater than or equal to 2"),
    ("snapshots.max_count", 2001, "less than or equal to 2000"),
]


@pytest.mark.parametrize(("field", "value", "allowed"), BAD_NUMBERS, ids=[f"{f}={v!r}" for f, v, _ in BAD_NUMBERS])
def test_bad_number_names_field_value_and_range(field, value, allowed):
    msg = _error(_nested(field, value))
    assert f"{field} = {value!r}" in msg
    assert allowed in msg


def test_bad_number_table_covers_every_numeric_field():
    covered = {f for f, _, _ in BAD_NUMBERS}
    # replicas.seeds is covered by the seed tests below
    missing = _numeric_fields() - covered - {"replicas.seeds"}
    assert not missing, f"numeric fields without a bad-value test: {sorted(missing)}"


def test_bad_lr_pair_names_field_value_and_range():
    msg = _error({"replicas": {"lr_pairs": [[1.0, 1.0], [2.0, 0.0]]}})
    assert "replicas.lr_pairs.1.1 = 0.0" in msg
    assert "greater than 0" in msg


def test_name_too_long():
    msg = _error({"name": "x" * 201})
    assert msg.startswith("name = 'xxx")
    assert "at most 200 characters" in msg


@pytest.mark.parametrize(
    ("field", "allowed"),
    [
        ("data.source", ["'generator'", "'table'"]),
        ("data.distinct_weights", ["'linspace'", "'uniform'", "'zipf'", "'dirichlet'"]),
        ("data.layout", ["'paper'", "'compact'"]),
        ("model.kind", ["'yz'", "'yz-meanfield'", "'standard'"]),
        ("model.meanfield_decoder", ["'plain'", "'lemma3'"]),
        ("model.init", ["'zero'", "'torch-default'", "'normal'"]),
        ("model.dtype", ["'float32'", "'float64'"]),
        ("model.device", ["'auto'", "'cpu'", "'cuda'"]),
        ("optim.method", ["'sgd'", "'adam'"]),
    ],
)
def test_bad_choice_lists_the_choices(field, allowed):
    msg = _error(_nested(field, "bogus"))
    assert f"{field} = 'bogus'" in msg
    for a in allowed:
        assert a in msg


# ---------------------------------------------------------------------------- NaN / inf
FLOAT_FIELDS = sorted(
    f"{sec}.{name}"
    for sec, model in SECTIONS.items()
    for name, fi in model.model_fields.items()
    if float in set(typing.get_args(fi.annotation)) | {fi.annotation}
)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("field", FLOAT_FIELDS)
def test_nan_and_inf_rejected(field, bad):
    msg = _error(_nested(field, bad))
    assert f"{field} = {bad!r}" in msg


@pytest.mark.parametrize("field", FLOAT_FIELDS)
def test_nan_message_says_finite(field):
    """A NaN is not 'too large': the message must say that a finite number is needed."""
    msg = _error(_nested(field, math.nan))
    assert "finite" in msg, msg


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_nan_and_inf_rejected_in_lr_pairs(bad):
    msg = _error({"replicas": {"lr_pairs": [[1.0, bad]]}})
    assert f"replicas.lr_pairs.0.1 = {bad!r}" in msg
    assert "finite" in msg


def test_nan_from_json_literal_rejected():
    with pytest.raises(ConfigError, match=r"optim\.eta_y = nan: .*finite"):
        RunConfig.from_json('{"optim": {"eta_y": NaN}}')


# ---------------------------------------------------------------------------- unknown keys
def test_unknown_top_level_key_lists_allowed_keys():
    msg = _error({"nokey": 1})
    assert msg.startswith("nokey: unknown key")
    for k in RunConfig.model_fields:
        assert k in msg


@pytest.mark.parametrize("section", list(SECTIONS))
def test_unknown_nested_key_lists_allowed_keys(section):
    msg = _error({section: {"nokey": 1}})
    assert msg.startswith(f"{section}.nokey: unknown key; allowed keys: ")
    listed = msg.split("allowed keys: ", 1)[1].split(", ")
    assert listed == list(SECTIONS[section].model_fields)


# ---------------------------------------------------------------------------- T
@pytest.mark.parametrize(
    ("given", "parsed"),
    [
        ("inf", "inf"),
        ("INF", "inf"),
        (" infinity ", "inf"),
        ("∞", "inf"),
        (math.inf, "inf"),
        (128, 128),
        ("128", 128),
        (2, 2),
        (MAX_T, MAX_T),
        (str(MAX_T), MAX_T),
    ],
)
def test_T_parsing_accepts(given, parsed):
    cfg = DataConfig(T=given)
    got = cfg.T
    assert got == parsed
    assert cfg.infinite_T == (parsed == "inf")


@pytest.mark.parametrize("given", [1, 0, -5, "1", "abc", "", 10**10, MAX_T + 1, 128.5, -math.inf, math.nan, None, True])
def test_T_parsing_rejects(given):
    msg = _error({"data": {"T": given}})
    assert f"data.T = {given!r}" in msg
    assert f"T must be an integer from 2 to {MAX_T} or 'inf'" in msg


def test_T_inf_through_override():
    assert RunConfig().with_overrides({"data.T": "inf"}).data.T == "inf"
    assert RunConfig().with_overrides({"data.T": "∞"}).data.T == "inf"
    assert RunConfig().with_overrides({"data.T": "Infinity"}).data.T == "inf"  # JSON's Infinity
    assert RunConfig().with_overrides({"data.T": "64"}).data.T == 64


# ---------------------------------------------------------------------------- table mode
def _table(table, psi=None, **kw) -> dict:
    d = {"source": "table", "table": table, **kw}
    if psi is not None:
        d["psi"] = psi
    return {"data": d}


WIDE = [[5, 6, 7, 8, 9, 9]] * 3  # long enough that the section's repr is cut short; no 0 or - in it


def test_table_mode_valid():
    cfg = RunConfig.from_dict(_table([[1, 2, 0], [0, 1, 1]], [0, 0]))
    assert cfg.data.table == ((1.0, 2.0, 0.0), (0.0, 1.0, 1.0))
    assert cfg.data.psi == (0, 0)


def test_table_non_rectangular():
    msg = _error(_table([[1, 2, 3], [1, 2]], [0, 0]))
    assert msg.startswith("data: ")  # a rule across fields names the section, not its whole value
    assert "table row 1 has 2 columns; every row needs 3" in msg


@pytest.mark.parametrize(("bad", "shown"), [(-0.5, "-0.5"), (math.nan, "nan"), (math.inf, "inf")])
def test_table_bad_entry(bad, shown):
    msg = _error(_table([[1, 1], [1, bad]], [0, 0]))
    assert f"table row 1 has {shown}" in msg
    assert "entries must be finite and ≥ 0" in msg


def test_table_zero_row():
    msg = _error(_table([[1, 1], [0, 0]], [0, 0]))
    assert "table row 1 has no positive mass" in msg
    assert "P(l|n) > 0" in msg


def test_table_empty():
    msg = _error(_table([], []))
    assert "needs a non-empty table" in msg


def test_table_psi_missing():
    msg = _error(_table(WIDE))
    assert "psi must list the query index of each of the 3 classes" in msg


def test_table_psi_wrong_length_shows_value():
    msg = _error(_table(WIDE, [0, 0]))
    assert "psi must list the query index of each of the 3 classes" in msg
    assert "0, 0" in msg, f"the message does not show the psi that was given: {msg}"


def test_table_psi_gap_shows_value():
    msg = _error(_table(WIDE, [0, 2, 2]))
    assert "psi must use every query index 0..Q-1 at least once" in msg
    assert "0, 2, 2" in msg, f"the message does not show the psi that was given: {msg}"


def test_table_psi_negative_shows_value():
    msg = _error(_table(WIDE, [0, -1, 0]))
    assert "psi entries are query indices and must be ≥ 0" in msg
    assert "-1" in msg, f"the message does not show the bad psi entry: {msg}"


@pytest.mark.parametrize("extra", [{"table": [[1.0, 1.0]]}, {"psi": [0]}, {"table": [[1.0]], "psi": [0]}])
def test_generator_with_table_given(extra):
    msg = _error({"data": {"source": "generator", **extra}})
    assert "table/psi are only allowed with source='table'" in msg


def test_distinct_min_above_max():
    msg = _error({"data": {"distinct_min": 2.0, "distinct_max": 1.0}})
    assert "distinct_min=2.0 must be ≤ distinct_max=1.0" in msg
    RunConfig.from_dict({"data": {"distinct_min": 1.0, "distinct_max": 1.0}})  # equal is fine


def test_standard_model_with_zero_init():
    msg = _error({"model": {"kind": "standard", "init": "zero"}})
    assert "init='zero'" in msg and "standard" in msg
    assert "'torch-default' or 'normal'" in msg
    for init in ("torch-default", "normal"):
        RunConfig.from_dict({"model": {"kind": "standard", "init": init}})


# ---------------------------------------------------------------------------- seeds
@pytest.mark.parametrize("seeds", [[-1], [1, 2**31], [0, 5, -3]])
def test_seeds_out_of_range(seeds):
    msg = _error({"replicas": {"seeds": seeds}})
    assert f"replicas.seeds = {seeds!r}" in msg
    assert "seeds must be integers in [0, 2147483647]" in msg


def test_seed_bounds_accepted():
    assert RunConfig.from_dict({"replicas": {"seeds": [0, 2**31 - 1]}}).replicas.seeds == (0, 2**31 - 1)


def test_empty_seeds():
    msg = _error({"replicas": {"seeds": []}})
    assert "replicas.seeds = []" in msg
    assert "at least 1 item" in msg


def test_too_many_seeds():
    msg = _error({"replicas": {"seeds": list(range(1025))}})
    assert "replicas.seeds = [0, 1, 2" in msg
    assert "at most 1024 items" in msg


def test_empty_lr_pairs():
    msg = _error({"replicas": {"lr_pairs": []}})
    assert "replicas.lr_pairs = []" in msg and "at least 1 item" in msg


def test_bad_seed_item_message_is_not_contradictory():
    """One bad item must not also be reported as 'at least 1 item ..., not 0' for a non-empty list."""
    msg = _error({"replicas": {"seeds": [1.5]}})
    assert "replicas.seeds.0 = 1.5" in msg and "valid integer" in msg
    assert "not 0" not in msg, msg


# ---------------------------------------------------------------------------- misc
def test_config_error_is_value_error():
    assert issubclass(ConfigError, ValueError)
    with pytest.raises(ValueError):
        RunConfig.from_dict({"optim": {"eta_y": -1}})


def test_several_problems_are_all_reported():
    msg = _error({"optim": {"eta_y": -1, "batch": 0}})
    assert "optim.eta_y = -1" in msg and "optim.batch = 0" in msg


def test_long_value_is_shortened():
    msg = _error({"data": {"num_last": "x" * 500}})
    assert len(msg) < 200 and "..." in msg


# ---------------------------------------------------------------------------- JSON
ROUND_TRIP = {
    "default": {},
    "table": _table([[1, 2, 0], [0, 1, 1], [3, 0, 1]], [0, 1, 0]),
    "T-inf": {"data": {"T": "inf"}, "model": {"kind": "yz-meanfield", "meanfield_decoder": "lemma3"}},
    "replicas": {"replicas": {"seeds": [3, 1, 2], "lr_pairs": [[1, 0.5], [10, 1]]}, "name": "sweep ∞"},
    "standard": {"model": {"kind": "standard", "init": "normal", "d": 16, "dtype": "float64"}},
    "adam": {"optim": {"method": "adam", "eta_y": 0.1, "eta_z": 0.1, "beta2": 0.99, "eps": 1e-6}},
}


@pytest.mark.parametrize("d", ROUND_TRIP.values(), ids=list(ROUND_TRIP))
def test_json_round_trip(d):
    cfg = RunConfig.from_dict(d)
    back = RunConfig.from_json(cfg.to_json())
    assert back == cfg
    assert back.to_json() == cfg.to_json()
    assert RunConfig.from_json(cfg.to_json(indent=None)) == cfg
    assert RunConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize("name", sorted(load_presets()))
def test_json_round_trip_presets(name):
    cfg = load_presets()[name].config
    assert RunConfig.from_json(cfg.to_json()) == cfg


def test_to_json_is_plain_json():
    d = json.loads(RunConfig.from_dict({"data": {"T": "inf"}}).to_json())
    assert d["data"]["T"] == "inf"
    assert set(d) == set(RunConfig.model_fields)


@pytest.mark.parametrize("text", ["{bad", "", "{'a': 1}", "[" * 100_000])
def test_from_json_invalid(text):
    with pytest.raises(ConfigError, match="config is not valid JSON"):
        RunConfig.from_json(text)


@pytest.mark.parametrize("text", ["[]", "[1, 2]", '"abc"', "3", "null"])
def test_from_json_not_an_object(text):
    with pytest.raises(ConfigError) as exc:
        RunConfig.from_json(text)
    msg = str(exc.value)
    assert "must be an object" in msg
    for k in RunConfig.model_fields:
        assert k in msg


def test_from_json_unknown_key():
    with pytest.raises(ConfigError, match=r"optim\.lr: unknown key; allowed keys: method, eta_y"):
        RunConfig.from_json('{"optim": {"lr": 1}}')


# ---------------------------------------------------------------------------- overrides
def test_with_overrides_dotted_and_json_values():
    base = RunConfig()
    cfg = base.with_overrides(
        {
            "optim.eta_y": "10",
            "optim.method": "adam",
            "data.T": "inf",
            "replicas.seeds": "[1, 2, 3]",
            "replicas.lr_pairs": "[[1, 0.5]]",
            "snapshots.linear_every": "2",
            "name": "my run",
            "optim.steps": 7,
        }
    )
    assert cfg.optim.eta_y == 10.0 and isinstance(cfg.optim.eta_y, float)
    assert cfg.optim.method == "adam"
    assert cfg.data.T == "inf"
    assert cfg.replicas.seeds == (1, 2, 3)
    assert cfg.replicas.lr_pairs == ((1.0, 0.5),)
    assert cfg.snapshots.linear_every == 2
    assert cfg.name == "my run"
    assert cfg.optim.steps == 7
    assert base == RunConfig(), "with_overrides must not change the original"
    assert cfg.with_overrides({"replicas.lr_pairs": "null"}).replicas.lr_pairs is None
    assert cfg.with_overrides({}) == cfg


def test_with_overrides_numeric_looking_string_field():
    """``--set name=2024`` must name the run '2024', not fail because 2024 parses as a JSON number."""
    assert RunConfig().with_overrides({"name": "2024"}).name == "2024"


@pytest.mark.parametrize(
    ("key", "where", "keys"),
    [
        ("nokey", "config", sorted(RunConfig.model_fields)),
        ("optim.nokey", "optim", sorted(OptimConfig.model_fields)),
        ("data.nokey.deeper", "data", sorted(DataConfig.model_fields)),
        ("nosection.eta_y", "config", sorted(RunConfig.model_fields)),
    ],
)
def test_with_overrides_unknown_key_lists_available_keys(key, where, keys):
    with pytest.raises(ConfigError) as exc:
        RunConfig().with_overrides({key: "1"})
    assert str(exc.value) == f"unknown key {key!r}: {where} has keys {', '.join(keys)}"


def test_with_overrides_below_a_leaf():
    with pytest.raises(ConfigError, match=r"unknown key 'optim\.eta_y\.x': optim\.eta_y has keys \(none\)"):
        RunConfig().with_overrides({"optim.eta_y.x": "1"})


@pytest.mark.parametrize(
    ("key", "value", "expect"),
    [
        ("optim.eta_y", "-1", "optim.eta_y = -1: Input should be greater than 0"),
        ("optim.eta_y", "NaN", "optim.eta_y = nan: Input should be a finite number"),
        ("data.T", "1", "data.T = 1: T must be an integer"),
        ("model.kind", "standard", "init='zero' is a saddle point"),
        ("replicas.seeds", "[]", "replicas.seeds = []"),
        ("optim.method", "rmsprop", "optim.method = 'rmsprop': Input should be 'sgd' or 'adam'"),
    ],
)
def test_with_overrides_invalid_value(key, value, expect):
    with pytest.raises(ConfigError) as exc:
        RunConfig().with_overrides({key: value})
    assert expect in str(exc.value)


# ---------------------------------------------------------------------------- frozen
def test_frozen():
    cfg = RunConfig()
    with pytest.raises(ValidationError, match="frozen"):
        cfg.name = "x"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        cfg.optim.eta_y = 2.0  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        cfg.data.T = 64  # type: ignore[misc]
    assert cfg == RunConfig()
    assert hash(cfg) == hash(RunConfig())
