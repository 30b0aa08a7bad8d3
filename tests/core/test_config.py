"""Tests of scansnap.core.config: every validation rule, its message, JSON round trips, overrides, immutability.

Every rejected config must raise :class:`ConfigError` whose message names the field, the offending value
and what is allowed (e.g. ``data.num_last = 0: Input should be greater than or equal to 1``).
"""

from __future__ import annotations

import json
import math
import re
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from scansnap.core.config import ConfigError, SnapshotConfig
from scansnap.kinds.synthetic.science.config import (
    MAX_T,
    DataConfig,
    ModelConfig,
    OptimConfig,
    ReplicaConfig,
    RunConfig,
)
from scansnap.kinds.synthetic.science.data import build_problem
from scansnap.paper.presets import load_presets

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


# ---------------------------------------------------------------------------- field bounds, generated
# Every bound below is read from the pydantic fields themselves (``model_fields[...].metadata``: ge/gt/le/lt,
# min/max length; ``Literal`` choices; the annotated element types inside tuples), never retyped here.
# For each bound the value just inside must validate and the value just outside must raise ConfigError
# whose one-line message names the field (dotted path), the value and what is allowed.

ALLOWED_WORDS = {  # pydantic's wording of each constraint, as the user reads it
    "ge": "greater than or equal to",
    "gt": "greater than",
    "le": "less than or equal to",
    "lt": "less than",
    "min_length": "at least",
    "max_length": "at most",
}


@dataclass(frozen=True)
class Slot:
    """One place a user can put a value: a field, or an element of a tuple field."""

    path: str  # dotted, as the error message names it ("optim.eta_y", "replicas.lr_pairs.0.1")
    kind: object  # the annotation without Optional: int, float, str, tuple[...], Literal[...]
    constraints: tuple  # annotated_types objects (Ge, Gt, Le, Lt, MinLen, MaxLen, AllowInfNan)
    build: Callable[[object], dict]  # the config dict with ``value`` at this slot

    def bounds(self) -> list[tuple[str, object]]:
        """(name, bound) for every ge/gt/le/lt/min_length/max_length constraint of the slot."""
        return [(k, getattr(c, k)) for c in self.constraints for k in ALLOWED_WORDS if hasattr(c, k)]


def _without_none(ann: object) -> object:
    args = typing.get_args(ann)
    if typing.get_origin(ann) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return rest[0] if len(rest) == 1 else ann
    return ann


def _unannotated(ann: object) -> tuple[object, tuple]:
    """``Annotated[float, Field(gt=0)]`` → (float, (Gt(0),)); anything else → (ann, ())."""
    if typing.get_origin(ann) is not typing.Annotated:
        return ann, ()
    base, *extras = typing.get_args(ann)
    meta: list = []
    for x in extras:
        meta += x.metadata if isinstance(x, FieldInfo) else [x]
    return base, tuple(meta)


def _variable_length(ann: object) -> bool:
    """``tuple[X, ...]`` (a list of any length); a fixed ``tuple[X, Y]`` has its length in its type."""
    args = typing.get_args(ann)
    return typing.get_origin(ann) is tuple and len(args) == 2 and args[1] is Ellipsis


def _tuple_items(ann: object) -> list[tuple[int, object]] | None:
    """The element annotations of a tuple type by index (``tuple[X, ...]``: one element, index 0)."""
    if typing.get_origin(ann) is not tuple:
        return None
    args = typing.get_args(ann)
    return [(0, args[0])] if _variable_length(ann) else list(enumerate(args))


def _slots_of(path: str, ann: object, constraints: tuple, build: Callable[[object], dict]) -> Iterator[Slot]:
    ann, extra = _unannotated(_without_none(ann))
    slot = Slot(path, ann, constraints + extra, build)
    yield slot
    items = _tuple_items(ann)
    for i, item in items or ():
        if len(items) == 1:  # tuple[X, ...]: a one-element tuple holding the value
            inner = lambda v, build=build: build([v])
        else:  # a fixed tuple: the other positions hold valid values
            inner = lambda v, i=i, build=build, items=items: build([v if j == i else _valid(a) for j, a in items])
        yield from _slots_of(f"{path}.{i}", item, (), inner)


def _slots(model: type[BaseModel] = RunConfig, prefix: str = "") -> Iterator[Slot]:
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            yield from _slots(field.annotation, f"{path}.")
        else:
            yield from _slots_of(path, field.annotation, tuple(field.metadata), lambda v, path=path: _nested(path, v))


def _valid(ann: object) -> object:
    """Some value inside every bound of ``ann`` (to fill a list, or the other positions of a fixed tuple)."""
    ann, meta = _unannotated(_without_none(ann))
    items = _tuple_items(ann)
    if items is not None and not _variable_length(ann):
        return [_valid(a) for _, a in items]
    inside = [v for _, v, ok in _cases(Slot("", ann, meta, lambda v: {})) if ok]
    return inside[0] if inside else (1.0 if ann is float else 1)


