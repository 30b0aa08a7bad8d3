"""Memory and work estimate of a real-text run: refuse a config before it allocates anything.

Counts (V = vocabulary, d = d_model, f = d_ff, L = layers, H = heads, B·T = batch × bptt):

* parameters P = V·d (embedding) + V·d + V (decoder, untied) + L·(4d² + 4d + 2·d·f + f + d + 4d)
  (+ T·d learned positions), stored with their gradients and the optimiser state (SGD with
  momentum: 1 copy, Adam: 2 copies);
* per-step temporaries: the logits, their log-softmax and its gradient (3·B·T·V), per layer
  ~(12d + 3f)·B·T activations and 3·B·H·T² attention entries (scores, softmax, dropout mask);
* evaluation: a logits chunk (trainer.EVAL_CHUNK_LOGITS, twice) and the probe maps;
* the corpus while it is read and encoded (its text, its tokens as strings, the ids as numpy and as a
  tensor): :data:`CORPUS_TOKEN_BYTES` per training and validation token; its common and distinct words
  counted (:func:`groups_bytes`); its vocabulary's words as numpy holds them (:func:`word_bytes`);
* a checkpoint (parameters and optimiser state) or a step's kept weights while it is stored:
  PACKED_COPIES copies of it.

Stored: each snapshot's maps (L·T′² floats, and L·H·T′² per head when L·H ≤ MAX_HEAD_MAPS) and scalars
(≤ TEXT_METRICS metrics × L·(H+1) rows), the weights at WEIGHTS_KEPT steps (the parameters and the
vocabulary's words), its checkpoint (CHECKPOINT_DISK_COPIES times: as it is replaced).

Total × 1.5 safety, against ``SCANSNAP_MAX_RUN_MB`` (default 2048, as the synthetic runs).
Work: 6·B·T·(V·d + L·(4d² + 2·d·f)) + 12·L·B·T²·d floating-point operations per step (forward and
backward matmuls), plus the snapshots' evaluation passes, against ``SCANSNAP_MAX_TEXT_FLOP``
(default 10¹⁵ ≈ 7 hours of 2 CPU cores at the ~40 GFLOP/s measured by bench/text_speed.py: the
authors' JoMA run, 58,580 steps, needs 7.5·10¹⁴, minutes on a GPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.science.contexts import CHUNK, MAX_TOKENS
from scansnap.kinds.text.science.schedule import EVAL_CHUNK_LOGITS, WEIGHTS_KEPT, schedule
from scansnap.service.budget import CHECKPOINT_DISK_COPIES, PACKED_COPIES, WAL_BYTES, Estimate, WorkLimit, check_within

DEFAULT_MAX_TEXT_FLOP = 1e15
ASSUMED_CPU_FLOPS = 4e10  # for the "≈ hours" hint only
DEFAULT_TRAIN_TOKENS = 1_000_000  # the built-in corpus holds ≈ 0.8 M training tokens
MAP_MAX_T = 64  # positions of the probe window kept in the stored attention maps
MAX_HEAD_MAPS = 16  # per-head maps are stored when layers × heads is at most this
TEXT_METRICS = 24  # scalar metrics a snapshot stores at most, each per layer and head
VALUE_BYTES = 24  # a stored scalar value: float64 and its two index columns
WORD_BYTES = 64  # a vocabulary word kept with the weights (numpy's fixed-width unicode, ≤ 16 characters)
# Measured as peak memory per token read (tracemalloc and VmHWM): the built-in corpus 78 bytes, an English-like
# upload 90, an upload of Cyrillic words 175, one whose every token differs 214 (each token a Python string
# while the text is split, the raw words' counts): counted for training and validation tokens alike.
CORPUS_TOKEN_BYTES = 224


def groups_bytes(tokens: int, vocab: int) -> float:
    """Peak of counting the common and distinct words (:func:`scansnap.kinds.text.science.contexts.information`): the
    text's ids and their order (12 bytes a token of the first MAX_TOKENS), one piece of CHUNK pairs with its
    keys and the block's temporaries (96 bytes a pair, int64 keys), a few V-vectors (64 bytes a word).
    Measured: 43 MiB for the built-in corpus, 97 MiB for 1 M uniform tokens of 20,000 words, 125 MiB at
    300,000 words; this gives 109 and 127 MiB for the last two."""
    return 12.0 * min(tokens, MAX_TOKENS) + 96.0 * CHUNK + 64.0 * vocab


def word_bytes(longest_word: int | None) -> float:
    """A vocabulary word as numpy holds it with the kept weights (fixed-width unicode: 4 bytes a character of
    the longest word); :data:`WORD_BYTES` where the corpus is not measured yet."""
    return WORD_BYTES if longest_word is None else 4.0 * max(longest_word, 1)


@dataclass(frozen=True)
class TextEstimate(Estimate):
    n_params: int
    bytes_params: float  # parameters, gradients and optimiser state
    bytes_step: float  # training temporaries of one step
    bytes_eval: float
    bytes_corpus: float
    work: float  # floating-point operations of the whole run
    bytes_checkpoint: float = 0.0  # a checkpoint as it is stored (PACKED_COPIES of its arrays)
    snapshots: int = 0
    stored: tuple[tuple[str, float], ...] = ()  # what the run stores (:func:`stored_parts`)

    def parts(self) -> tuple[tuple[str, float], ...]:
        return (
            (f"{self.n_params:,} parameters with gradients and optimiser state", self.bytes_params),
            ("one step's temporaries", self.bytes_step),
            ("evaluation", self.bytes_eval),
            ("corpus", self.bytes_corpus),
            ("checkpoint or kept weights while stored", self.bytes_checkpoint),
        )

    def disk_parts(self) -> tuple[tuple[str, float], ...]:
        return self.stored


def count_parameters(cfg: TextRunConfig, vocab: int) -> int:
    m = cfg.model
    d, f = m.d_model, m.d_ff
    mlp = 2 * d * f + f + d + 2 * d if m.mlp != "none" else 0  # W₁, W₂, biases, second LayerNorm
    per_layer = 4 * d * d + 4 * d + 2 * d + mlp  # W_Q, W_K, W_V, W_O and biases, first LayerNorm
    decoder = vocab if m.tie_weights else vocab * d + vocab
    learned = cfg.optim.bptt * d if m.positional == "learned" else 0
    final = 2 * d if m.norm == "pre" else 0
    return vocab * d + decoder + m.n_layers * per_layer + learned + final


def estimate(
    cfg: TextRunConfig,
    vocab: int | None = None,
    train_tokens: int | None = None,
    val_tokens: int | None = None,
    longest_word: int | None = None,
) -> TextEstimate:
    """The estimate for ``cfg`` on a corpus of ``vocab`` words, ``train_tokens`` and ``val_tokens`` tokens and
    a longest word of ``longest_word`` characters (as :func:`~scansnap.kinds.text.service.corpora.corpus_summary`
    measures it); unmeasured, the config's caps, a validation split of ``data.valid_fraction`` and 16 characters."""
    m, o, p = cfg.model, cfg.optim, cfg.probe
    V = vocab if vocab is not None else cfg.data.vocab_size
    N = train_tokens if train_tokens is not None else (cfg.data.max_train_tokens or DEFAULT_TRAIN_TOKENS)
    vf = cfg.data.valid_fraction
    N_val = val_tokens if val_tokens is not None else math.ceil(N * vf / (1 - vf))
    word = word_bytes(longest_word)
    d, f, L, H, BT, T = m.d_model, m.d_ff, m.n_layers, m.n_heads, o.batch * o.bptt, o.bptt
    n_params = count_parameters(cfg, V)
    copies = 2 + (2 if o.method == "adam" else (1 if o.momentum > 0 else 0))
    step = 3 * BT * V + L * ((12 * d + 3 * f) * BT + 3 * o.batch * H * T * T) + 3 * BT * d
    evaluation = 2 * min(EVAL_CHUNK_LOGITS, p.val_windows * p.eval_batch * T * V) + L * p.eval_batch * H * T * T
    per_step = 6 * BT * (V * d + L * (4 * d * d + 2 * d * f)) + 12 * L * o.batch * T * T * d
    per_eval = 2 * (p.val_windows + 1) * p.eval_batch * T * (V * d + L * (4 * d * d + 2 * d * f))
    snapshots = len(schedule(cfg))
    flop = o.steps * per_step + snapshots * per_eval
    checkpoint = 4.0 * n_params * (copies - 1)  # parameters and optimiser state (no gradients)
    return TextEstimate(
        n_params,
        4.0 * n_params * copies,
        4.0 * step,
        4.0 * evaluation,
        CORPUS_TOKEN_BYTES * (N + N_val) + groups_bytes(N, V) + PACKED_COPIES * word * V,
        float(flop),
        PACKED_COPIES * checkpoint,
        snapshots,
        stored_parts(cfg, V, n_params, snapshots, checkpoint, word),
    )


