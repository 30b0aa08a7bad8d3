"""The one registry of metric names (no torch: the web process imports it).

Every metric the engine records has one name here, used verbatim as the store's ``metric``
column, the export's column value, the CLI table's row and the key of a chart's trace;
:data:`METRICS` gives each its human-readable label (the paper's symbols) for chart axes and
legends.  The tensors behind them are computed in :mod:`engine.core.stats` (synthetic runs) and
:mod:`engine.core.text.metrics` (real text; ``train_loss`` there is the mean mini-batch loss since
the previous snapshot).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """A recorded quantity: its name, a label in the paper's symbols, whether it is per class n
    (synthetic runs), whether it is per layer (real-text runs), and which kinds of run record it."""

    name: str
    label: str
    per_class: bool
    per_layer: bool = False
    kinds: tuple[str, ...] = ("synthetic",)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("loss", "population loss (T→∞, nats)", False),
        Metric("accuracy", "population accuracy", False),
        Metric("train_loss", "mini-batch training loss (nats)", False, kinds=("synthetic", "text")),
        # real text (engine.core.text.metrics): per layer, and per head when a layer has several
        Metric("attn_entropy", "attention entropy (nats)", False, True, ("text",)),
        Metric("attn_share_frequent", "attention on frequent tokens", False, True, ("text",)),
        Metric("val_loss", "validation loss (nats)", False, kinds=("text",)),
        Metric("val_ppl", "validation perplexity", False, kinds=("text",)),
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
    )
}


def label(name: str) -> str:
    """The human-readable label of a metric name (the name itself when it is not registered)."""
    return METRICS[name].label if name in METRICS else name


def metric_names(kind: str) -> list[str]:
    """The metrics a run of ``kind`` (``synthetic`` or ``text``) records, in registry order."""
    return [m.name for m in METRICS.values() if kind in m.kinds]