def _beside(bound: object, kind: object, direction: int) -> object:
    """The nearest value of the slot's type to ``bound`` on one side: ±1 for an int, the next float."""
    if kind is int:
        return bound + direction
    return math.nextafter(float(bound), direction * math.inf)


def _cases(slot: Slot) -> Iterator[tuple[str, object, bool]]:
    """(bound name, value, inside?) just inside and just outside each bound of the slot."""
    for name, b in slot.bounds():
        if name in ("min_length", "max_length"):
            element = _tuple_items(slot.kind)
            fill = "x" if slot.kind is str else _valid(element[0][1]) if element else 1
            make = (lambda n, fill=fill: fill * n) if slot.kind is str else (lambda n, fill=fill: [fill] * n)
            yield name, make(b), True
            if name == "max_length" or b > 0:
                yield name, make(b + 1 if name == "max_length" else b - 1), False
            continue
        kind = int if slot.kind is int else float
        b = kind(b)
        if name in ("ge", "le"):
            yield name, b, True
            yield name, _beside(b, kind, -1 if name == "ge" else 1), False
        else:  # gt, lt: the bound itself is outside
            yield name, _beside(b, kind, 1 if name == "gt" else -1), True
            yield name, b, False


SLOTS = {s.path: s for s in _slots()}
BOUND_CASES = [(s.path, name, v, ok) for s in SLOTS.values() for name, v, ok in _cases(s)]
CHOICES = {p: typing.get_args(s.kind) for p, s in SLOTS.items() if typing.get_origin(s.kind) is typing.Literal}
# Cross-field rules (model validators, tested in "table mode" below) that a value needs to be usable:
COMPANIONS: dict[tuple[str, object], dict] = {
    ("data.source", "table"): {"data": {"table": [[1.0]], "psi": [0]}},
    ("model.kind", "standard"): {"model": {"init": "normal"}},  # init='zero' is refused for it
}
# distinct_min ≤ distinct_max is checked for linspace weights only: test each bound on its own
COMPANIONS_BY_PATH = {p: {"data": {"distinct_weights": "uniform"}} for p in ("data.distinct_min", "data.distinct_max")}
# The generator's sizes are also bounded together (M_ctx ≤ MAX_VOCAB, K·M_ctx ≤ MAX_TABLE_CELLS): each
# size is tested at its own bound with the others at their smallest.
SMALLEST_SIZES = {
    "num_last": 1,
    "num_next_per_last": 1,
    "num_common": 0,
    "num_common_per_last": 0,
    "num_distinct_per_next": 1,
}
COMPANIONS_BY_PATH |= {
    f"data.{k}": {"data": {o: v for o, v in SMALLEST_SIZES.items() if o != k}} for k in SMALLEST_SIZES
}


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _config_with(path: str, value: object) -> dict:
    key = (path, value) if isinstance(value, str) else None
    extra = COMPANIONS.get(key, COMPANIONS_BY_PATH.get(path, {}))
    return _merge(SLOTS[path].build(value), extra)


def _read(cfg: RunConfig, path: str) -> object:
    node: object = cfg
    for part in path.split("."):
        node = node[int(part)] if part.isdigit() else getattr(node, part)
    return node


def _shown(value: object) -> str:
    """The start of the value as the message shows it (long values are cut short)."""
    return repr(value)[:40]


def _allowed_number(msg: str, name: str) -> float:
    """The number that follows pydantic's wording of constraint ``name`` in the message."""
    found = re.search(re.escape(ALLOWED_WORDS[name]) + r" (-?[0-9][0-9.e+-]*)", msg)
    assert found, f"the message does not say what is allowed ({ALLOWED_WORDS[name]} …): {msg}"
    return float(found.group(1))


def _case_id(path: str, name: str, value: object, ok: bool) -> str:
    shown = f"len {len(value)}" if isinstance(value, str | list) else repr(value)
    return f"{path}-{name}-{'in' if ok else 'out'}-{shown}"


def test_every_number_string_and_list_has_a_bound_or_a_rule_of_its_own():
    """A field added without a bound must be noticed: it either has one (and is tested by the generated
    cases below) or its rule is a validator with tests of its own."""
    own_rules = {"data.table", "data.table.0", "data.table.0.0", "data.psi", "data.psi.0", "replicas.seeds.0"}
    unbounded = {
        p for p, s in SLOTS.items() if (s.kind in (int, float, str) or _variable_length(s.kind)) and not s.bounds()
    }
    assert unbounded == own_rules  # _check_table and _seeds, tested below
    lists = [s for s in SLOTS.values() if _variable_length(s.kind) and s.bounds()]
    for s in lists:  # a run needs at least one seed and one (η_Y, η_Z) pair, and a cap on how many
        assert dict(s.bounds()).get("min_length", 0) >= 1 and "max_length" in dict(s.bounds()), s.path
    assert typing.get_origin(SLOTS["data.T"].kind) is typing.Union  # int | 'inf', checked by _parse_T
    assert len(BOUND_CASES) > 2 * len(SLOTS)  # the walk found the bounds (≈ 4 cases a bounded field)


