"""A link's config settings are applied together, then the whole config is validated (issue: link
settings were checked one by one in URL order, so ``/text?model.n_heads=16&model.d_model=208``
dropped ``n_heads``).  Only an invalid combination is reported, naming the settings involved, and
the preset's values are kept for them."""

from __future__ import annotations

from scansnap.kinds.text.science.config import TextModelConfig
from scansnap.paper.presets import get_preset
from tests.apphelp import run_app
from tests.ui.test_text_page import open_text_page

TEXT_PRESET = "text-fig7-1layer"


def _texts(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def test_heads_and_width_that_only_fit_together_are_both_applied_on_the_text_page(data_dir):
    model = get_preset(TEXT_PRESET, "text").config.model
    # The finding: n_heads = 16 alone does not divide the preset's d_model, but 208 = 16 × 13 does.
    assert model.d_model % 16 != 0 and 208 % 16 == 0
    TextModelConfig(d_model=208, n_heads=16)  # the combination is valid
    at = open_text_page({"preset": TEXT_PRESET, "model.n_heads": "16", "model.d_model": "208"})
    assert not at.exception
    cfg = at.session_state["text.cfg"]["model"]
    assert (cfg["n_heads"], cfg["d_model"]) == (16, 208)
    assert "divisible" not in _texts(at.warning)
    assert at.query_params["model.n_heads"] in ("16", ["16"])  # the link keeps both


def test_an_invalid_combination_names_both_settings_and_keeps_the_presets_values(data_dir):
    model = get_preset(TEXT_PRESET, "text").config.model
    # 210 is not divisible by 4; each alone is fine with the preset (d_model 200 = 4 × 50, n_heads 1):
    # which one to keep would be a guess, so both keep the preset's values.
    assert 210 % 4 != 0 and model.d_model % 4 == 0 and 210 % model.n_heads == 0
    at = open_text_page({"preset": TEXT_PRESET, "model.n_heads": "4", "model.d_model": "210"})
    cfg = at.session_state["text.cfg"]["model"]
    assert (cfg["n_heads"], cfg["d_model"]) == (model.n_heads, model.d_model)
    warnings = _texts(at.warning)
    assert "model.n_heads and model.d_model do not fit together: both are ignored" in warnings, warnings
    assert "d_model = 210 must be divisible by n_heads = 4" in warnings


def test_the_lab_applies_settings_that_only_fit_together_whatever_their_order(data_dir):
    data = get_preset("syn-small").config.data
    # distinct_max = 0.05 alone is below the preset's distinct_min: only valid with distinct_min = 0.01.
    assert data.distinct_weights == "linspace" and data.distinct_min > 0.05
    at = run_app({"preset": "syn-small", "data.distinct_max": "0.05", "data.distinct_min": "0.01"})
    assert not at.exception
    got = at.session_state["lab.cfg"]["data"]
    assert (got["distinct_min"], got["distinct_max"]) == (0.01, 0.05)
    assert "distinct" not in _texts(at.warning)
    assert not at.button(key="btn.start").disabled


def test_a_bad_setting_does_not_take_a_good_one_down_with_it(data_dir):
    """Only the settings behind a problem are dropped: the valid pair stays, the bad value is said."""
    at = open_text_page({"preset": TEXT_PRESET, "model.n_heads": "16", "model.d_model": "208", "optim.steps": "abc"})
    cfg = at.session_state["text.cfg"]
    assert (cfg["model"]["n_heads"], cfg["model"]["d_model"]) == (16, 208)
    assert cfg["optim"]["steps"] == get_preset(TEXT_PRESET, "text").config.optim.steps
    assert "optim.steps = 'abc'" in _texts(at.warning) and "the link's optim.steps is ignored" in _texts(at.warning)
