"""Each layer's attention on a sentence someone typed, from a real-text model's kept weights, in float64
NumPy (no torch: the dashboard's process computes it; tests check it against the torch model).

The forward pass of :mod:`scansnap.kinds.text.science.model` in eval mode (no dropout), up to the last layer's
attention: h⁰ = E[x]·√d + PE; per layer, with LN(h) = γ (h − mean) / √(var + 10⁻⁵) + β,
    q, k, v = h W_Qᵀ + b_Q, …  split into H heads of size d_h;  a_ij = softmax_j(q_i·k_j / √d_h), j ≤ i;
    y = concat_heads(a v) W_Oᵀ + b_O;  post-LN: h ← LN₁(h + y), h ← LN₂(h + W₂ φ(W₁ h + b₁) + b₂);
    pre-LN: h ← h + y(LN₁ h), h ← h + mlp(LN₂ h).
The decoder is not needed for the maps, so the kept weights leave it out (:func:`attention_weights`).
"""

from __future__ import annotations

import numpy as np

from scansnap.kinds.text.science.config import TextModelConfig

LN_EPS = 1e-5  # nn.LayerNorm's default
NOT_NEEDED = ("decoder.", "final_norm.")  # parameters after the last attention map


def attention_weights(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The parameters the attention maps depend on (the model's state without the decoder), float32."""
    return {k: np.asarray(v, dtype=np.float32) for k, v in state.items() if not k.startswith(NOT_NEEDED)}


def sinusoid(T: int, d: int) -> np.ndarray:
    """PE[pos, 2i] = sin(pos/10000^{2i/d}), PE[pos, 2i+1] = cos(pos/10000^{2i/d}), in float32 as the
    model's table is built (then read as float64)."""
    pos = np.arange(T, dtype=np.float32)[:, None]
    div = np.exp(np.arange(0, d, 2, dtype=np.float32) * np.float32(-np.log(10000.0) / d))
    pe = np.zeros((T, d), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * div)
    pe[:, 1::2] = np.cos(pos * div)[:, : d // 2]
    return pe.astype(np.float64)


def _ln(h: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    mu = h.mean(-1, keepdims=True)
    var = h.var(-1, keepdims=True)
    return w[f"{name}.weight"] * (h - mu) / np.sqrt(var + LN_EPS) + w[f"{name}.bias"]


def _linear(h: np.ndarray, w: dict[str, np.ndarray], name: str) -> np.ndarray:
    return h @ w[f"{name}.weight"].T + w[f"{name}.bias"]


def _attention(h: np.ndarray, w: dict[str, np.ndarray], p: str, n_heads: int) -> tuple[np.ndarray, np.ndarray]:
    """(y (T, d), a (H, T, T)): causal softmax attention of one layer."""
    T, d = h.shape
    dh = d // n_heads
    q, k, v = np.split(_linear(h, w, f"{p}.attn.qkv"), 3, axis=-1)
    q, k, v = (x.reshape(T, n_heads, dh).transpose(1, 0, 2) for x in (q, k, v))
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    scores -= scores.max(-1, keepdims=True)
    a = np.exp(scores)
    a /= a.sum(-1, keepdims=True)
    y = (a @ v).transpose(1, 0, 2).reshape(T, d)
    return _linear(y, w, f"{p}.attn.out"), a


def _mlp(h: np.ndarray, w: dict[str, np.ndarray], p: str, relu: bool) -> np.ndarray:
    u = _linear(h, w, f"{p}.mlp.linear1")
    return _linear(np.maximum(u, 0.0) if relu else u, w, f"{p}.mlp.linear2")


def sentence_attention(weights: dict[str, np.ndarray], cfg: TextModelConfig, ids: np.ndarray) -> np.ndarray:
    """Each layer's attention a (L, H, T, T) on the token ids ``ids`` (T,), in float64."""
    w = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    T, d = len(ids), cfg.d_model
    h = w["embed.weight"][np.asarray(ids, dtype=np.int64)] * np.sqrt(d)
    if cfg.positional == "sinusoidal":
        h = h + sinusoid(T, d)
    elif cfg.positional == "learned":
        h = h + w["learned_pe"][:T]
    maps = []
    has_mlp = cfg.mlp != "none"
    for layer in range(cfg.n_layers):
        p = f"blocks.{layer}"
        if cfg.norm == "pre":
            y, a = _attention(_ln(h, w, f"{p}.norm1"), w, p, cfg.n_heads)
            h = h + y
            if has_mlp:
                h = h + _mlp(_ln(h, w, f"{p}.norm2"), w, p, cfg.mlp == "relu")
        else:
            y, a = _attention(h, w, p, cfg.n_heads)
            h = _ln(h + y, w, f"{p}.norm1")
            if has_mlp:
                h = _ln(h + _mlp(h, w, p, cfg.mlp == "relu"), w, f"{p}.norm2")
        maps.append(a)
    return np.stack(maps)
