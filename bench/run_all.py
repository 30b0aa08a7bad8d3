"""Run every benchmark one after the other and keep their JSON in ``bench/results/``.

    make bench                                  # all of them (~30 min on 2 cores)
    .venv/bin/python -m bench.run_all engine sweep reproduce   # a selection
    .venv/bin/python -m bench.run_all --device cuda step sweep # the training benches on a GPU

Each benchmark runs in its own subprocess (a fresh interpreter, nothing else of ours running),
prints its figures as JSON and exits; this script stores that JSON as
``bench/results/<name>.json`` together with the command, the wall time and the date.
``BENCHMARKS.md`` quotes these files.  Run it on an otherwise idle machine: the ratios are
measured side by side within each benchmark, but the browser benchmarks compete with
anything else for the two cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PY = sys.executable
BENCHES: dict[str, list[str]] = {
    "engine": [PY, "-m", "bench.engine_speed"],
    "engine_1thread": [PY, "-m", "bench.engine_speed", "--threads", "1"],
    "step": [PY, "-m", "bench.step_speed"],
    "step_1thread_cpu": [PY, "-m", "bench.step_speed", "--threads", "1", "--cpu-time"],
    "sweep": [PY, "-m", "bench.sweep_speed"],
    "reproduce": [PY, "-m", "bench.reproduce_speed"],
    "ui_throughput": [PY, "-m", "bench.ui_throughput", "--repeats", "3"],
    "ui_throughput_pinned": [PY, "-m", "bench.ui_throughput", "--repeats", "3", "--pin"],
    "ui_latency": [PY, "-m", "bench.ui_latency", "--trials", "40"],
    "ui_latency_pinned": [PY, "-m", "bench.ui_latency", "--trials", "40", "--pin"],
    "chart_draw": [PY, "-m", "bench.chart_draw"],
    "chart_sight": [PY, "-m", "bench.chart_sight"],
    "load": [PY, "-m", "bench.load_test", "--rounds", "50:20,150:30"],
    "hall": [PY, "-m", "bench.hall"],
    "upload_checks": [PY, "-m", "bench.upload_checks"],
    "estimates": [PY, "-m", "bench.estimates"],
    "export_memory": [PY, "-m", "bench.export_memory", "--against", "f78ffaf"],
    "tick_payload": [PY, "-m", "bench.tick_payload"],
    "first_paint": [PY, "-m", "bench.first_paint", "--repeats", "3"],
    "page_load": [PY, "-m", "bench.page_load", "--against", "1327af0", "--repeats", "6"],
    "lecture_pace": [PY, "-m", "bench.lecture_pace", "--repeats", "3", "--speeds", "story", "20"],
    "reproduce_page": [PY, "-m", "bench.reproduce_page"],
    "text_speed": [PY, "-m", "bench.text_speed"],
    "text_live": [PY, "-m", "bench.text_live", "--preset", "text-fig7-1layer-live"],
    "worker_start": [PY, "-m", "bench.worker_start", "--repeats", "3"],
    "server_start": [PY, "-m", "bench.server_start", "--repeats", "5"],
    "cluster": [PY, "-m", "bench.cluster_overhead", "--repeats", "3"],
    "cluster_predicted": [PY, "-m", "bench.cluster_overhead", "--predict-from", "bench/results/cluster.json"],
}


def last_json(text: str) -> object:
    """The last JSON object printed: from the last line that is exactly ``{`` to the end."""
    lines = text.rstrip().splitlines()
    start = max(i for i, line in enumerate(lines) if line == "{")
    return json.loads("\n".join(lines[start:]))


DEVICE_BENCHES = ("engine", "engine_1thread", "step", "step_1thread_cpu", "sweep", "reproduce", "text_speed")


def run(name: str, device: str | None = None) -> dict[str, object]:
    cmd = BENCHES[name] + (["--device", device] if device and name in DEVICE_BENCHES else [])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if out.returncode != 0 and "{" not in out.stdout:
        raise RuntimeError(f"{name} failed ({out.returncode}): {out.stderr[-3000:]}")
    return {
        "benchmark": name,
        "command": " ".join(Path(c).name if c == PY else c for c in cmd),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "wall_s": round(wall, 1),
        "exit_code": out.returncode,
        "cores": os.cpu_count(),
        "result": last_json(out.stdout),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help=f"benchmarks to run (default: all): {', '.join(BENCHES)}")
    ap.add_argument("--device", help=f"torch device for {', '.join(DEVICE_BENCHES)} (default: auto)")
    ap.add_argument("--suffix", default="", help="store results as <name><suffix>.json (e.g. _cuda)")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHES]
    if unknown:
        ap.error(f"unknown benchmark(s) {unknown}; choose from {', '.join(BENCHES)}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in args.names or list(BENCHES):
        print(f"== {name}: {' '.join(BENCHES[name][1:])}", flush=True)
        res = run(name, args.device)
        with tempfile.NamedTemporaryFile("w", dir=RESULTS, delete=False, suffix=".tmp") as fh:
            json.dump(res, fh, indent=1)
        Path(fh.name).replace(RESULTS / f"{name}{args.suffix}.json")
        print(f"   {res['wall_s']} s, exit {res['exit_code']} → bench/results/{name}{args.suffix}.json", flush=True)


if __name__ == "__main__":
    main()
