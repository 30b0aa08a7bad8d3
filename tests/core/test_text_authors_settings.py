"""The authors' real-text settings where they differ from the defaults (science §7b), each an option of
the text config: JoMA's optimiser rebuilt at every epoch (``optim.reset_each_epoch``), Fig. 7's lr 10 on
layer 0's MLP only (``optim.mlp_lr_layers = "first"``), layers that start as copies of one
(``model.layer_init = "copy"``, as nn.TransformerEncoder deep-copies its layer) and the maps drawn on
the training streams (``probe.stream = "train"``, as the notebook's ``evaluate(model, train_data)``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science.config import check_corpus_fits
from scansnap.kinds.text.science.data import batchify, window
from scansnap.kinds.text.science.trainer import TextTrainer
from tests.core.test_text_trainer import small_cfg, synthetic_corpus

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ADAM = {"optim.method": "adam", "optim.lr_attention": 1e-3, "optim.lr_mlp": 1e-3, "optim.lr_other": 1e-3}


def _adam_states(tr: TextTrainer) -> list[dict]:
    return [tr.opt.state[p] for g in tr.opt.param_groups for p in g["params"] if p in tr.opt.state]


def _fresh_after_one_step(state: dict, beta1: float, beta2: float) -> bool:
    """After one Adam step from a fresh state, m = (1 − β₁)g and v = (1 − β₂)g², so
    v = (1 − β₂)/(1 − β₁)² · m² for every entry, whatever the gradient g."""
    m, v = state["exp_avg"].double(), state["exp_avg_sq"].double()
    return bool(torch.allclose(v, (1 - beta2) / (1 - beta1) ** 2 * m**2, rtol=1e-5, atol=1e-30))


def test_reset_each_epoch_starts_every_epoch_with_a_fresh_adam():
    corpus = synthetic_corpus(n_train=600)  # 18 windows per epoch
    reset = TextTrainer(small_cfg(**ADAM, **{"optim.reset_each_epoch": True, "optim.gamma": 1.0}), corpus)
    kept = TextTrainer(small_cfg(**ADAM), corpus)
    reset.advance(reset.windows + 1)  # the first step of epoch 1
    kept.advance(kept.windows + 1)
    assert {float(s["step"]) for s in _adam_states(reset)} == {1.0}  # JoMA: the moments start again
    assert {float(s["step"]) for s in _adam_states(kept)} == {float(kept.windows + 1)}
    assert all(_fresh_after_one_step(s, 0.9, 0.999) for s in _adam_states(reset))
    assert not all(_fresh_after_one_step(s, 0.9, 0.999) for s in _adam_states(kept))
    assert {g["lr"] for g in reset.opt.param_groups} == {1e-3}  # γ = 1: JoMA's StepLR is never stepped


def test_a_run_with_resets_resumes_bit_for_bit_across_an_epoch_boundary():
    cfg = small_cfg(**ADAM, **{"optim.reset_each_epoch": True})
    corpus = synthetic_corpus(n_train=600)
    straight = TextTrainer(cfg, corpus)
    straight.advance(25)
    first = TextTrainer(cfg, corpus)
    first.advance(11)
    resumed = TextTrainer(cfg, corpus)
    resumed.restore(*first.checkpoint())
    resumed.advance(14)  # crosses the boundary at step 18
    for (k, a), (_, b) in zip(straight.model.state_dict().items(), resumed.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), k


def test_lr_mlp_on_the_first_layer_only():
    cfg = small_cfg(
        **{"model.n_layers": 3, "optim.lr_mlp": 10.0, "optim.lr_other": 5.0, "optim.mlp_lr_layers": "first"}
    )
    tr = TextTrainer(cfg, synthetic_corpus())
    name_of = {id(p): n for n, p in tr.model.named_parameters()}
    groups = {g["name"]: (g["lr"], sorted(name_of[id(p)] for p in g["params"])) for g in tr.opt.param_groups}
    lr, names = groups["mlp"]
    assert lr == 10.0 and names == sorted(n for n in name_of.values() if n.startswith("blocks.0.mlp."))
    other_lr, others = groups["other"]
    assert other_lr == 5.0 and {n for n in name_of.values() if ".mlp." in n and not n.startswith("blocks.0.")} <= set(
        others
    )
    every = TextTrainer(small_cfg(**{"model.n_layers": 3}), synthetic_corpus())
    assert len(next(g for g in every.opt.param_groups if g["name"] == "mlp")["params"]) == 3 * len(names)


def test_copied_layers_start_identical_and_the_rest_of_the_model_is_unchanged():
    corpus = synthetic_corpus()
    copied = TextTrainer(small_cfg(**{"model.n_layers": 3, "model.layer_init": "copy"}), corpus).model
    drawn = TextTrainer(small_cfg(**{"model.n_layers": 3}), corpus).model
    first = copied.blocks[0].state_dict()
    for block in copied.blocks[1:]:
        assert all(torch.equal(first[k], v) for k, v in block.state_dict().items())
    assert not torch.equal(drawn.blocks[0].attn.qkv.weight, drawn.blocks[1].attn.qkv.weight)
    assert torch.equal(copied.blocks[0].attn.qkv.weight, drawn.blocks[0].attn.qkv.weight)  # layer 0 as drawn
    assert torch.equal(copied.embed.weight, drawn.embed.weight) and torch.equal(
        copied.decoder.weight, drawn.decoder.weight
    )


def test_the_train_stream_probe_is_stream_zero_of_a_training_window():
    corpus = synthetic_corpus()
    cfg = small_cfg(**{"probe.stream": "train", "probe.probe_window": 5})
    tr = TextTrainer(cfg, corpus)
    expected = window(batchify(corpus.train_ids, cfg.optim.batch), 5, cfg.optim.bptt)[0]
    assert tr.probe_index == 5 and torch.equal(tr.probe_x, expected)
    np.testing.assert_array_equal(tr.snapshot().arrays["attn_map"].shape[-1], cfg.optim.bptt)
    val = TextTrainer(small_cfg(**{"probe.probe_window": 5}), corpus)
    assert not torch.equal(val.probe_x, tr.probe_x[: val.probe_x.shape[0]])  # the default reads validation text
    assert torch.equal(val.val_x, tr.val_x)  # the validation loss reads the validation streams either way


def test_a_train_stream_probe_needs_a_full_training_window():
    cfg = small_cfg(**{"probe.stream": "train", "optim.batch": 100, "optim.bptt": 8})
    with pytest.raises(ConfigError, match=r"probe\.stream = 'train'.*no full window of bptt \+ 1 = 9"):
        check_corpus_fits(cfg, train_tokens=800, val_tokens=800)
    check_corpus_fits(cfg.with_overrides({"probe.stream": "validation"}), train_tokens=800, val_tokens=800)


def test_an_epoch_of_the_schedule_may_be_the_authors_not_the_corpus():
    """``optim.epoch_steps`` = E: the reset and the decay η·γ^⌊s/E⌋ follow E steps (JoMA's epoch of
    WikiText-2 on any corpus), the data still wraps at the corpus's W windows."""
    corpus = synthetic_corpus(n_train=600)
    cfg = small_cfg(**ADAM, **{"optim.reset_each_epoch": True, "optim.gamma": 0.5, "optim.epoch_steps": 25})
    tr = TextTrainer(cfg, corpus)
    assert tr.windows < 25 and tr.epoch_steps == 25
    tr.advance(tr.windows + 1)  # past the corpus's end: no reset, no decay yet
    assert {float(s["step"]) for s in _adam_states(tr)} == {float(tr.windows + 1)}
    assert {g["lr"] for g in tr.opt.param_groups} == {1e-3}
    tr.advance(25 + 1 - tr.step_count)  # the first step of the schedule's epoch 1
    assert {float(s["step"]) for s in _adam_states(tr)} == {1.0}
    assert {g["lr"] for g in tr.opt.param_groups} == {5e-4}
