"""TextRunConfig: defaults are the paper's Fig. 7 run; bad input names field, value and what is allowed."""

from __future__ import annotations

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science.config import TextRunConfig


def test_defaults_are_the_papers_fig7_run():
    cfg = TextRunConfig()
    m, o = cfg.model, cfg.optim
    assert (m.d_model, m.d_ff, m.n_heads, m.n_layers, m.dropout) == (200, 200, 1, 1, 0.3)
    assert (m.positional, m.mlp, m.norm, m.tie_weights) == ("sinusoidal", "relu", "post", False)
    assert (o.method, o.lr_attention, o.lr_other, o.lr_mlp) == ("sgd", 5.0, 5.0, 10.0)
    assert (o.gamma, o.clip_norm, o.batch, o.bptt, o.steps) == (0.95, 0.5, 20, 35, 1500)
    assert cfg.snapshots.linear_every == 100


def test_json_round_trip_and_overrides():
    cfg = TextRunConfig().with_overrides({"model.n_layers": "3", "optim.method": "adam", "data.vocab_size": 5000})
    assert (cfg.model.n_layers, cfg.optim.method, cfg.data.vocab_size) == (3, "adam", 5000)
    assert TextRunConfig.from_json(cfg.to_json()) == cfg


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"model": {"n_layers": 5}}, "model.n_layers = 5: Input should be less than or equal to 4"),
        ({"model": {"positional": "rope"}}, "model.positional = 'rope': Input should be 'none', 'sinusoidal'"),
        ({"model": {"d_model": 10, "n_heads": 3}}, "d_model = 10 must be divisible by n_heads = 3"),
        ({"optim": {"lr_mlp": 0}}, "optim.lr_mlp = 0: Input should be greater than 0"),
        ({"optim": {"clip_norm": -1}}, "optim.clip_norm = -1"),
        ({"data": {"source": "wikitext-dir"}}, "needs path: the folder holding wiki.train.tokens"),
        ({"data": {"source": "upload"}}, "needs upload_name"),
        ({"data": {"path": "/tmp"}}, "path is only used with source='wikitext-dir'"),
    ],
)
def test_bad_values_name_field_value_and_allowed(over, needle):
    with pytest.raises(ConfigError) as e:
        TextRunConfig.from_dict(over)
    assert needle in str(e.value)


def test_unknown_keys_list_this_models_keys():
    with pytest.raises(ConfigError) as e:
        TextRunConfig.from_dict({"model": {"heads": 2}})
    msg = str(e.value)
    assert msg.startswith("model.heads: unknown key") and "n_heads" in msg and "positional" in msg
    with pytest.raises(ConfigError, match=r"^colour: unknown key; allowed keys: name, data, model"):
        TextRunConfig.from_dict({"colour": 1})
    with pytest.raises(ConfigError, match=r"unknown key 'model\.nope'"):
        TextRunConfig().with_overrides({"model.nope": 1})


def test_bad_json_is_a_config_error():
    with pytest.raises(ConfigError, match="not valid JSON"):
        TextRunConfig.from_json("{")
    with pytest.raises(ConfigError, match="must be an object"):
        TextRunConfig.from_json("[1]")
