"""The one registry of metric names (no torch: the web process imports it).

Every metric the engine records has one name here, used verbatim as the store's ``metric``
column, the export's column value, the CLI table's row and the key of a chart's trace;
:data:`METRICS` gives each its human-readable label (the paper's symbols, plain Unicode: no LaTeX)
for chart axes, legends and select boxes, and whether a chart draws it on a log axis.  The tensors
behind them are computed in :mod:`scansnap.kinds.synthetic.science.stats` (synthetic runs) and
:mod:`scansnap.kinds.text.science.metrics` (real text; ``train_loss`` there is the mean mini-batch loss since
the previous snapshot).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """A recorded quantity: its name, a label in the paper's symbols, whether it is per class n
    (synthetic runs), whether it is per layer (real-text runs), which kinds of run record it, and
    whether charts draw it on a log axis (it spans decades and tends to 0: a loss)."""

    name: str
    label: str
    per_class: bool
    per_layer: bool = False
    kinds: tuple[str, ...] = ("synthetic",)
    log: bool = False


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("loss", "population loss (T→∞, nats)", False, log=True),
        Metric("accuracy", "population accuracy", False),
        Metric("train_loss", "mini-batch training loss (nats)", False, kinds=("synthetic", "text"), log=True),
        # real text (scansnap.kinds.text.science.metrics): per layer, and per head when a layer has several
        Metric("attn_entropy", "attention entropy (nats)", False, True, ("text",)),
        Metric("attn_share_frequent", "attention on frequent tokens", False, True, ("text",)),
        Metric("attn_share_common", "attention on common tokens", False, True, ("text",)),
        Metric("attn_share_distinct", "attention on distinct tokens", False, True, ("text",)),
        Metric("val_loss", "validation loss (nats)", False, kinds=("text",), log=True),
        Metric("val_ppl", "validation perplexity", False, kinds=("text",), log=True),
        Metric("entropy_distinct", "attention entropy H(c_n) on distinct tokens (nats)", True),
        Metric("entropy_all", "attention entropy H(c_n) on all tokens (nats)", True),
        Metric("common_mass", "attention on common tokens Σ_CT c(l|n)", True),
        Metric("B_hat", "total growth B̂_n of the distinct logits, measured", True),
        Metric("dz_dominant", "logit change Δz of the dominant distinct token l₀", True),
        Metric("bracket_lo", "Thm 3 lower bracket f_nl₀(0)² × total growth B̂_n", True),
        Metric("rel_gain", "relative gain r(l₀/l₁ | n)", True),
        Metric("rel_gain_pred", "predicted gain r(0)·exp(2Δz_l₀) from the logit change", True),
        Metric("share_distinct_up", "share of distinct tokens whose logit rose (Δz > 0)", True),
        Metric("share_common_down", "share of common tokens whose logit fell (Δz < 0)", True),
        Metric("dz_common", "the common token's logit drop −Δz, measured", True),
        Metric("B_theory", "total growth B_n, calibrated Theorem 4", False),
        Metric("dz_common_theory", "the common token's logit drop −Δz, calibrated Theorem 4", False),
    )
}
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
    """The metrics a run of ``kind`` (``synthetic`` or ``text``) records, in registry order."""
    return [m.name for m in METRICS.values() if kind in m.kinds]


def shared_metrics(kinds: set[str] | frozenset[str]) -> list[str]:
    """The metrics that runs of every one of ``kinds`` record (what they can be overlaid on), in
    registry order: all of a kind's own for one kind; for synthetic and real-text runs together,
    only ``train_loss``."""
    return [m.name for m in METRICS.values() if kinds <= set(m.kinds)]
