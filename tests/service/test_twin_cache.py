"""The mean-field twin cache: a second run with the same twin reuses the first one's, equal to a twin
trained afresh; a different twin (another η) is trained and kept beside it; the cache stays bounded."""

from __future__ import annotations

import numpy as np

from scansnap.kinds.synthetic.science.meanfield import meanfield_twin
from scansnap.kinds.synthetic.service import twin
from scansnap.paper.presets import get_preset
from scansnap.service import twin_cache
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from scansnap.service.twin_cache import TwinCache


def _cfg(**over):
    return get_preset("syn-small").config.with_overrides({"optim.steps": 30, "optim.batch": 8, "data.T": 16, **over})


def test_runs_with_the_same_twin_share_it_and_it_equals_a_fresh_one(tmp_path, monkeypatch, one_torch_thread):
    trained = []
    real = twin.train_twin
    monkeypatch.setattr(twin, "train_twin", lambda plan, **kw: trained.append(plan) or real(plan, **kw))
    with RunStore(tmp_path) as store:
        a = RunJob(_cfg(name="first"), store)
        a.run()
        b = RunJob(_cfg(name="second, same twin"), store)
        b.run()
        assert len(trained) == 1, "the second run reused the first run's twin"
        c = RunJob(_cfg(**{"optim.eta_y": 3.0}), store)
        c.run()
        assert len(trained) == 2, "another η trains its own twin"
        fresh = meanfield_twin(_cfg())
        for rid in (a.run_id, b.run_id):
            stored = store.statics(rid)
            for k, v in fresh.items():
                np.testing.assert_array_equal(stored[k], v)
        assert not np.array_equal(store.statics(c.run_id)["mf_z"], fresh["mf_z"])


def test_the_cache_keeps_at_most_max_twins(tmp_path, monkeypatch):
    monkeypatch.setattr(twin_cache, "MAX_TWINS", 3)
    RunStore(tmp_path).close()
    cache = TwinCache(tmp_path)
    for i in range(5):
        cache.put(f"k{i}", {"x": np.full(2, i)})
    assert [cache.get(f"k{i}") is None for i in range(5)] == [True, True, False, False, False]
    np.testing.assert_array_equal(cache.get("k4")["x"], [4, 4])
    cache.close()
