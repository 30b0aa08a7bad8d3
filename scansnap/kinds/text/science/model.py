"""A small causal Transformer language model in plain ``torch.nn`` (written for this lab).

Forward pass for tokens x (B, T), d = d_model, H heads of size d_h = d/H:

    h⁰ = E[x]·√d + PE            (PE: none, sinusoidal sin/cos(pos/10000^{2i/d}), or a learned table)
    per layer: Q, K, V = h W_Qᵀ + b_Q, h W_Kᵀ + b_K, h W_Vᵀ + b_V, split into H heads;
        a_{ij} = softmax_j(q_i·k_j/√d_h + m_{ij}),  m_{ij} = 0 for j ≤ i, −∞ for j > i (causal);
        attn(h) = concat_heads(a V) W_Oᵀ + b_O;   mlp(h) = W₂ φ(W₁ h + b₁) + b₂, φ = ReLU or identity;
        post-LN: h ← LN(h + attn(h)); h ← LN(h + mlp(h))      pre-LN: h ← h + attn(LN h); h ← h + mlp(LN h)
    logits = h W_decᵀ + b_dec (W_dec = E when tied)

Initialisation follows the PyTorch word-LM tutorial / nn.MultiheadAttention: E and W_dec
U(−0.1, 0.1), b_dec = 0; W_Q, W_K, W_V Xavier-uniform as one (3d × d) matrix, their biases 0;
W_O and the MLP nn.Linear's default, b_O = 0.  (nn.TransformerEncoder deep-copies one layer, so
its layers start identical; here each layer draws its own initial weights.)
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as fn

from scansnap.kinds.text.science.config import TextModelConfig


def causal_mask(T: int, device: torch.device | None = None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """(T, T) additive mask m: 0 on and below the diagonal, −∞ above (query i sees keys j ≤ i)."""
    upper = torch.ones(T, T, dtype=torch.bool, device=device).triu(1)
    return torch.zeros(T, T, dtype=dtype, device=device).masked_fill(upper, float("-inf"))


def sinusoidal_table(max_len: int, d: int) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos/10000^{2i/d}), PE[pos, 2i+1] = cos(pos/10000^{2i/d}) (the tutorial's)."""
    pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(max_len, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)[:, : d // 2]
    return pe


class CausalSelfAttention(nn.Module):
    def __init__(self, d: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads, self.dropout = n_heads, dropout
        self.qkv = nn.Linear(d, 3 * d)  # rows: W_Q, W_K, W_V
        self.out = nn.Linear(d, d)
        nn.init.xavier_uniform_(self.qkv.weight)
        nn.init.zeros_(self.qkv.bias)
        nn.init.zeros_(self.out.bias)

    def heads(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v of shape (B, H, T, d_h)."""
        B, T, d = h.shape
        qkv = self.qkv(h).view(B, T, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        return qkv[0], qkv[1], qkv[2]

    def forward(self, h: torch.Tensor, need_weights: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        q, k, v = self.heads(h)
        B, H, T, dh = q.shape
        p = self.dropout if self.training else 0.0
        if need_weights:
            scores = q @ k.transpose(-2, -1) / math.sqrt(dh) + causal_mask(T, h.device, q.dtype)
            a = torch.softmax(scores, dim=-1)  # (B, H, T, T)
            y = fn.dropout(a, p, self.training) @ v
        else:  # the same map, fused (and without materialising a for the caller)
            a = None
            y = fn.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, H * dh)), a


class MLP(nn.Module):
    def __init__(self, d: int, d_ff: int, kind: str, dropout: float):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d, d_ff), nn.Linear(d_ff, d)
        self.relu = kind == "relu"
        self.drop = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        u = self.linear1(h)
        return self.linear2(self.drop(torch.relu(u) if self.relu else u))


class Block(nn.Module):
    def __init__(self, cfg: TextModelConfig):
        super().__init__()
        d = cfg.d_model
        self.pre = cfg.norm == "pre"
        self.attn = CausalSelfAttention(d, cfg.n_heads, cfg.dropout)
        self.norm1, self.drop1 = nn.LayerNorm(d), nn.Dropout(cfg.dropout)
        self.mlp = MLP(d, cfg.d_ff, cfg.mlp, cfg.dropout) if cfg.mlp != "none" else None
        self.norm2 = nn.LayerNorm(d) if self.mlp is not None else None
        self.drop2 = nn.Dropout(cfg.dropout)

    def forward(self, h: torch.Tensor, need_weights: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.pre:
            y, a = self.attn(self.norm1(h), need_weights)
            h = h + self.drop1(y)
            if self.mlp is not None and self.norm2 is not None:
                h = h + self.drop2(self.mlp(self.norm2(h)))
            return h, a
        y, a = self.attn(h, need_weights)
        h = self.norm1(h + self.drop1(y))
        if self.mlp is not None and self.norm2 is not None:
            h = self.norm2(h + self.drop2(self.mlp(h)))
        return h, a


class CausalLM(nn.Module):
    """``forward(x, need_weights)`` → (logits (B, T, V), [a per layer (B, H, T, T)] or [])."""

    def __init__(self, cfg: TextModelConfig, vocab_size: int, max_len: int):
        super().__init__()
        d = cfg.d_model
        self.cfg, self.max_len, self.scale = cfg, max_len, math.sqrt(d)
        self.embed = nn.Embedding(vocab_size, d)
        self.learned_pe = nn.Parameter(torch.randn(max_len, d) * 0.02) if cfg.positional == "learned" else None
        self.register_buffer("sin_pe", sinusoidal_table(max_len, d), persistent=False)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.final_norm = nn.LayerNorm(d) if cfg.norm == "pre" else None
        self.decoder = nn.Linear(d, vocab_size)
        nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        if cfg.tie_weights:
            self.decoder.weight = self.embed.weight

    def positional(self, T: int) -> torch.Tensor | None:
        if self.cfg.positional == "sinusoidal":
            return self.get_buffer("sin_pe")[:T]
        return self.learned_pe[:T] if self.learned_pe is not None else None

    def forward(self, x: torch.Tensor, need_weights: bool = False) -> tuple[torch.Tensor, list[torch.Tensor]]:
        length = x.shape[1]
        if length > self.max_len:
            raise ValueError(f"sequence length {length} exceeds the model's max_len = {self.max_len} (the bptt)")
        h = self.embed(x) * self.scale
        pe = self.positional(length)
        h = self.drop(h if pe is None else h + pe)
        maps: list[torch.Tensor] = []
        for block in self.blocks:
            h, a = block(h, need_weights)
            if a is not None:
                maps.append(a)
        if self.final_norm is not None:
            h = self.final_norm(h)
        return self.decoder(h), maps


def parameter_group(name: str) -> str:
    """'attention' (W_Q, W_K, W_V, W_O and biases), 'mlp' (W₁, W₂ and biases) or 'other'."""
    if ".attn." in name:
        return "attention"
    if ".mlp." in name:
        return "mlp"
    return "other"
