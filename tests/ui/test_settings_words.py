"""Compare's legends name each run by the settings that differ among the chosen runs, in words (issue: a
real-text run read "P(l|n) source=upload, upload_name=None"): knob labels, never a dotted key where a label
exists, never Python's None; a real-text run's corpus by its file's name; the run's name when nothing
differs; the kind when both kinds are chosen (scansnap/ui/settings_words.py)."""

from __future__ import annotations

import re

import pytest

from scansnap.core.config import flatten_dotted
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.ui.state import TEXT_KNOBS
from scansnap.kinds.text.ui.words import BUILTIN_CORPUS, CORPUS_KEYS, corpus_words
from scansnap.paper.presets import get_preset, load_presets
from scansnap.ui.knobs import KNOBS
from scansnap.ui.settings_words import (
    LegendRun,
    labels,
    legend_names,
    number,
    seeds_words,
    setting_label,
    value_words,
)

UPLOAD = "0123456789abcdef-moby dick.txt"  # a stored upload's name: its bytes' hash, then the file's name
DOTTED = re.compile(r"\b(data|model|optim|replicas|snapshots|probe)\.[a-z_]+")  # a config key as it is stored


def text_run(rid: str, name: str = "", **over) -> LegendRun:
    return LegendRun(rid, name or rid, "text", TextRunConfig.from_dict(over).to_dict())


def syn_run(rid: str, name: str = "", preset: str = "syn-small", **over) -> LegendRun:
    cfg = get_preset(preset).config.with_overrides(over)
    return LegendRun(rid, name or rid, "synthetic", cfg.to_dict())


def readable(names: list[str]) -> None:
    for n in names:
        assert "None" not in n and not DOTTED.search(n), n


def test_text_runs_differing_in_corpus_and_layers_are_named_by_both():
    a = text_run("a", data={"source": "upload", "upload_name": UPLOAD}, model={"n_layers": 2})
    b = text_run("b", model={"n_layers": 1})
    names = legend_names([a, b])
    assert names == [
        f"{setting_label('data.corpus', 'text')} = moby dick.txt, {setting_label('model.n_layers', 'text')} = 2",
        f"{setting_label('data.corpus', 'text')} = {BUILTIN_CORPUS}, {setting_label('model.n_layers', 'text')} = 1",
    ]
    assert setting_label("data.corpus", "text") == "corpus" and setting_label("model.n_layers", "text") == "layers"
    readable(names)


def test_text_settings_read_as_words_with_values_for_a_person():
    a = text_run("a", model={"positional": "learned"}, optim={"lr_attention": 0.5, "clip_norm": None})
    b = text_run("b", model={"positional": "none"}, optim={"lr_attention": 5.0})
    names = legend_names([a, b])
    assert names == [
        "positional encoding = learned, attention learning rate = 0.5, gradient clip (norm) = off",
        "positional encoding = none, attention learning rate = 5, gradient clip (norm) = 0.5",
    ]
    readable(names)


def test_synthetic_runs_are_named_by_their_learning_rates_token_counts_and_seeds():
    a = syn_run("a", **{"optim.eta_z": 2.0, "data.num_distinct_per_next": 20, "replicas.seeds": [1, 2, 3]})
    b = syn_run("b", **{"optim.eta_z": 0.5, "data.num_distinct_per_next": 5, "replicas.seeds": [4]})
    names = legend_names([a, b])
    tokens = setting_label("data.num_distinct_per_next", "synthetic")
    assert names == [f"{tokens} = 20, η_Z = 2, seeds = 1–3", f"{tokens} = 5, η_Z = 0.5, seed = 4"]
    readable(names)


def test_a_sweep_is_named_by_its_learning_rate_ranges():
    one = syn_run("one", **{"optim.eta_y": 1.0, "optim.eta_z": 1.0})
    sweep = syn_run("sw", **{"replicas.lr_pairs": [[0.5, 0.5], [2.0, 1.0], [10.0, 2.0]]})
    names = legend_names([one, sweep])
    assert names == ["η_Z = 1, η_Y = 1", "η_Z = 0.5 to 2 (3 values), η_Y = 0.5 to 10 (3 values)"]
    readable(names)


def test_nothing_differs_the_run_is_its_name_and_the_same_name_gets_its_id():
    assert legend_names([syn_run("a", "first"), syn_run("b", "second")]) == ["first", "second"]
    assert legend_names([syn_run("a", "same"), syn_run("b", "same")]) == ["same (run a)", "same (run b)"]


def test_mixed_kinds_say_the_kind_and_what_differs_within_each():
    runs = [syn_run("s1", "syn", **{"optim.eta_y": 10.0}), syn_run("s2", "syn"), text_run("t", "fig7")]
    names = legend_names(runs)
    assert names[0].startswith("synthetic: η_Y = 10") and names[1].startswith("synthetic: η_Y = 1")
    assert names[2] == "real text: fig7"  # the only run of its kind: its name
    readable(names)


def test_every_preset_pair_is_named_in_words():
    """Any two presets of a kind (the settings a lecturer compares): no raw key, no None, names differ."""
    for kind in ("synthetic", "text"):
        presets = list(load_presets(kind).items())
        runs = [LegendRun(name, name, kind, p.config.to_dict()) for name, p in presets]
        for i in range(len(runs) - 1):
            pair = legend_names(runs[i : i + 2])
            readable(pair)
            assert pair[0] != pair[1]


def test_every_config_key_has_a_label_and_a_knob_keeps_its_own():
    for kind, knobs, cfg in (
        ("synthetic", KNOBS, get_preset("syn-small").config),
        ("text", TEXT_KNOBS, TextRunConfig()),
    ):
        for key in flatten_dotted(cfg.to_dict()):
            if key == "name" or (kind == "text" and key in CORPUS_KEYS):
                continue  # the corpus keys make one setting, data.corpus
            assert key in labels(kind), (kind, key)
        for k in knobs:  # the knob's label without its gloss: "η_Y (decoder)" → "η_Y"
            if k.key not in ("name", "data.source") and not k.key.startswith("optim.lr_"):
                assert k.label.startswith(setting_label(k.key, kind)), (k.key, k.label)


@pytest.mark.parametrize(
    ("value", "words"),
    [(0.5, "0.5"), (2.0, "2"), (1e-8, "1e-8"), (30_000, "30\u2009000"), (True, "yes"), (False, "no"), (128, "128")],
)
def test_numbers_read_as_a_person_writes_them(value, words):
    assert number(value) == words


def test_values_never_read_none_and_lists_read_by_their_length():
    assert value_words("optim.clip_norm", None) == "off"
    assert value_words("some.key", None) == "not set"
    assert value_words("data.T", "inf") == "∞"
    assert value_words("data.table", [[0.5, 0.5], [1.0, 0.0]]) == "2 × 2 table"
    assert seeds_words([1]) == "1" and seeds_words([3, 4, 5]) == "3–5" and seeds_words([1, 5, 9]) == "1/5/9"
    assert seeds_words(list(range(0, 20, 2))) == "10 seeds"


def test_a_corpus_is_named_as_a_person_knows_it():
    assert corpus_words({"source": "upload", "upload_name": UPLOAD}) == "moby dick.txt"
    assert corpus_words({"source": "wikitext-dir", "path": "/data/wikitext-2"}) == "wikitext-2"
    assert corpus_words({"source": "huggingface", "hf_dataset": "wikitext-103-v1"}) == "wikitext-103-v1"
    assert corpus_words({"source": "builtin"}) == BUILTIN_CORPUS
