"""The real-text presets: present, valid, within budget, and each differs from its base as named."""

from __future__ import annotations

import json

import pytest

from engine.core.config import ConfigError
from engine.paper.text_presets import get_text_preset, load_text_presets
from engine.service.text_budget import check_text_budget

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
    presets = load_text_presets()
    assert set(presets) == EXPECTED
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
    a, b = get_text_preset(name).config.to_dict(), get_text_preset(base).config.to_dict()
    assert differences(a, b) - {"name"} == changed


def test_fig7_and_joma_presets_hold_the_papers_settings():
    f = get_text_preset("text-fig7-1layer").config
    assert (f.optim.method, f.optim.lr_other, f.optim.lr_mlp, f.model.dropout) == ("sgd", 5, 10, 0.3)
    assert f.optim.steps == 1500
    j = get_text_preset("text-joma-real").config
    assert (j.optim.method, j.optim.lr_attention, j.model.dropout, j.optim.gamma) == ("adam", 1e-4, 0.2, 0.95)
    assert j.optim.steps == 20 * 1140  # 20 epochs of 1,140 windows (built-in corpus, batch 20 × bptt 35)


def test_unknown_and_malformed_presets_are_named(tmp_path):
    with pytest.raises(ConfigError, match="unknown text preset 'nope'; available: text-fig7-1layer"):
        get_text_preset("nope")
    (tmp_path / "bad.json").write_text(json.dumps({"config": {"model": {"n_layers": 9}}}))
    with pytest.raises(ConfigError, match=r"text preset bad\.json is invalid: model\.n_layers = 9"):
        load_text_presets.__wrapped__(str(tmp_path))
