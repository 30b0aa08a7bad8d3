"""The metrics a real-text run records (their tensors: :mod:`scansnap.kinds.text.science.metrics`;
``train_loss`` is the mean mini-batch loss since the previous snapshot).  The attention ones are per
layer, and per head when a layer has several."""

from scansnap.core.metrics import Metric

METRICS = (
    Metric("train_loss", "mini-batch training loss (nats)", False, log=True),
    Metric("attn_entropy", "attention entropy (nats)", False, per_layer=True),
    Metric("attn_share_frequent", "attention on frequent tokens", False, per_layer=True),
    Metric("attn_share_common", "attention on common tokens", False, per_layer=True),
    Metric("attn_share_distinct", "attention on distinct tokens", False, per_layer=True),
    Metric("val_loss", "validation loss (nats)", False, log=True),
    Metric("val_ppl", "validation perplexity", False, log=True),
)
