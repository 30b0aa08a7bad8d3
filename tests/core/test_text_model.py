"""The causal LM against an independent float64 numpy forward pass (attention per position)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scansnap.kinds.text.science.config import TextModelConfig
from scansnap.kinds.text.science.model import CausalLM, causal_mask, parameter_group, sinusoidal_table

V, T = 50, 9


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().numpy()


def layer_norm(x: np.ndarray, ln: torch.nn.LayerNorm) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + ln.eps) * _np(ln.weight) + _np(ln.bias)


def attention_reference(h: np.ndarray, attn, n_heads: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sequence, head and query position i: a_ij = exp(s_ij)/Σ_{j'≤i} exp(s_ij') over keys j ≤ i,
    s_ij = q_i·k_j/√d_h (a loop, no mask tensor); returns (output after W_O, a)."""
    W, b = _np(attn.qkv.weight), _np(attn.qkv.bias)
    B, n, d = h.shape
    dh = d // n_heads
    q, k, v = (h @ W[i * d : (i + 1) * d].T + b[i * d : (i + 1) * d] for i in range(3))
    a = np.zeros((B, n_heads, n, n))
    y = np.zeros((B, n, d))
    for bi in range(B):
        for hd in range(n_heads):
            sl = slice(hd * dh, (hd + 1) * dh)
            for i in range(n):
                s = np.array([q[bi, i, sl] @ k[bi, j, sl] / math.sqrt(dh) for j in range(i + 1)])
                e = np.exp(s - s.max())
                a[bi, hd, i, : i + 1] = e / e.sum()
                y[bi, i, sl] = a[bi, hd, i, : i + 1] @ v[bi, : i + 1, sl]
    return y @ _np(attn.out.weight).T + _np(attn.out.bias), a


def reference_forward(model: CausalLM, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    cfg = model.cfg
    h = _np(model.embed.weight)[x] * math.sqrt(cfg.d_model)
    if cfg.positional == "sinusoidal":
        h = h + _np(sinusoidal_table(x.shape[1], cfg.d_model))
    elif cfg.positional == "learned":
        h = h + _np(model.learned_pe)[: x.shape[1]]
    maps = []
    for blk in model.blocks:
        inp = layer_norm(h, blk.norm1) if cfg.norm == "pre" else h
        y, a = attention_reference(inp, blk.attn, cfg.n_heads)
        maps.append(a)
        h = h + y if cfg.norm == "pre" else layer_norm(h + y, blk.norm1)
        if blk.mlp is not None:
            inp = layer_norm(h, blk.norm2) if cfg.norm == "pre" else h
            u = inp @ _np(blk.mlp.linear1.weight).T + _np(blk.mlp.linear1.bias)
            u = np.maximum(u, 0) if cfg.mlp == "relu" else u
            m = u @ _np(blk.mlp.linear2.weight).T + _np(blk.mlp.linear2.bias)
            h = h + m if cfg.norm == "pre" else layer_norm(h + m, blk.norm2)
    if model.final_norm is not None:
        h = layer_norm(h, model.final_norm)
    return h @ _np(model.decoder.weight).T + _np(model.decoder.bias), maps


CASES = [
    {"n_layers": 1, "n_heads": 1},
    {"n_layers": 2, "n_heads": 2, "positional": "learned", "mlp": "linear"},
    {"n_layers": 3, "n_heads": 4, "positional": "none", "norm": "pre", "mlp": "none", "tie_weights": True},
]


@pytest.mark.parametrize("over", CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_attention_and_logits_match_direct_computation(over):
    cfg = TextModelConfig(d_model=16, d_ff=24, dropout=0.3, device="cpu", **over)
    torch.manual_seed(0)
    model = CausalLM(cfg, V, max_len=T).double().eval()
    x = torch.randint(0, V, (3, T))
    with torch.no_grad():
        logits, maps = model(x, need_weights=True)
        fused, none = model(x)  # the scaled_dot_product_attention path
    ref_logits, ref_maps = reference_forward(model, x.numpy())
    assert none == [] and len(maps) == cfg.n_layers
    for a, ra in zip(maps, ref_maps, strict=True):
        assert a.shape == (3, cfg.n_heads, T, T)
        np.testing.assert_allclose(_np(a), ra, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_np(logits), ref_logits, rtol=0, atol=1e-10)
    np.testing.assert_allclose(_np(fused), ref_logits, rtol=0, atol=1e-10)


def test_maps_are_causal_rows_summing_to_one():
    cfg = TextModelConfig(d_model=8, d_ff=8, n_layers=2, n_heads=2, device="cpu")
    model = CausalLM(cfg, V, max_len=T).eval()
    with torch.no_grad():
        _, maps = model(torch.randint(0, V, (2, T)), need_weights=True)
    for a in maps:
        assert torch.all(a.triu(1) == 0)
        torch.testing.assert_close(a.sum(-1), torch.ones(2, 2, T))


def test_causal_mask_and_sinusoid_values():
    m = causal_mask(3)
    assert m[0, 1] == float("-inf") and m[1, 0] == 0 and m[2, 2] == 0
    pe = sinusoidal_table(4, 6)  # PE[p, 2i] = sin(p/10000^{2i/6}), PE[p, 2i+1] = cos(...)
    assert pe[3, 2].item() == pytest.approx(math.sin(3 / 10000 ** (2 / 6)), abs=1e-6)
    assert pe[3, 5].item() == pytest.approx(math.cos(3 / 10000 ** (4 / 6)), abs=1e-6)


def test_dropout_changes_training_forward_only():
    cfg = TextModelConfig(d_model=8, d_ff=8, dropout=0.5, device="cpu")
    model = CausalLM(cfg, V, max_len=T)
    x = torch.randint(0, V, (2, T))
    model.eval()
    with torch.no_grad():
        assert torch.equal(model(x)[0], model(x)[0])
        model.train()
        assert not torch.equal(model(x)[0], model(x)[0])


def test_parameter_groups_and_tied_decoder():
    cfg = TextModelConfig(d_model=8, d_ff=8, n_layers=2, tie_weights=True, device="cpu")
    model = CausalLM(cfg, V, max_len=T)
    groups = {n: parameter_group(n) for n, _ in model.named_parameters()}
    assert groups["blocks.0.attn.qkv.weight"] == "attention" and groups["blocks.1.attn.out.bias"] == "attention"
    assert groups["blocks.0.mlp.linear1.weight"] == "mlp" and groups["blocks.1.mlp.linear2.bias"] == "mlp"
    assert groups["embed.weight"] == "other" and groups["blocks.0.norm1.weight"] == "other"
    assert "decoder.weight" not in groups  # tied: one tensor, listed once as embed.weight
    assert model.decoder.weight is model.embed.weight


def test_sequence_longer_than_table_is_refused():
    model = CausalLM(TextModelConfig(d_model=8, d_ff=8, device="cpu"), V, max_len=4)
    with pytest.raises(ValueError, match="exceeds the model's max_len = 4"):
        model(torch.zeros(1, 5, dtype=torch.long))
