"""Size limits from a memory budget: the estimate bounds reality, refusals say estimate and limit."""

import json
import subprocess
import sys

import pytest

from engine.core.config import ConfigError, RunConfig
from engine.paper.presets import get_preset
from engine.service.budget import SAFETY, check_budget, estimate
from engine.service.runner import RunJob
from engine.service.store import RunStore

# Peak RSS of the training itself: Linux's VmHWM is reset to the current RSS (clear_refs "5") once
# torch is imported, so the import's own peak does not hide the run's allocations.
CHILD = """
import json, re, sys
from engine.core.config import RunConfig
from engine.core.train import Trainer

def kb(field):
    return int(re.search(field + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1))

cfg = RunConfig.from_json(sys.argv[1])
open("/proc/self/clear_refs", "w").write("5")
before = kb("VmRSS")
tr = Trainer(cfg); tr.advance(3); tr.snapshot()
print(json.dumps((kb("VmHWM") - before) / 1024))
"""


@pytest.mark.parametrize(
    "over",
    [
        {"data": {"num_last": 10, "num_next_per_last": 2}, "replicas": {"seeds": list(range(40))}},
        {
            "data": {"num_last": 4, "num_next_per_last": 2, "num_distinct_per_next": 400},
            "optim": {"batch": 256},
            "replicas": {"seeds": [1, 2, 3, 4]},
        },
    ],
)
def test_estimate_bounds_measured_memory(over):
    cfg = RunConfig.from_dict(over)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, cfg.to_json(indent=None)], capture_output=True, text=True, check=True, cwd="."
    )
    measured = json.loads(out.stdout.strip().splitlines()[-1])
    est = estimate(cfg).total_mb
    assert measured > 20  # the config is big enough for the comparison to mean something
    # the estimate must bound the peak, and not refuse runs that fit: beyond its ×SAFETY (1.5) it may count
    # temporaries that never coexist, but by no more than 4× (measured here: est ≈ 2.0× the peak for both)
    assert measured <= est <= 4 * SAFETY * measured, (measured, est)


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
