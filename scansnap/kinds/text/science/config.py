"""Validated, frozen configuration of a real-text run (pydantic v2, like ``scansnap.core.config``).

``TextRunConfig`` = data (which corpus, vocabulary cap) + model (the causal Transformer) +
optim (optimiser, the three learning rates, StepLR, clipping, batch × bptt, steps) + probe (what
the snapshots measure) + snapshots (the schedule).  Unknown keys and bad values raise
:class:`~scansnap.core.config.ConfigError` naming the field, the value and what is allowed.
Defaults are the paper's Fig. 7 run (science §5): emsize 200, d_hid 200, 1 head, dropout 0.3,
sinusoidal PE, post-LN, SGD lr 5 (lr 10 on the MLP), StepLR γ = 0.95 per epoch, clip 0.5,
batch 20 × bptt 35.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from scansnap.core.config import ConfigError, FrozenConfig, RootConfig, SnapshotConfig
from scansnap.core.config_fields import DecayRate, Epsilon, WeightDecay

LearningRate = Annotated[float, Field(gt=0, le=1e3, allow_inf_nan=False)]
MAX_TEXT_VOCAB = 300_000
HF_DATASETS = ("wikitext-2-v1", "wikitext-2-raw-v1", "wikitext-103-v1", "wikitext-103-raw-v1")


class TextDataConfig(FrozenConfig):
    """Which corpus.  ``builtin``: the default corpus shipped as a dependency (see
    ``scansnap.kinds.text.service.corpora``); ``wikitext-dir``: ``wiki.train.tokens`` / ``wiki.valid.tokens``
    in the folder ``path``; ``huggingface``: ``hf_dataset`` through the ``datasets`` package
    (online, optional); ``upload``: the user's .txt stored under ``upload_name``.
    Corpora without a validation split use the last ``valid_fraction`` of the text."""

    source: Literal["builtin", "wikitext-dir", "huggingface", "upload"] = "builtin"
    path: str | None = Field(None, max_length=4096)
    hf_dataset: Literal["wikitext-2-v1", "wikitext-2-raw-v1", "wikitext-103-v1", "wikitext-103-raw-v1"] = (
        "wikitext-2-v1"
    )
    upload_name: str | None = Field(None, min_length=1, max_length=200)
    vocab_size: int = Field(30_000, ge=2, le=MAX_TEXT_VOCAB)
    max_train_tokens: int | None = Field(None, ge=1_000, le=10**9)
    valid_fraction: float = Field(0.1, ge=0.01, le=0.5, allow_inf_nan=False)

    @model_validator(mode="after")
    def _check(self) -> TextDataConfig:
        if self.source == "wikitext-dir" and not self.path:
            raise ValueError("source='wikitext-dir' needs path: the folder holding wiki.train.tokens")
        if self.source == "upload" and not self.upload_name:
            raise ValueError("source='upload' needs upload_name: the name of the uploaded .txt")
        if self.source != "wikitext-dir" and self.path is not None:
            raise ValueError(f"path is only used with source='wikitext-dir' (source is {self.source!r})")
        return self


class TextModelConfig(FrozenConfig):
    """A causal Transformer LM: embedding (× √d) + positional encoding, ``n_layers`` blocks of
    multi-head causal self-attention and an MLP (ReLU / linear / none) with residuals and
    LayerNorm (``post``: x ← LN(x + f(x)), nn.TransformerEncoderLayer's default; ``pre``:
    x ← x + f(LN(x)), with a final LN), then a linear decoder (tied to the embedding or not)."""

    d_model: int = Field(200, ge=4, le=2048)
    n_heads: int = Field(1, ge=1, le=64)
    d_ff: int = Field(200, ge=1, le=8192)
    n_layers: int = Field(1, ge=1, le=4)
    dropout: float = Field(0.3, ge=0, lt=1, allow_inf_nan=False)
    positional: Literal["none", "sinusoidal", "learned"] = "sinusoidal"
    mlp: Literal["relu", "linear", "none"] = "relu"
    norm: Literal["post", "pre"] = "post"
    tie_weights: bool = False
    device: Literal["auto", "cpu", "cuda"] = "auto"
    # "copy": every layer starts as a copy of layer 0, as nn.TransformerEncoder deep-copies its one layer
    # (the authors' code, science §7b); "independent": each layer drawn from its own seed stream
    layer_init: Literal["independent", "copy"] = "independent"

    @model_validator(mode="after")
    def _check(self) -> TextModelConfig:
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model = {self.d_model} must be divisible by n_heads = {self.n_heads}")
        return self


class TextOptimConfig(FrozenConfig):
    """Separate learning rates: ``lr_attention`` (W_Q, W_K, W_V, output projection), ``lr_mlp``
    (both MLP layers), ``lr_other`` (embedding, positional table, LayerNorms, decoder).  StepLR:
    every rate × ``gamma`` after each epoch.  ``clip_norm``: global gradient-norm clip (None: off).
    ``mlp_lr_layers``: ``"first"`` gives ``lr_mlp`` to layer 0's MLP only and ``lr_other`` to the
    other layers' (Fig. 7's notebook: lr 10 on ``layers.0.linear1/linear2``).  ``reset_each_epoch``:
    the optimiser is rebuilt at every epoch boundary, its state (Adam's moments) reset, as JoMA's
    ``decoder_wiki.py`` does.  ``epoch_steps``: the steps of one epoch *of the schedule* (the decay
    and the reset), None: one pass over the corpus; set to 2,929 (one epoch of WikiText-2 at batch 20
    × bptt 35, science §7b) it keeps the authors' schedule on any corpus, the data still read in order
    and wrapped at the corpus's end."""

    method: Literal["sgd", "adam"] = "sgd"
    lr_attention: LearningRate = 5.0
    lr_mlp: LearningRate = 10.0
    lr_other: LearningRate = 5.0
    momentum: DecayRate = 0.0
    beta1: DecayRate = 0.9
    beta2: DecayRate = 0.999
    eps: Epsilon = 1e-8
    weight_decay: WeightDecay = 0.0
    gamma: float = Field(0.95, gt=0, le=1, allow_inf_nan=False)
    clip_norm: float | None = Field(0.5, gt=0, le=1e6, allow_inf_nan=False)
    batch: int = Field(20, ge=1, le=4096)
    bptt: int = Field(35, ge=2, le=4096)
    steps: int = Field(1500, ge=0, le=10**7)
    seed: int = Field(1, ge=0, le=2**31 - 1)
    mlp_lr_layers: Literal["all", "first"] = "all"
    reset_each_epoch: bool = False
    epoch_steps: int | None = Field(None, ge=1, le=10**7)


class TextProbeConfig(FrozenConfig):
    """What a snapshot measures.  The probe set is the validation stream batchified into
    ``eval_batch`` streams, window ``probe_window`` (the notebook's offset 100·bptt), clipped to
    the last full window; the map is its first sequence.  Validation loss: the first
    ``val_windows`` full windows of the same streams.  Frequent tokens: the ``frequent_top_n``
    most frequent training tokens (``<unk>`` excluded).  ``stream = "train"`` takes the probe window
    from the training streams instead (window ``probe_window`` of the ``optim.batch`` training
    streams; the map is stream 0's, as Fig. 7's notebook evaluates on ``train_data``); the
    validation loss always reads the validation streams."""

    eval_batch: int = Field(10, ge=1, le=1024)
    probe_window: int = Field(100, ge=0, le=10**6)
    val_windows: int = Field(20, ge=1, le=10_000)
    frequent_top_n: int = Field(20, ge=1, le=10_000)
    stream: Literal["validation", "train"] = "validation"


def _text_snapshots() -> SnapshotConfig:
    return SnapshotConfig(linear_every=100, log_count=20, max_count=300)


class TextRunConfig(RootConfig):
    name: str = Field("", max_length=200)
    data: TextDataConfig = TextDataConfig()
    model: TextModelConfig = TextModelConfig()
    optim: TextOptimConfig = TextOptimConfig()
    probe: TextProbeConfig = TextProbeConfig()
    snapshots: SnapshotConfig = Field(default_factory=_text_snapshots)

    @model_validator(mode="after")
    def _room_for_the_quarters(self) -> TextRunConfig:
        if self.snapshots.max_count < 5:
            raise ValueError(
                f"snapshots.max_count = {self.snapshots.max_count}: a real-text run keeps at least its 5 quarter "
                "points (0, ¼, ½, ¾ and the end); set 5 to 2000"
            )
        return self

    @classmethod
    def check_keys(cls, d: Any) -> None:
        _reject_unknown_keys(d, cls, "")


def check_corpus_fits(cfg: TextRunConfig, train_tokens: int, val_tokens: int) -> None:
    """Raise ConfigError unless the corpus holds one training window and one probe window: the
    training stream is cut into ``optim.batch`` streams of ⌊N/B⌋ ≥ 2 tokens (≥ bptt + 1 when the probe
    reads them), the validation stream into ``probe.eval_batch`` streams of ≥ bptt + 1 tokens."""
    o, p = cfg.optim, cfg.probe
    if train_tokens // o.batch < 2:
        raise ConfigError(
            f"the training text has {train_tokens:,} tokens: too few for batch = {o.batch} streams "
            f"(each needs ≥ 2 tokens); use a smaller optim.batch or a longer corpus"
        )
    if (val_tokens // p.eval_batch - 1) // o.bptt < 1:
        need = p.eval_batch * (o.bptt + 1)
        raise ConfigError(
            f"the validation text has {val_tokens:,} tokens; probe.eval_batch = {p.eval_batch} "
            f"streams × (bptt + 1 = {o.bptt + 1}) needs at least {need:,}: use a longer corpus, a larger "
            "data.valid_fraction, a smaller probe.eval_batch or a smaller optim.bptt"
        )
    if p.stream == "train" and (train_tokens // o.batch - 1) // o.bptt < 1:
        raise ConfigError(
            f"probe.stream = 'train' takes the probe window from the {o.batch} training streams, whose "
            f"{train_tokens // o.batch:,} tokens each hold no full window of bptt + 1 = {o.bptt + 1}: use a "
            "longer corpus, a smaller optim.batch or probe.stream = 'validation'"
        )


def _reject_unknown_keys(d: Any, model: type[BaseModel], where: str) -> None:
    """Unknown keys name their place and this model's allowed keys (checked before pydantic, whose
    shared formatter lists the synthetic RunConfig's keys)."""
    if not isinstance(d, dict):
        return
    for key, value in d.items():
        place = f"{where}.{key}" if where else str(key)
        if key not in model.model_fields:
            msg = f"{place}: unknown key; allowed keys: {', '.join(model.model_fields)}"
            raise ConfigError(msg, ((place, msg),))
        ann = model.model_fields[key].annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            _reject_unknown_keys(value, ann, place)
