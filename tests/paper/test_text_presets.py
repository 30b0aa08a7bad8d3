"""The real-text presets: present, valid, within budget, and each differs from its base as named."""

from __future__ import annotations

import json

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.text.service.budget import check_text_budget
from scansnap.paper.presets import get_preset, load_presets

EXPECTED = {
    "text-fig7-1layer",
    "text-fig7-3layer",
    "text-joma-real",
    "text-no-pe",
    "text-learned-pe",
    "text-linear-mlp",
    "text-seq-32",
    "text-seq-128",
    "text-seq-512",
}
BUILTIN_VOCAB = 12_526  # <unk> + the distinct basic_english tokens of the built-in corpus's training part


def test_every_preset_is_there_and_fits_the_budget():
    presets = load_presets("text")
    assert set(presets) == EXPECTED | {f"{n}-live" for n in EXPECTED}
    for p in presets.values():
        assert p.config.name == p.name and p.description
        check_text_budget(p.config, vocab=BUILTIN_VOCAB, train_tokens=800_000)


def differences(a: dict, b: dict, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for k in a:
        if isinstance(a[k], dict):
            out |= differences(a[k], b[k], f"{prefix}{k}.")
        elif a[k] != b[k]:
            out.add(f"{prefix}{k}")
    return out


@pytest.mark.parametrize(
    ("name", "base", "changed"),
    [
        ("text-fig7-3layer", "text-fig7-1layer", {"model.n_layers"}),
        ("text-no-pe", "text-fig7-1layer", {"model.positional"}),
        ("text-learned-pe", "text-fig7-1layer", {"model.positional"}),
        ("text-seq-32", "text-fig7-1layer", {"optim.bptt"}),
        ("text-seq-128", "text-fig7-1layer", {"optim.bptt"}),
        ("text-seq-512", "text-fig7-1layer", {"optim.bptt", "optim.batch"}),
        ("text-linear-mlp", "text-joma-real", {"model.mlp"}),
    ],
)
def test_open_question_presets_change_only_their_knob(name, base, changed):
    a, b = get_preset(name, "text").config.to_dict(), get_preset(base, "text").config.to_dict()
    assert differences(a, b) - {"name"} == changed


def test_fig7_and_joma_presets_hold_the_papers_settings():
    """The authors' settings as their code runs them (science §7b)."""
    f = get_preset("text-fig7-1layer", "text").config
    assert (f.optim.method, f.optim.lr_other, f.optim.lr_mlp, f.model.dropout) == ("sgd", 5, 10, 0.3)
    assert f.optim.steps == 1500
    assert (f.optim.mlp_lr_layers, f.model.layer_init, f.probe.stream) == ("first", "copy", "train")  # the notebook
    assert f.optim.epoch_steps == 2929 > f.optim.steps  # one WikiText-2 epoch: the rate never decays in the run
    j = get_preset("text-joma-real", "text").config
    assert (j.optim.method, j.optim.lr_attention, j.model.dropout) == ("adam", 1e-4, 0.2)
    assert (j.optim.reset_each_epoch, j.optim.gamma, j.model.layer_init) == (True, 1.0, "copy")  # JoMA's code
    assert j.optim.steps == 20 * j.optim.epoch_steps == 20 * 2929  # JoMA's 20 epochs of WikiText-2 (≈ 58,600)
    for name in EXPECTED:  # every paper preset starts its layers as copies of one, as the authors'
        assert get_preset(name, "text").config.model.layer_init == "copy", name


def test_unknown_and_malformed_presets_are_named(tmp_path):
    with pytest.raises(ConfigError, match="unknown text preset 'nope'; available: text-fig7-1layer"):
        get_preset("nope", "text")
    (tmp_path / "bad.json").write_text(json.dumps({"config": {"model": {"n_layers": 9}}}))
    with pytest.raises(ConfigError, match=r"text preset bad\.json is invalid: model\.n_layers = 9"):
        load_presets.__wrapped__("text", str(tmp_path))


# ---------------------------------------------------------------------------- live variants
LIVE_CHANGES = {"data.vocab_size", "optim.batch", "probe.val_windows", "probe.eval_batch", "snapshots.log_count"}


def test_every_paper_preset_has_a_live_variant_that_changes_only_the_live_settings():
    """``<preset>-live`` is its base's config with a capped vocabulary, a smaller batch, a smaller
    probe and fewer snapshots (and, for the long JoMA runs, fewer steps): nothing of the model or
    the optimiser's rule changes, so the live run shows the same dynamics sooner."""
    presets = load_presets("text")
    bases = [n for n in presets if not n.endswith("-live")]
    assert {f"{n}-live" for n in bases} == set(presets) - set(bases)
    for base in bases:
        live, paper = presets[f"{base}-live"].config, presets[base].config
        changed = differences(live.to_dict(), paper.to_dict()) - {"name"}
        allowed = LIVE_CHANGES | ({"optim.steps", "snapshots.linear_every"} if paper.optim.steps > 1500 else set())
        assert changed <= allowed, (base, changed - allowed)
        assert live.data.vocab_size < paper.data.vocab_size and live.optim.steps <= 1500
        assert "live" in presets[f"{base}-live"].title and presets[f"{base}-live"].description


def test_a_variant_is_its_base_with_its_overrides(tmp_path):
    base = {"title": "B", "config": {"name": "b", "optim": {"steps": 100}}}
    (tmp_path / "b.json").write_text(json.dumps(base))
    (tmp_path / "b-live.json").write_text(json.dumps({"variant_of": "b", "overrides": {"optim.batch": 5}}))
    got = load_presets.__wrapped__("text", str(tmp_path))
    assert got["b-live"].config == got["b"].config.with_overrides({"optim.batch": 5, "name": "b-live"})
    (tmp_path / "c.json").write_text(json.dumps({"variant_of": "b-live", "overrides": {}}))
    with pytest.raises(ConfigError, match=r"c\.json is invalid: variant_of 'b-live' is not a preset of this shelf"):
        load_presets.__wrapped__("text", str(tmp_path))
    (tmp_path / "c.json").write_text(json.dumps({"variant_of": "b", "overrides": {"optim.batch": 0}}))
    with pytest.raises(ConfigError, match=r"c\.json is invalid: .*optim\.batch"):
        load_presets.__wrapped__("text", str(tmp_path))
