"""The metrics a synthetic run records (their tensors: :mod:`scansnap.kinds.synthetic.science.stats`;
the calibrated Theorem 4 curves: :mod:`scansnap.kinds.synthetic.science.theory`)."""

from scansnap.core.metrics import Metric

METRICS = (
    Metric("loss", "population loss (T→∞, nats)", False, log=True),
    Metric("accuracy", "population accuracy", False),
    Metric("train_loss", "mini-batch training loss (nats)", False, log=True),
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
