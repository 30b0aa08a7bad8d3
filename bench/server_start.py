"""The dashboard's start: seconds from ``streamlit run`` to ``/_stcore/health`` answering (the prewarm
included: the server answers once every page's imports are done) and the server's CPU-s by then; and a
run's overlay process (``scansnap.kinds.synthetic.service.theory``): seconds and CPU-s of its imports.
``--variant NAME@CHECKOUT`` (two or more) measures checkouts side by side, interleaved:

    .venv/bin/python -m bench.server_start --repeats 5
    .venv/bin/python -m bench.server_start --variant main@/tmp/main --variant change@. --repeats 5

Each start serves a fresh data directory.  Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.load_test import Variant, add_variant_argument
from bench.webserver import ROOT, serve

OVERLAY_MODULE = "scansnap.kinds.synthetic.service.theory"


def server_start(root: str | None, env: dict[str, str]) -> dict[str, float]:
    """One server of checkout ``root`` (with ``env``) started: seconds to health, and its CPU-s then."""
    with (
        tempfile.TemporaryDirectory() as d,
        serve(Path(d) / "data", Path(d) / "server.log", env=env, root=root) as srv,
    ):
        return {"healthy_s": round(time.monotonic() - srv.t_launch, 2), "cpu_s": round(srv.cpu_s(), 2)}


def overlay_imports(root: str | None) -> dict[str, float]:
    """A fresh interpreter importing the overlay process's module from checkout ``root``: wall s, CPU-s."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", f"import {OVERLAY_MODULE}"], cwd=root or ROOT, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"overlay_import_s": round(time.monotonic() - t0, 2), "overlay_import_cpu_s": round(cpu, 2)}


def medians(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}


def measure(variants: list[Variant], repeats: int) -> dict[str, Any]:
    """Each variant's start ``repeats`` times, interleaved; each repeat's figures and their medians."""
    rows: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in variants}
    for _ in range(repeats):
        for name, root, env in variants:
            rows[name].append(server_start(root, dict(env)) | overlay_imports(root))
    return {"repeats": repeats, "variants": {n: {"runs": r, "median": medians(r)} for n, r in rows.items()}}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5, help="starts per variant (interleaved)")
    add_variant_argument(ap, "a checkout to start (give two or more to compare; default: this one)")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error(f"--repeats {args.repeats}: allowed 1 or more")
    res = measure(args.variant or [("this checkout", None, ())], args.repeats)
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
