"""What every kind's run configuration shares (pydantic v2): frozen, validated, unknown keys rejected.

A kind's config (a :class:`RootConfig`) round-trips through JSON
(``to_json`` / ``from_json``) and through flat ``key=value`` pairs (``with_overrides``), which is what
the CLI's ``--set`` and the dashboard's URL use.  Errors are re-raised as :class:`ConfigError` whose
message names the field, the value and what is allowed.
"""

from __future__ import annotations

import json
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MAX_SEED = 2**31 - 1
MAX_STEPS = 10**7  # optimiser steps of one run (the schema's bound; a server may allow fewer)


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
            raise config_error(e, cls) from None

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


class SnapshotConfig(FrozenConfig):
    """Snapshot schedule: every ``linear_every`` steps plus ``log_count`` log-spaced steps,
    thinned to at most ``max_count`` (step 0 and the last step always included)."""

    linear_every: int | None = Field(None, ge=1, le=MAX_STEPS)  # more than the run's steps: only 0 and the end
    log_count: int = Field(60, ge=0, le=2000)
    max_count: int = Field(300, ge=2, le=2000)


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


def config_error(e: ValidationError, root: type[BaseModel]) -> ConfigError:
    """The ConfigError of a failed validation of a ``root`` config: its lines, and each line's place."""
    places = tuple(validation_places(e, root))
    return ConfigError("; ".join(line for _, line in places), places)


def validation_places(e: ValidationError, root: type[BaseModel]) -> list[tuple[str, str]]:
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
            msg = f"unknown key; allowed keys: {', '.join(_allowed_keys(root, tuple(map(str, err['loc'][:-1]))))}"
            out.append((place, f"{loc}: {msg}"))
            continue
        msg = msg.removeprefix("Value error, ")
        if isinstance(value, dict):  # a rule across fields: the message names them and their values
            out.append((place, f"{loc}: {msg}"))
            continue
        out.append((place, f"{loc} = {shown}: {msg}"))
    return out


def _allowed_keys(root: type[BaseModel], parent: tuple[str, ...]) -> list[str]:
    model = root
    for part in parent:
        if part not in model.model_fields:
            return []
        ann = model.model_fields[part].annotation
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        model = ann
    return list(model.model_fields)


def _field_metadata(key: str, root: type[BaseModel]) -> list[Any]:
    """The constraints (``Field(ge=…, max_length=…)``) the schema ``root`` puts on dotted key ``key``."""
    model: type[BaseModel] = root
    *path, last = key.split(".")
    for part in path:
        ann = model.model_fields[part].annotation
        assert isinstance(ann, type) and issubclass(ann, BaseModel), key
        model = ann
    return list(model.model_fields[last].metadata)


def field_bounds(key: str, root: type[BaseModel]) -> tuple[float | None, float | None]:
    """(lowest, highest) value the schema ``root`` (a kind's config class) allows for dotted key ``key``
    (None where unbounded); a strict bound (gt / lt) is returned as is, so callers must step inside
    it themselves."""
    lo = hi = None
    for m in _field_metadata(key, root):
        lo = getattr(m, "ge", getattr(m, "gt", lo))
        hi = getattr(m, "le", getattr(m, "lt", hi))
    return lo, hi


def field_max_length(key: str, root: type[BaseModel]) -> int:
    """The most items the schema ``root`` allows in the list at dotted key ``key`` (its ``max_length``)."""
    most = [m.max_length for m in _field_metadata(key, root) if getattr(m, "max_length", None) is not None]
    assert most, f"{key} has no max_length"
    return int(most[0])
