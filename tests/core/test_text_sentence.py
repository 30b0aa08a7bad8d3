"""A typed sentence's attention (science §5): the NumPy float64 forward of scansnap/kinds/text/science/sentence.py
equals the torch model's own maps (run in float64) for every norm, positional encoding and MLP, and the
steps whose weights a run keeps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scansnap.kinds.text.science.config import TextModelConfig
from scansnap.kinds.text.science.model import CausalLM
from scansnap.kinds.text.science.schedule import weight_steps
from scansnap.kinds.text.science.sentence import attention_weights, sentence_attention

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize(
    ("norm", "positional", "mlp"),
    [
        ("post", "sinusoidal", "relu"),
        ("pre", "learned", "linear"),
        ("post", "none", "none"),
        ("pre", "sinusoidal", "relu"),
    ],
)
def test_numpy_maps_equal_the_torch_models_on_any_sentence(norm, positional, mlp):
    torch.manual_seed(0)
    cfg = TextModelConfig(
        d_model=12, n_heads=3, d_ff=10, n_layers=2, dropout=0.3, positional=positional, mlp=mlp, norm=norm, device="cpu"
    )
    model = CausalLM(cfg, vocab_size=30, max_len=16).double().eval()  # eval: dropout off, as on the page
    with torch.no_grad():  # move LayerNorm's γ, β off their initial 1, 0 so that they are tested too
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    ids = np.array([3, 7, 7, 1, 0, 29, 5, 12, 4])
    with torch.no_grad():
        want = torch.stack(model(torch.as_tensor(ids)[None], need_weights=True)[1])[:, 0].numpy()  # (L, H, T, T)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    kept = attention_weights(state)
    assert not any(k.startswith("decoder.") for k in kept)  # the maps do not depend on it
    got = sentence_attention({k: state[k] for k in kept}, cfg, ids)  # the float64 weights, unrounded
    assert got.shape == want.shape == (2, 3, len(ids), len(ids))
    # float64 throughout, but the model's sinusoidal table is float32, computed by torch's sin/cos: those
    # differ from NumPy's by up to an ulp of float32 (6e-8), which moves the maps by ~1e-8
    tol = 1e-6 if positional == "sinusoidal" else 1e-12
    np.testing.assert_allclose(got, want, rtol=0, atol=tol)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-12)
    assert np.all(np.triu(got[0, 0], 1) == 0)  # causal: no attention to later words


def test_a_run_keeps_weights_at_its_quarter_points_and_a_spread_of_the_rest():
    snapshots = np.unique(np.r_[0, 1, 2, 3, 5, 7, 10, 15, 22, 32, 47, 69, np.arange(100, 1501, 100), 375, 750, 1125])
    kept = weight_steps(snapshots, keep=12)
    assert len(kept) <= 12 and set(kept) <= set(snapshots)
    assert {0, 375, 750, 1125, 1500} <= set(kept)  # Fig. 7's columns and the ¾ point
    assert kept[1] < 100  # the log-spaced start is kept too, not only the late, linear part
    few = np.array([0, 10, 20])
    np.testing.assert_array_equal(weight_steps(few, keep=12), few)
