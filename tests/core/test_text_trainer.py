"""TextTrainer: learning rates per group, StepLR per epoch, snapshots, bit-exact resume."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science import metrics as tm
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.science.data import EncodedCorpus
from scansnap.kinds.text.science.tokenizer import Vocabulary
from scansnap.kinds.text.science.trainer import TextTrainer, schedule

V = 40


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def synthetic_corpus(n_train: int = 3000, n_val: int = 800, seed: int = 0) -> EncodedCorpus:
    """Token ids with a Zipf-like unigram law (so 'frequent tokens' exist)."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, V + 1)
    p /= p.sum()
    train, val = rng.choice(V, size=n_train, p=p), rng.choice(V, size=n_val, p=p)
    counts = np.bincount(train, minlength=V)
    vocab = Vocabulary(tuple(["<unk>", *(f"w{i}" for i in range(1, V))]), counts)
    return EncodedCorpus("synthetic", vocab, train, val)


def small_cfg(**over) -> TextRunConfig:
    base = {
        "model.d_model": 16,
        "model.d_ff": 16,
        "model.device": "cpu",
        "optim.batch": 4,
        "optim.bptt": 8,
        "optim.steps": 12,
        "probe.eval_batch": 2,
        "probe.val_windows": 3,
        "probe.frequent_top_n": 5,
        "snapshots.linear_every": 4,
    }
    return TextRunConfig().with_overrides(base | over)


