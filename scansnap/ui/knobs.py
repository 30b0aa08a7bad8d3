"""Every knob of the Lab, declared once, and the Lab's URL parameters that are not config keys.

The URL ⇄ config table itself is :class:`scansnap.ui.url_state.UrlState` (one for every kind's page).  The
Lab's UI-only params: ``run`` (a run id to reopen), ``lecture=1``, ``show`` (a comma list of knob keys
to show), ``speed`` (steps/s), ``lock`` (η_Y/η_Z ratio lock) and the view (``n``, ``q``,
``replica``, ``at`` = the scrubbed step, ``charts`` = the charts shown).  No Streamlit here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scansnap.core.config import get_dotted
from scansnap.service.facade import STORY, STORY_S
from scansnap.ui.text import shown

VIEW_PARAMS = (
    "n",
    "q",
    "replica",
    "at",
    "charts",
    "theory",
)  # what the live area shows: scansnap.kinds.synthetic.ui.state.view_from_params
UI_PARAMS = ("preset", "run", "lecture", "show", "speed", "lock", *VIEW_PARAMS)
DEFAULT_PRESET = "syn-small"
LECTURE_PRESET = "lecture"  # what ?lecture=1 alone opens
ETA_GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)
# steps/s, slow to fast (left to right); "story": story time, the whole run in STORY_S seconds, each
# tenfold of steps as long (scansnap/service/pacing.py), the pace a lecture narrates at
SPEEDS = (STORY, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, "max")
RATIOS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)  # η_Y/η_Z choices of the ratio lock


@dataclass(frozen=True)
class Knob:
    """One setting: dotted config key, label, widget kind, options, section, advanced flag,
    and ``when`` = ((key, allowed values), …) for knobs that only matter in some setups (all must hold)."""

    key: str
    label: str
    kind: str  # int, float, select, text, eta, seed, replicas
    options: tuple = ()
    section: str = "data"
    advanced: bool = False
    when: tuple[tuple[str, tuple], ...] = ()
    help: str | None = None


def _k(
    key: str,
    label: str,
    kind: str,
    options: tuple = (),
    section: str = "data",
    advanced: bool = False,
    when: tuple[tuple[str, tuple], ...] = (),
    help: str | None = None,
) -> Knob:
    return Knob(key, label, kind, options, section, advanced, when, help)


GEN = (("data.source", ("generator",)),)  # the generator's knobs: hidden in table mode


def gen_when(key: str, *allowed: str) -> tuple[tuple[str, tuple], ...]:
    """A generator knob that matters only when ``key`` is one of ``allowed``."""
    return (*GEN, (key, allowed))


KNOBS: tuple[Knob, ...] = (
    _k("data.source", "P(l|n) source", "select", ("generator", "table"), help="table: edit P(l|n) directly"),
    _k("data.num_last", "query tokens Q (num_last)", "int", when=GEN),
    _k("data.num_next_per_last", "next tokens per query |ψ⁻¹(m)|", "int", when=GEN),
    _k("data.num_common", "global common tokens", "int", when=GEN),
    _k("data.num_common_per_last", "common tokens per query", "int", advanced=True, when=GEN),
    _k("data.num_distinct_per_next", "distinct tokens per class", "int", when=GEN),
    _k("data.distinct_weights", "distinct weights", "select", ("linspace", "uniform", "zipf", "dirichlet"), when=GEN),
    _k("data.distinct_min", "distinct_min", "float", when=gen_when("data.distinct_weights", "linspace")),
    _k("data.distinct_max", "distinct_max", "float", when=gen_when("data.distinct_weights", "linspace")),
    _k("data.zipf_s", "zipf exponent s", "float", when=gen_when("data.distinct_weights", "zipf")),
    _k("data.dirichlet_alpha", "dirichlet α", "float", when=gen_when("data.distinct_weights", "dirichlet")),
    _k("data.dirichlet_seed", "dirichlet seed", "int", when=gen_when("data.distinct_weights", "dirichlet")),
    _k("data.common_weight", "common token weight", "float", advanced=True, when=GEN),
    _k("data.T", "context length T (or inf)", "text", help="an integer ≥ 2, or inf for T→∞"),
    _k("data.layout", "token layout", "select", ("paper", "compact"), advanced=True),
    _k("model.kind", "model", "select", ("yz", "yz-meanfield", "standard"), section="train"),
    _k(
        "model.meanfield_decoder",
        "mean-field decoder",
        "select",
        ("plain", "lemma3"),
        "train",
        True,
        (("model.kind", ("yz-meanfield",)),),
    ),
    _k("model.d", "embedding dim d", "int", (), "train", True, (("model.kind", ("standard",)),)),
    _k("model.init", "init", "select", ("zero", "torch-default", "normal"), section="train"),
    _k("model.init_std", "init std", "float", (), "train", True, (("model.init", ("normal",)),)),
    _k("optim.eta_z", "η_Z (attention)", "eta", section="train"),
    _k("optim.eta_y", "η_Y (decoder)", "eta", section="train"),
    _k("optim.method", "optimizer", "select", ("sgd", "adam"), section="train"),
    _k("optim.momentum", "momentum", "float", (), "train", False, (("optim.method", ("sgd",)),)),
    _k("optim.beta1", "Adam β1", "float", (), "train", True, (("optim.method", ("adam",)),)),
    _k("optim.beta2", "Adam β2", "float", (), "train", True, (("optim.method", ("adam",)),)),
    _k("optim.eps", "Adam ε", "float", (), "train", True, (("optim.method", ("adam",)),)),
    _k("optim.weight_decay", "weight decay", "float", (), "train", True),
    _k("optim.batch", "batch", "int", section="train"),
    _k("optim.steps", "steps", "int", section="train"),
    _k("replicas.seeds", "seed", "seed", section="train"),
    _k("replicas.count", "replicas (consecutive seeds)", "replicas", section="train", advanced=True),
    _k("model.dtype", "dtype", "select", ("float32", "float64"), "train", True),
    _k("model.device", "device", "select", ("auto", "cpu", "cuda"), "train", True),
    _k("snapshots.linear_every", "snapshot every N steps (empty: none)", "text", (), "train", True),
    _k("snapshots.log_count", "log-spaced snapshots", "int", (), "train", True),
    _k("snapshots.max_count", "max snapshots", "int", (), "train", True),
    _k("name", "run name", "text", section="train", advanced=True),
)


def choice(value: str | None, options: tuple, name: str, default: Any, problems: list[str]) -> Any:
    """A URL value that must be one of a slider's ``options`` (compared as numbers where they are):
    the option, or ``default`` with a problem naming what is allowed."""
    if value is None:
        return default
    for opt in options:
        if str(opt) == value or (not isinstance(opt, str) and _as_float(value) == float(opt)):
            return opt
    allowed = ", ".join(str(o) for o in options)
    problems.append(f"{name} = {shown(value)} is not one of {allowed}: using {default}")
    return default


def _as_float(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def eta_options(value: float) -> list[float]:
    """The log-spaced grid plus the current value (so any URL value is selectable)."""
    return sorted({*ETA_GRID, float(value)})


def visible(knob: Knob, cfg: dict[str, Any], lecture: bool, show: set[str] | None) -> bool:
    if show is not None:
        return knob.key in show
    if lecture and knob.advanced:
        return False
    return all(get_dotted(cfg, key) in allowed for key, allowed in knob.when)


def speed_options(cur: Any) -> list[Any]:
    """The speed slider's options, slow to fast, with ``cur`` (a run's own speed) among them."""
    if cur in SPEEDS:
        return list(SPEEDS)
    return [STORY, *sorted([*(s for s in SPEEDS if not isinstance(s, str)), cur]), "max"]


def speed_value(option: Any) -> float | str | None:
    """What the service is told for a speed option: None for "max", "story", or steps/s."""
    return None if option == "max" else STORY if option == STORY else float(option)


def speed_label(option: Any) -> str:
    """A speed option in words (the slider and the Runs page)."""
    if option == "max":
        return "max speed"
    return f"story time ({STORY_S:g} s)" if option == STORY else f"{option:g} steps/s"


def status_speed(status: Any) -> Any:
    """A live run's speed as a slider option: "story", "max", or its steps/s."""
    if getattr(status, "story", False):
        return STORY
    return "max" if status.speed is None else next((v for v in SPEEDS if v == status.speed), status.speed)
