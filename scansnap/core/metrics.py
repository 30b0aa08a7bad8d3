"""The metric catalogue (no torch: the web process imports it).

Every metric a kind of run records has one name, used verbatim as the store's ``metric`` column, the
export's column value, the CLI table's row and the key of a chart's trace.  Each kind declares its own
as its science's ``METRICS`` (:class:`Metric`: a human-readable label in the paper's symbols, plain
Unicode, no LaTeX, for chart axes, legends and select boxes, and whether a chart draws it on a log
axis); :data:`METRICS` here is all of them by name, found through :mod:`scansnap.registry`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache

from scansnap.registry import kind_packages, kind_part


@dataclass(frozen=True)
class Metric:
    """A recorded quantity: its name, a label in the paper's symbols, whether it is per class n
    (synthetic runs), whether it is per layer (real-text runs), and whether charts draw it on a log axis
    (it spans decades and tends to 0: a loss)."""

    name: str
    label: str
    per_class: bool
    per_layer: bool = False
    log: bool = False


@cache
def _recorded(packages: tuple[str, ...]) -> dict[str, tuple[Metric, ...]]:
    """Each kind's metrics by its name: its science's ``METRICS`` (:mod:`scansnap.registry`)."""
    return {p.rsplit(".", 1)[-1]: tuple(kind_part(p, "science", "METRICS") or ()) for p in packages}


def recorded() -> dict[str, tuple[Metric, ...]]:
    """The metrics each kind of run records, by kind, in each kind's order."""
    return _recorded(kind_packages())


@cache
def _by_name(packages: tuple[str, ...]) -> dict[str, Metric]:
    out: dict[str, Metric] = {}
    for metrics in _recorded(packages).values():
        for m in metrics:
            out.setdefault(m.name, m)
    return out


class _Catalogue(Mapping[str, Metric]):
    """Every kind's metrics by name (a name two kinds record, once: the first kind's)."""

    def __getitem__(self, name: str) -> Metric:
        return _by_name(kind_packages())[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_by_name(kind_packages()))

    def __len__(self) -> int:
        return len(_by_name(kind_packages()))


METRICS: Mapping[str, Metric] = _Catalogue()
_SUBSCRIPT = re.compile(r"_([^\W_]+)")  # x_n, η_Y, f_nl₀: the run of letters/digits after "_"


def label(name: str) -> str:
    """The human-readable label of a metric name (the name itself when it is not registered)."""
    return METRICS[name].label if name in METRICS else name


_UNIT = re.compile(r"(?: \(|, )(nats)\)$")  # "… (nats)", "… (T→∞, nats)": the unit closes the label


def unit(name: str) -> str:
    """The unit a metric's label names at its end (``"nats"``), or "" for a unitless one."""
    m = _UNIT.search(label(name))
    return m.group(1) if m else ""


def bare_label(name: str) -> str:
    """:func:`label` without its unit: ``"attention entropy (nats)"`` → ``"attention entropy"``,
    ``"population loss (T→∞, nats)"`` → ``"population loss (T→∞)"``."""
    text = label(name)
    m = _UNIT.search(text)
    if m is None:
        return text
    return text[: m.start()] + (")" if m.group(0).startswith(",") else "")


def html_subscripts(text: str) -> str:
    """``x_ab`` → ``x<sub>ab</sub>``: plotly renders the subscript (it has no LaTeX without MathJax)."""
    return _SUBSCRIPT.sub(r"<sub>\1</sub>", text)


def html_label(name: str) -> str:
    """:func:`label` for figure text: subscripts as HTML (``H(c_n)`` → ``H(c<sub>n</sub>)``)."""
    return html_subscripts(label(name))


def is_log(name: str) -> bool:
    """Whether charts draw the metric on a log axis (registered as such)."""
    return name in METRICS and METRICS[name].log


def metric_names(kind: str) -> list[str]:
    """The metrics a run of ``kind`` records, in its kind's order (none for a kind not registered)."""
    return [m.name for m in recorded().get(kind, ())]


def shared_metrics(kinds: set[str] | frozenset[str]) -> list[str]:
    """The metrics that runs of every one of ``kinds`` record (what they can be overlaid on), in the
    first kind's order (by name): all of a kind's own for one kind; for synthetic and real-text runs
    together, only ``train_loss``."""
    names = [metric_names(k) for k in sorted(kinds)]
    return [n for n in names[0] if all(n in other for other in names[1:])] if names else []
