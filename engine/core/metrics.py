"""The one registry of metric names (no torch: the web process imports it).

Every metric the engine records has one name here, used verbatim as the store's ``metric``
column, the export's column value, the CLI table's row and the key of a chart's trace;
:data:`METRICS` gives each its human-readable label (the paper's symbols) for chart axes and
legends.  The tensors behind them are computed in :mod:`engine.core.stats`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """A recorded quantity: its name, a label in the paper's symbols, and whether it is per class n."""

    name: str
    label: str
    per_class: bool


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("loss", "population loss (T→∞, nats)", False),
        Metric("accuracy", "population accuracy", False),
        Metric("train_loss", "mini-batch training loss (nats)", False),
        Metric("entropy_distinct", "H(c_n) on distinct tokens (nats)", True),
        Metric("entropy_all", "H(c_n) on all tokens (nats)", True),
        Metric("common_mass", "attention on common tokens Σ_CT c_{l|n}", True),
        Metric("B_hat", "B̂_n, measured growth of distinct logits", True),
        Metric("dz_dominant", "Δz of the dominant distinct token l₀", True),
        Metric("bracket_lo", "Thm 3 lower bracket f²_{nl₀}(0)·B̂_n", True),
        Metric("rel_gain", "relative gain r_{l₀/l₁|n}", True),
        Metric("rel_gain_pred", "predicted gain r(0)·e^{2Δz_{l₀}}", True),
        Metric("share_distinct_up", "share of distinct tokens with Δz > 0", True),
        Metric("share_common_down", "share of common tokens with Δz < 0", True),
        Metric("dz_common", "−Δz of the common token(s), measured", True),
        Metric("B_theory", "B_n, calibrated Theorem 4", False),
        Metric("dz_common_theory", "−Δz of the common token(s), calibrated Theorem 4", False),
    )
}


def label(name: str) -> str:
    """The human-readable label of a metric name (the name itself when it is not registered)."""
    return METRICS[name].label if name in METRICS else name