def stored_parts(
    cfg: TextRunConfig, vocab: int, n_params: int, snapshots: int, checkpoint: float, word: float = WORD_BYTES
) -> tuple[tuple[str, float], ...]:
    """What a run stores: its snapshots' maps and scalars, the weights it keeps (and the vocabulary's words,
    ``word`` bytes each, with them and once in the statics), its checkpoint."""
    m = cfg.model
    L, H, t = m.n_layers, m.n_heads, min(cfg.optim.bptt, MAP_MAX_T)
    maps = 4.0 * L * t * t * (1 + (H if L * H <= MAX_HEAD_MAPS else 0))
    weights = min(WEIGHTS_KEPT, snapshots) * (4.0 * n_params + word * vocab) + word * vocab
    return (
        (f"{snapshots:,} snapshots' maps", snapshots * maps),
        ("their scalars", snapshots * TEXT_METRICS * L * (H + 1) * VALUE_BYTES),
        ("kept weights", weights),
        ("checkpoint, as it is replaced", CHECKPOINT_DISK_COPIES * checkpoint),
        ("the store's write-ahead log", WAL_BYTES + maps),
    )


FLOP = WorkLimit("SCANSNAP_MAX_TEXT_FLOP", DEFAULT_MAX_TEXT_FLOP, "floating-point operations")


def check_text_budget(
    cfg: TextRunConfig,
    vocab: int | None = None,
    train_tokens: int | None = None,
    val_tokens: int | None = None,
    longest_word: int | None = None,
) -> TextEstimate:
    """Raise ConfigError when the run would exceed the memory or work budget; else the estimate."""
    est = estimate(cfg, vocab, train_tokens, val_tokens, longest_word)
    hours = est.work / ASSUMED_CPU_FLOPS / 3600
    check_within(
        est,
        "this text run",
        FLOP,
        "reduce data.vocab_size, data.max_train_tokens, optim.batch, optim.bptt or model.d_model",
        f"it would take ≈ {hours:,.1f} h on 2 CPU cores; reduce optim.steps, data.vocab_size, "
        "optim.batch × optim.bptt or the model size",
        "keep fewer snapshots (snapshots.max_count, snapshots.linear_every), a smaller vocabulary or model",
    )
    return est
