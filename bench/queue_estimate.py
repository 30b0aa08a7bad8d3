"""How true is the queue's estimate of a run's slot time?  Each config is trained through a job manager
with as many slots as cores, as the dashboard trains it in a hall: every slot busy with a copy of the
run (worker start, snapshots, the mean-field twin, the store, one torch thread each).  Each run's slot
time (from its start to its end) is set beside the estimate the queue uses
(``engine.service.run_kinds.run_seconds``).  A queued visitor's stated wait is a sum of these
estimates, so a ratio measured/estimate above 1 means a wait stated too short.

    .venv/bin/python -m bench.queue_estimate          # prints JSON (bench.run_all keeps it)

Each config runs twice: the first round pays for its mean-field twin, the second finds it cached (what
a hall's second student of a preset gets).
"""

from __future__ import annotations

import json
import tempfile
import time
from typing import Any

from engine.paper.presets import get_preset
from engine.service.jobs import JobManager
from engine.service.run_kinds import run_seconds
from engine.service.store import RunStore

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "syn-small (the Lab's default, 100 steps)": ("syn-small", {}),
    "syn-small, 2,000 steps": ("syn-small", {"optim.steps": 2000}),
    "lecture at full speed (300 steps)": ("lecture", {}),
    "syn-small-adam-0.1": ("syn-small-adam-0.1", {}),
    "theorem4, 5,000 steps": ("theorem4", {"optim.steps": 5000}),
    "syn-medium-1 (160 replicas)": ("syn-medium-1", {}),
    "text-fig7-1layer, 30 steps": ("text-fig7-1layer", {"optim.steps": 30}),
}


def measure(m: JobManager, cfg: Any) -> float:
    """The longest slot time of ``m.max_concurrent`` copies of ``cfg`` trained at once."""
    rids = [m.submit(cfg) for _ in range(m.max_concurrent)]
    for rid in rids:
        status = m.wait(rid, timeout=3600)
        if status != "finished":
            raise RuntimeError(f"{cfg.name}: {status} {m.status(rid).message}")
    return max(m.status(rid).elapsed_s for rid in rids)


def main() -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(tmp)
        m = JobManager(store)  # slots = cores, one torch thread each
        measure(m, get_preset("syn-small").config.with_overrides({"optim.steps": 2}))  # the fork server's start
        for label, (preset, over) in CASES.items():
            base = get_preset(preset, "text" if preset.startswith("text-") else "synthetic").config
            cfg = base.with_overrides(over) if over else base
            estimate = run_seconds(tmp, cfg)
            first, second = measure(m, cfg), measure(m, cfg)
            rows.append(
                {
                    "case": label,
                    "steps": cfg.optim.steps,
                    "estimate_s": round(estimate, 3),
                    "first_s": round(first, 3),
                    "second_s": round(second, 3),
                    "ratio_first": round(first / estimate, 2),
                    "ratio_second": round(second / estimate, 2),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
        m.shutdown()
        store.close()
    return {"cases": rows, "max_ratio": max(max(r["ratio_first"], r["ratio_second"]) for r in rows)}


if __name__ == "__main__":
    t0 = time.monotonic()
    out = main()
    out["wall_s"] = round(time.monotonic() - t0, 1)
    print("{")
    print(json.dumps(out, indent=2)[2:])
