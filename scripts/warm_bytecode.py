"""Compile to bytecode the modules the lab's processes import, by importing them with bytecode writing on.

    .venv/bin/python scripts/warm_bytecode.py runtime|cluster|dev      (scripts/setup_venv.sh runs it)

pip installs with ``--no-compile`` (it would compile one file after another: 51 of 84 s here, on 2 cores),
and compileall of all 15,000 files of site-packages took 36 s on both cores, most never imported.
Importing what the lab imports compiles ~3,000 files instead, in two processes side by side (torch's side:
the workers, the twin, the command line; the web server's side: the pages, and the kind's tools).  What
else a process imports compiles at its first import, once: `make` and scripts/ray_start.sh let Python
write bytecode (they unset PYTHONDONTWRITEBYTECODE, which this machine's shells set: with it set and no
.pyc, every process would compile torch anew, ~5 s).  A module that fails to import costs speed only: it
is named on stderr and the install goes on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TORCH_SIDE = (
    "engine.cli",
    "engine.service.worker",
    "engine.service.twin",
    "engine.core.train",
    "engine.core.text.trainer",
    "engine.paper.claims",
)
WEB_SIDE = ("ui.shell", "ui.kinds.synthetic.live", "ui.kinds.synthetic.actions")
TOOLS = {
    "runtime": (),
    "cluster": ("ray",),
    "dev": ("ray", "playwright.sync_api", "pytest", "xdist", "hypothesis"),
}


def groups(kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The modules each of the two processes imports for a venv of ``kind``."""
    if kind not in TOOLS:
        raise SystemExit(f"unknown kind {kind!r}: one of {', '.join(TOOLS)}")
    return TORCH_SIDE, WEB_SIDE + TOOLS[kind]


def child_env(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with bytecode writing on and the checkout importable."""
    env = {k: v for k, v in environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), environ.get("PYTHONPATH", "")) if p)
    return env


def main(kind: str) -> int:
    env = child_env(os.environ)
    procs = {
        names: subprocess.Popen(
            [sys.executable, "-c", f"import {', '.join(names)}"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for names in groups(kind)
    }
    for names, proc in procs.items():
        _, err = proc.communicate()
        if proc.returncode:
            last = (err.strip().splitlines() or ["(no message)"])[-1]
            print(
                f"warm_bytecode: importing {', '.join(names)} failed ({last}): they compile at first import",
                file=sys.stderr,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "runtime"))
