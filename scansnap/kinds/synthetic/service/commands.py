"""The synthetic kind on the command line: what ``scansnap run`` prints of a run it trained, and
``scansnap theory`` (Theorem 4's B_n(t), t'_0 and t_0, science §2.8)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from scansnap.core.errors import BadInputError
from scansnap.core.metrics import METRICS
from scansnap.paper.verdicts import Tally, Verdict, verdict_text

# Every ``scansnap`` call adds this kind's commands: the theory (scipy) and the export (pandas) are imported
# where they are used, not by ``scansnap presets``.


def summary(job: Any, wall: float, first: Any, last: Any) -> list[str]:
    """The device, replicas and speed; the data's sizes; each metric at the first and the last snapshot (mean
    over replicas and classes); Theorem 4's t'_0 and t_0 for the first replica's η_Y; the run's verdicts."""
    from scansnap.kinds.synthetic.science import theory
    from scansnap.kinds.synthetic.service.export import run_verdicts_of

    cfg, pb = job.cfg, job.trainer.problem
    steps = job.step
    lines = [
        f"device {job.device}  replicas {job.trainer.R}  steps {steps}  wall {wall:.2f}s  "
        f"{steps / wall if wall > 0 else float('inf'):.0f} steps/s",
        f"data: K={pb.K} classes, Q={pb.Q} queries, M={pb.M} tokens ({pb.M_ctx} contextual), T={cfg.data.T}",
    ]
    if first is not None and last is not None:
        lines.append(f"{'metric':<20}{'step 0':>12}{f'step {last.step}':>12}   (mean over replicas and classes)")
        for k in (name for name in METRICS if name in first.scalars):
            lines.append(f"{k:<20}{_mean(first.scalars[k]):>12.4g}{_mean(last.scalars[k]):>12.4g}")
    eta_y = cfg.lr_pairs[0][0]
    lines.append(
        f"theory (M={pb.M}, K={pb.K}, η_Y={eta_y:g}): t'_0 = {theory.t0_prime(pb.M, pb.K, eta_y):.2f}, "
        f"t_0 = {theory.t0(pb.M, pb.K, eta_y):.2f} (batch-size-1 gradient-flow time, science §2.8)"
    )
    return [*lines, verdict_lines(run_verdicts_of(job.store, job.run_id))]


def verdict_lines(verdicts: list[dict[str, Any]]) -> str:
    """One line a verdict: replica, badge label and the text under the Lab's badge (PASS / FAIL /
    N/A, the number and what was measured beside it; for n/a why, and the failed conditions)."""
    lines = ["verdicts (the claims of Theorems 2–4; pass or fail only where the theorem applies):"]
    for d in verdicts:
        v = Verdict.from_dict(d)
        lines.append(f"  r{d['replica']}  {v.label:<34} {verdict_text(v)}")
    lines.append(f"  {Tally.of(d['status'] for d in verdicts).sentence}")
    return "\n".join(lines)


def _mean(values: Any) -> float:
    """The mean of the finite values, NaN where there are none (a metric not measured yet)."""
    finite = np.asarray(values, dtype=float)
    finite = finite[~np.isnan(finite)]
    return float(finite.mean()) if finite.size else float("nan")


def add_commands(sub: Any) -> None:
    """``theory``: Theorem 4's B_n(t) at the times given, with t'_0 and t_0."""
    t = sub.add_parser("theory", help="Theorem 4's B_n(t), t'_0 and t_0")
    t.add_argument("--M", type=int, required=True)
    t.add_argument("--K", type=int, default=1)
    t.add_argument("--eta-y", type=float, default=1.0)
    t.add_argument("--eta-z", type=float, default=1.0)
    t.add_argument("--C0", type=float, default=1.0)
    t.add_argument("--t", type=float, nargs="+", required=True)
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=cmd_theory)


def cmd_theory(args: argparse.Namespace) -> int:
    """Print B_n(t) (Theorem 4's exact solution) at each ``--t``, as text or JSON; exit code 0."""
    from scansnap.kinds.synthetic.science import theory

    for name in ("M", "K"):
        if getattr(args, name) < (2 if name == "M" else 1):
            raise BadInputError(f"--{name} must be ≥ {2 if name == 'M' else 1}")
    t = np.asarray(args.t, dtype=float)
    if (t < 0).any():
        raise BadInputError("--t values must be ≥ 0")
    kw = dict(M=args.M, K=args.K, eta_y=args.eta_y, eta_z=args.eta_z, C0=args.C0)
    out = {
        "M": args.M,
        "K": args.K,
        "eta_y": args.eta_y,
        "eta_z": args.eta_z,
        "C0": args.C0,
        "t": t.tolist(),
        "B_n": np.atleast_1d(theory.B_exact(t, **kw)).tolist(),
        "t0_prime": theory.t0_prime(args.M, args.K, args.eta_y),
        "t0": theory.t0(args.M, args.K, args.eta_y),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"t'_0 = {out['t0_prime']:.4f}   t_0 = {out['t0']:.4f}")
        for ti, bi in zip(out["t"], out["B_n"], strict=True):
            print(f"t = {ti:<12g} B_n = {bi:.6f}")
    return 0
