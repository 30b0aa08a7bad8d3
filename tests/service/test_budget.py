"""Size limits from a memory budget: refusals say estimate and limit (whether the estimate bounds what
training takes: bench/estimates.py)."""

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.service.budget import check_budget, estimate
from scansnap.paper.presets import get_preset
from scansnap.service.budget import WORKER_MB
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore


def test_refusal_states_estimate_and_limit(monkeypatch, tmp_path):
    monkeypatch.setenv("SCANSNAP_MAX_RUN_MB", "50")
    cfg = get_preset("syn-medium-10").config
    with pytest.raises(ConfigError) as e:
        check_budget(cfg)
    msg = str(e.value)
    assert "MB" in msg and "limit of 50 MB" in msg and "~" in msg
    store = RunStore(tmp_path)
    with pytest.raises(ConfigError):
        RunJob(cfg, store)
    assert store.list_runs() == []  # refused before anything was written
    monkeypatch.setenv("SCANSNAP_MAX_RUN_MB", "100000")
    assert check_budget(cfg).total_mb > 50


def test_work_cap(monkeypatch):
    monkeypatch.setenv("SCANSNAP_MAX_RUN_WORK", "1e6")
    with pytest.raises(ConfigError, match="element-operations"):
        check_budget(get_preset("syn-small").config.with_overrides({"optim.steps": 1000}))


def test_the_large_paper_layout_is_refused_with_the_decoder_named(monkeypatch):
    """M ≈ 10⁴ in the paper layout: Y is M_ctx × M = 9,990 × 10,020 floats (382 MB), as much again in its momentum
    buffer and in each checkpoint copy; the refusal says so and points to the compact layout."""
    data = {"num_last": 10, "num_next_per_last": 2, "num_common": 10, "num_distinct_per_next": 499}
    cfg = RunConfig.from_dict({"data": data})
    est = estimate(cfg)
    assert est.bytes_params == 4 * 2 * (9990 * 10020 + 10 * 9990)  # Y and Zq, and their momentum buffers
    monkeypatch.setenv("SCANSNAP_MAX_RUN_MB", "1024")
    with pytest.raises(ConfigError) as e:
        check_budget(cfg)
    msg = str(e.value)
    assert "the decoder Y alone is R × M_ctx × M_out = 1 × 9,990 × 10,020 values = 381.9 MB" in msg
    assert "layout='compact'" in msg and "limit of 1,024 MB" in msg
    compact = cfg.with_overrides({"data.layout": "compact"})
    assert check_budget(compact).total_mb - WORKER_MB < 50  # the worker process itself is counted apart
