"""Steps/s of the T→∞ trainers with the Lemma-3 decoder (the presets ``lecture`` and ``theorem4``), this checkout
against another commit, side by side: the two alternate ``--repeats`` times, each a fresh process on one torch
thread timing ``--steps`` steps after 50.

    .venv/bin/python -m bench.lemma3_step --against fbecbb0

``--against REV`` runs that commit from a temporary ``git worktree`` with this checkout's packages (a commit from
before the package move imports ``engine`` where this one imports ``scansnap``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from bench.page_load import worktree

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ("lecture", "theorem4")
CHILD = """
import importlib, json, sys, time, torch
torch.set_num_threads(1)
pkg, steps = sys.argv[1], int(sys.argv[2])
Trainer = importlib.import_module(pkg + ".core.train").Trainer
get_preset = importlib.import_module(pkg + ".paper.presets").get_preset
out = {}
for name in sys.argv[3:]:
    tr = Trainer(get_preset(name).config)
    tr.advance(50)
    t = time.perf_counter()
    tr.advance(steps)
    out[name] = steps / (time.perf_counter() - t)
print(json.dumps(out))
"""


def steps_per_s(root: Path, steps: int) -> dict[str, float]:
    """One fresh process of the tree at ``root``: steps/s of each preset."""
    pkg = "scansnap" if (root / "scansnap" / "core").is_dir() else "engine"
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, pkg, str(steps), *PRESETS], cwd=root, env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, help="the commit to compare this checkout with")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--json")
    args = ap.parse_args()
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        roots = {args.against: worktree(stack, args.against, tmp), "this checkout": ROOT}
        runs: dict[str, list[dict[str, float]]] = {label: [] for label in roots}
        for _ in range(args.repeats):
            for label, root in roots.items():
                runs[label].append(steps_per_s(root, args.steps))
    medians = {label: {p: statistics.median(r[p] for r in rs) for p in PRESETS} for label, rs in runs.items()}
    result = {"against": args.against, "steps": args.steps, "repeats": args.repeats, "steps_per_s": medians}
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