@pytest.mark.parametrize(("path", "name", "value", "ok"), BOUND_CASES, ids=[_case_id(*c) for c in BOUND_CASES])
def test_bound_just_inside_validates_and_just_outside_is_refused(path, name, value, ok):
    bound = dict(SLOTS[path].bounds())[name]
    if ok:
        got = _read(RunConfig.from_dict(_config_with(path, value)), path)
        assert got == value if not isinstance(value, list) else len(got) == len(value)
        return
    msg = _error(_config_with(path, value))
    assert f"{path} = {_shown(value)}" in msg
    if name in ("min_length", "max_length"):
        unit = "characters?" if SLOTS[path].kind is str else "items?"
        assert re.search(rf"{ALLOWED_WORDS[name]} {bound} {unit}\b", msg), msg
    else:
        assert _allowed_number(msg, name) == bound, msg


@pytest.mark.parametrize("path", sorted(CHOICES))
def test_every_choice_validates_and_another_lists_the_choices(path):
    for choice in CHOICES[path]:
        assert _read(RunConfig.from_dict(_config_with(path, choice)), path) == choice
    msg = _error(_config_with(path, "bogus"))
    assert f"{path} = 'bogus'" in msg
    for choice in CHOICES[path]:
        assert repr(choice) in msg, msg


INT_SLOTS = sorted(p for p, s in SLOTS.items() if s.kind is int)
FLOAT_SLOTS = sorted(p for p, s in SLOTS.items() if s.kind is float)


@pytest.mark.parametrize("path", INT_SLOTS)
def test_a_fraction_in_an_integer_field_is_refused(path):
    inside = next((v for n, v, ok in _cases(SLOTS[path]) if ok), 1)
    msg = _error(_config_with(path, inside + 0.5))
    assert f"{path} = {inside + 0.5!r}" in msg and "valid integer" in msg, msg


@pytest.mark.parametrize("path", FLOAT_SLOTS)
def test_text_in_a_number_field_is_refused(path):
    msg = _error(_config_with(path, "fast"))
    assert f"{path} = 'fast'" in msg and "valid number" in msg, msg


def test_text_in_an_integer_field_is_refused():
    msg = _error({"data": {"num_last": "abc"}})
    assert "data.num_last = 'abc'" in msg and "valid integer" in msg


# ---------------------------------------------------------------------------- NaN / inf
FINITE_ONLY = sorted(
    p
    for p, s in SLOTS.items()
    if s.kind is float and any(getattr(c, "allow_inf_nan", True) is False for c in s.constraints)
)


def test_every_float_is_finite_only():
    table_entries = "data.table.0.0"  # finite and ≥ 0 by _check_table: test_table_bad_entry
    assert [p for p in FLOAT_SLOTS if p != table_entries] == FINITE_ONLY


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("field", FINITE_ONLY)
def test_nan_and_inf_rejected(field, bad):
    msg = _error(_config_with(field, bad))
    assert f"{field} = {bad!r}" in msg


@pytest.mark.parametrize("field", FINITE_ONLY)
def test_nan_message_says_finite(field):
    """A NaN is not 'too large': the message must say that a finite number is needed."""
    msg = _error(_config_with(field, math.nan))
    assert "finite" in msg, msg


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


def test_class_and_query_counts_match_the_built_problem():
    """K and Q read from the config (for the Lab's link checks, without building P(l|n)) agree with
    the problem the trainer builds, in generator and table mode."""
    for data in (
        DataConfig(num_last=3, num_next_per_last=2),
        DataConfig(source="table", table=((1.0, 0.0), (0.5, 0.5), (0.0, 1.0)), psi=(0, 1, 1)),
    ):
        pb = build_problem(data)
        assert (data.num_classes, data.num_queries) == (pb.P.shape[0], int(pb.psi.max()) + 1)
        assert data.table_cells == pb.P.size


def test_field_max_length_reads_the_schemas_list_bound():
    """The Lab's replicas widget takes its upper bound from the config class, not from a constant of one kind."""
    from scansnap.core.config import field_max_length
    from scansnap.kinds.synthetic.science.config import MAX_SEEDS

    assert field_max_length("replicas.seeds", RunConfig) == MAX_SEEDS
    with pytest.raises(AssertionError, match="no max_length"):
        field_max_length("optim.momentum", RunConfig)