def test_groups_get_their_rates_and_steplr_decays_per_epoch():
    cfg = small_cfg(**{"optim.lr_attention": 0.5, "optim.lr_mlp": 0.7, "optim.lr_other": 0.3, "optim.gamma": 0.5})
    tr = TextTrainer(cfg, synthetic_corpus())
    names = [g["name"] for g in tr.opt.param_groups]
    assert names == ["attention", "mlp", "other"]
    assert tr.windows == math.ceil((3000 // 4 - 1) / 8)  # ⌈(L − 1)/bptt⌉ with L = 750
    tr.advance(tr.windows)  # one full epoch: still epoch 0's rates
    assert [g["lr"] for g in tr.opt.param_groups] == [0.5, 0.7, 0.3]
    tr.advance(1)  # first step of epoch 1: every rate × γ
    assert [g["lr"] for g in tr.opt.param_groups] == [0.25, 0.35, 0.15]


def test_snapshot_contents_and_schedule():
    cfg = small_cfg(**{"model.n_layers": 2, "model.n_heads": 2})
    tr = TextTrainer(cfg, synthetic_corpus())
    snaps = list(tr.run())
    assert [s.step for s in snaps] == schedule(cfg).tolist()
    assert {0, 3, 6, 9, 12} <= {s.step for s in snaps}  # quarter points of 12 steps
    s = snaps[-1]
    assert s.scalars["attn_entropy"].shape == (2, 2) and s.arrays["attn_map"].shape == (2, 2, 8, 8)
    assert np.isnan(snaps[0].scalars["train_loss"]) and np.isfinite(s.scalars["train_loss"])
    assert s.scalars["val_ppl"] == pytest.approx(math.exp(s.scalars["val_loss"]))
    rows = s.scalar_rows()
    assert (0, None, "attn_entropy", pytest.approx(s.scalars["attn_entropy"][0].mean())) in rows
    assert (1, 1, "attn_share_frequent", pytest.approx(s.scalars["attn_share_frequent"][1, 1])) in rows
    assert (None, None, "val_loss", pytest.approx(float(s.scalars["val_loss"]))) in rows


def test_entropy_and_share_match_numpy_on_the_saved_map():
    """With one probe sequence the saved map is the whole probe set: recompute both statistics."""
    cfg = small_cfg(**{"probe.eval_batch": 1, "model.n_heads": 2})
    tr = TextTrainer(cfg, synthetic_corpus())
    tr.advance(5)
    s, st = tr.snapshot(), tr.statics()
    a = s.arrays["attn_map"][0].astype(np.float64)  # (H, T, T), layer 0
    x = st["probe_window"]
    freq = set(st["frequent_ids"].tolist())
    H, T, _ = a.shape
    ent = [np.mean([-sum(p * np.log(p) for p in a[h, i, : i + 1] if p > 0) for i in range(T)]) for h in range(H)]
    share = [np.mean([sum(a[h, i, j] for j in range(i + 1) if x[j] in freq) for i in range(T)]) for h in range(H)]
    np.testing.assert_allclose(s.scalars["attn_entropy"][0], ent, rtol=1e-5)
    np.testing.assert_allclose(s.scalars["attn_share_frequent"][0], share, rtol=1e-5)
    assert st["uniform_entropy"] == pytest.approx(tm.uniform_causal_entropy(T))


def test_validation_loss_is_mean_cross_entropy_of_the_windows():
    tr = TextTrainer(small_cfg(), synthetic_corpus())
    tr.model.eval()
    with torch.no_grad():
        logits, _ = tr.model(tr.val_x)
        logp = torch.log_softmax(logits.double(), -1)
        want = -logp.gather(-1, tr.val_y.unsqueeze(-1)).mean().item()
    assert tr.validation_loss() == pytest.approx(want, rel=1e-5)
    assert tr.val_x.shape == (2 * 3, 8)  # eval_batch streams × val_windows windows


def test_the_validation_windows_change_only_the_validation_loss():
    """Validation runs in eval mode under no_grad, outside the trainer's own random stream (dropout 0.3
    here): with 1 or 6 validation windows the attention statistics, the maps and the training loss are bit
    for bit the same at every snapshot (tests/test_cli_text.py trains the shipped Fig. 7 preset with one
    validation window for this: 33 s less)."""
    cfgs = [small_cfg(**{"probe.val_windows": w, "model.dropout": 0.3}) for w in (1, 6)]
    runs = [list(TextTrainer(cfg, synthetic_corpus()).run()) for cfg in cfgs]
    for a, b in zip(*runs, strict=True):
        assert a.step == b.step and a.scalars["val_loss"] != b.scalars["val_loss"]
        assert all(np.array_equal(a.scalars[k], b.scalars[k], equal_nan=True) for k in a.scalars if "val_" not in k)
        assert all(np.array_equal(a.arrays[k], b.arrays[k]) for k in a.arrays)


@pytest.mark.parametrize(
    "over",
    [
        {},
        {"optim.method": "adam", "optim.lr_attention": 1e-3, "optim.lr_mlp": 1e-3, "optim.lr_other": 1e-3},
        {"optim.momentum": 0.9, "model.positional": "learned", "model.n_layers": 2, "optim.lr_mlp": 1.0},
    ],
    ids=["sgd", "adam", "sgd-momentum-learned-pe"],
)
def test_resume_from_checkpoint_is_bit_exact(over):
    cfg = small_cfg(**{"optim.lr_attention": 1.0, "optim.lr_other": 1.0, "optim.gamma": 0.9, **over})
    corpus = synthetic_corpus(n_train=600)  # 18 windows per epoch: the run crosses an epoch
    straight = TextTrainer(cfg, corpus)
    straight.advance(25)
    first = TextTrainer(cfg, corpus)
    first.advance(11)
    arrays, meta = first.checkpoint()
    torch.rand(100)  # other code using the global RNG in between must not matter
    resumed = TextTrainer(cfg, corpus)
    resumed.restore(arrays, meta)
    resumed.advance(14)
    for (k, a), (_, b) in zip(straight.model.state_dict().items(), resumed.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), k
    s1, s2 = straight.snapshot(), resumed.snapshot()
    assert all(np.array_equal(s1.scalars[k], s2.scalars[k]) for k in s1.scalars)


def test_trainer_rng_is_isolated_from_global_rng():
    cfg = small_cfg()
    a, b = TextTrainer(cfg, synthetic_corpus()), TextTrainer(cfg, synthetic_corpus())
    a.advance(3)
    torch.manual_seed(12345)
    b.advance(3)
    assert all(torch.equal(x, y) for x, y in zip(a.model.parameters(), b.model.parameters(), strict=True))


def test_too_small_corpora_are_refused_with_the_numbers():
    with pytest.raises(ConfigError, match=r"validation text has 15 tokens; probe.eval_batch = 2"):
        TextTrainer(small_cfg(), synthetic_corpus(n_val=15))
    with pytest.raises(ConfigError, match=r"training text has 5 tokens: too few for batch = 4"):
        TextTrainer(small_cfg(), synthetic_corpus(n_train=5))


def test_divergence_is_reported():
    from scansnap.kinds.text.science.trainer import TextDivergedError

    cfg = small_cfg(**{"optim.lr_other": 1e3, "optim.lr_attention": 1e3, "optim.lr_mlp": 1e3, "optim.clip_norm": None})
    tr = TextTrainer(cfg, synthetic_corpus())
    with pytest.raises(TextDivergedError, match="diverged"):
        tr.advance(200)
