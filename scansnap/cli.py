"""``scansnap`` (or ``python -m scansnap``): lab, run, presets, theory, list, export, reproduce, sweep
(:mod:`scansnap.cli_sweep`).

``scansnap lab [STREAMLIT OPTIONS]`` starts the dashboard (``streamlit run scansnap/server.py`` with them,
e.g. ``--server.port 8502``), storing its runs in ``--data-dir`` ($SCANSNAP_DATA_DIR, or ./data).

Exit codes: 0 success; 2 bad input (one clear line on stderr, traceback only with
``--debug``; for ``reproduce``, an unknown item name lists the allowed ones); 3 the run
diverged; 4 ``reproduce`` finished but at least one verdict FAILED (the report is still
written); 1 anything else.

``python -m scansnap reproduce [--quick] [--only ITEM ...] --out DIR`` re-runs the paper's
figures and theorems fresh (items fig4, fig5, fig6, fig9, theorems, joma, and on real text fig7,
joma-real) and writes
DIR/report.html, DIR/verdicts.json and DIR/data/*.parquet.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from scansnap.core.errors import BadInputError

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_DIVERGED, EXIT_VERDICT_FAILED = 0, 1, 2, 3, 4


def parse_sets(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadInputError(f"--set expects key=value (e.g. optim.eta_y=10), got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _load_config(args: argparse.Namespace) -> Any:
    """The config ``--config FILE`` or ``--preset NAME`` names (of whichever kind), with the ``--set``s."""
    from scansnap.paper.presets import any_preset
    from scansnap.service.run_kinds import config_from_json

    if bool(args.config) == bool(args.preset):
        raise BadInputError("give exactly one of --config FILE or --preset NAME (see `python -m scansnap presets`)")
    if args.config:
        path = Path(args.config)
        if not path.is_file():
            raise BadInputError(f"config file {path} does not exist")
        cfg = config_from_json(path.read_text())
    else:
        cfg = any_preset(args.preset).config
    sets = parse_sets(args.set or [])
    return cfg.with_overrides(sets) if sets else cfg


def cmd_run(args: argparse.Namespace) -> int:
    """Train a config or preset in this process with a progress bar, store it, export it with ``--out`` and print
    its kind's summary; exit code 3 for a run that diverged."""
    from tqdm import tqdm

    from scansnap.service.control import ProgressControl
    from scansnap.service.runner import RunJob  # torch: only on this path
    from scansnap.service.store import RunStore

    cfg = _load_config(args)
    job = RunJob(cfg, RunStore(args.data_dir), name=args.name)
    bar = tqdm(total=cfg.optim.steps, unit="step", disable=args.quiet or not sys.stderr.isatty(), file=sys.stderr)
    seen: dict[str, Any] = {}  # the first snapshot and the last

    def on_snapshot(s: Any) -> None:
        seen.setdefault("first", s)
        seen["last"] = s

    t0 = time.perf_counter()
    status = job.run(ProgressControl(bar), on_snapshot=on_snapshot)
    wall = time.perf_counter() - t0
    bar.close()
    files = exported(job, args)
    if not args.quiet:
        print(summary(job, status, wall, seen.get("first"), seen.get("last")))
        print("".join(f"wrote {p}\n" for p in files), end="")
    return EXIT_DIVERGED if status == "diverged" else EXIT_OK


def exported(job: Any, args: argparse.Namespace) -> list[Path]:
    """The files ``--out`` asks for (none without it)."""
    if not args.out:
        return []
    from scansnap.service.export import export_run  # pandas and pyarrow: imported where a run is exported

    return export_run(job.store, job.run_id, args.out, args.format)


def summary(job: Any, status: str, wall: float, first: Any, last: Any) -> str:
    """The run's id, name and status, then what its kind says of it (its RunKind's ``summary``)."""
    from scansnap.service.run_kinds import kind_of, resolve

    cfg, kind = job.cfg, kind_of(job.cfg)
    head = f"run {job.run_id}  {cfg.name or ''}  status={status}" + (f"  ({job.message})" if job.message else "")
    said = resolve(kind.summary)(job, wall, first, last) if kind.summary else [f"steps {job.step}  wall {wall:.2f}s"]
    return "\n".join([head, *said])


def cmd_presets(args: argparse.Namespace) -> int:
    """Each kind's presets, shelf by shelf: name, title and description."""
    from scansnap.paper.presets import SHELVES, load_presets

    for number, kind in enumerate(SHELVES):
        print(("\n" if number else "") + f"# {kind} runs (python -m scansnap run --preset NAME --out DIR):")
        for p in load_presets(kind).values():
            print(f"{p.name:<26}{p.title}\n{'':<26}{p.description}")
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from scansnap.service.store import RunStore

    runs = RunStore(args.data_dir).list_runs()
    if not runs:
        print("no runs stored yet")
    for r in runs:
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"]))
        print(
            f"{r['id']}  {stamp}  {r['status']:<11} step {r['last_step'] if r['last_step'] is not None else '-':<8} "
            f"{r['name']}"
        )
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from scansnap.service.export import export_run
    from scansnap.service.store import RunStore

    store = RunStore(args.data_dir)
    if store.get_run(args.run_id) is None:
        raise BadInputError(f"no stored run {args.run_id!r} (see `python -m scansnap list`)")
    for p in export_run(store, args.run_id, args.out, args.format):
        print(f"wrote {p}")
    return EXIT_OK


def cmd_reproduce(args: argparse.Namespace) -> int:
    from scansnap.core.device import describe_device, resolve_device
    from scansnap.paper.items.catalog import check_items
    from scansnap.paper.items.costs import about, estimated_seconds
    from scansnap.paper.report import text_table, write_report
    from scansnap.paper.verdicts import tally

    try:
        names = check_items(args.only)
    except ValueError as e:
        raise BadInputError(str(e)) from None
    if args.seeds is not None and args.seeds < 1:
        raise BadInputError(f"--seeds {args.seeds}: the real-text items train seeds 1..N, N at least 1")
    t0 = time.perf_counter()
    if args.cluster:
        results = reproduce_on_cluster(args.cluster, names, args.quick, args.seeds)
    else:
        workers = local_slots(names)
        said = about(estimated_seconds(names, args.quick, workers))
        mode, procs = "quick" if args.quick else "full", f"process{'es' if workers > 1 else ''}"
        print(f"reproducing {len(names)} items, {mode} mode: {said} on {workers} {procs}", file=sys.stderr)
        results = reproduce_here(names, args.quick, args.seeds)
    doc = write_report(results, args.out, args.quick, describe_device(resolve_device("auto")))
    print(text_table(results))
    counts = tally(v for r in results for v in r.verdicts)
    na = " (n/a: not judged, see their reasons)" if counts.na else ""
    print(
        f"{counts.sentence}{na}  ({'quick' if args.quick else 'full'}, {time.perf_counter() - t0:.1f} s)  "
        f"→ {Path(args.out) / 'report.html'}"
    )
    return EXIT_OK if doc["all_passed"] else EXIT_VERDICT_FAILED


def local_slots(names: list[str]) -> int:
    """How many processes ``reproduce`` trains its items in here: one per CPU it may use, at most one per item."""
    return min(len(names), len(os.sched_getaffinity(0)))


def run_reproduce_item(name: str, quick: bool, seeds: int | None = None) -> Any:
    """Reproduce item ``name`` here, its data read as its kind reads it (picklable: a pool's task)."""
    from scansnap.paper.items.runner import run_item
    from scansnap.service.run_kinds import item_loader

    return run_item(name, quick=quick, corpus_loader=item_loader(name), seeds=seeds)


def reproduce_here(names: list[str], quick: bool, seeds: int | None) -> list[Any]:
    """Every item a task of this machine's worker pool (a process per core; each item on one torch thread,
    as one after the other and on the cluster): the same numbers, in a fraction of the time.  The pool
    takes the items longest first; the results come back in the order of ``names``."""
    from functools import partial

    from tqdm import tqdm

    from scansnap.paper.items.costs import in_order_of, longest_first
    from scansnap.service.executors import LocalExecutor

    item = partial(run_reproduce_item, quick=quick, seeds=seeds)
    slots = local_slots(names)
    if slots == 1:  # one item, or one core: nothing runs beside it, no pool to start
        return [item(name) for name in names]
    pool = LocalExecutor(slots)
    try:
        order = longest_first(names, quick)
        done = pool.map(item, order)
        bar = tqdm(done, total=len(names), unit="item", disable=not sys.stderr.isatty(), file=sys.stderr)
        return in_order_of(names, order, list(bar))
    finally:
        pool.close()


def reproduce_on_cluster(address: str, names: list[str], quick: bool, seeds: int | None) -> list[Any]:
    """Every item a task on the Ray cluster at ``address`` (Fig. 6's panels too)."""
    from scansnap.service.cluster import connect, reproduce_items

    try:
        connect(address)
    except ValueError as e:
        raise BadInputError(str(e)) from None
    print(f"reproducing {len(names)} items on the cluster at {address}", file=sys.stderr)
    return reproduce_items(names, quick, seeds)


def cmd_sweep(args: argparse.Namespace) -> int:
    from scansnap.cli_sweep import run_sweep

    return run_sweep(args, parse_sets(args.set or []))


def add_reproduce_parser(sub: Any) -> None:
    """``reproduce``: the paper's figures and theorems, with their verdicts and a report."""
    rp = sub.add_parser("reproduce", help="re-run the paper's figures and theorems with verdicts and a report")
    rp.add_argument("--quick", action="store_true", help="CI mode: Fig. 6 with 3 seeds, no 10^4-step snap runs")
    rp.add_argument("--only", nargs="+", metavar="ITEM", help="items: fig4 fig5 fig6 fig9 theorems joma fig7 joma-real")
    rp.add_argument("--out", required=True, help="output directory (report.html, verdicts.json, data/)")
    rp.add_argument(
        "--seeds",
        type=int,
        default=None,
        metavar="N",
        help="real-text items train seeds 1..N (default: the authors' 1-3; 1 with --quick)",
    )
    rp.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="run every item (and Fig. 6's panels) as a task on this Ray cluster",
    )
    rp.set_defaults(func=cmd_reproduce)


SERVER = Path(__file__).with_name("server.py")  # the dashboard's Streamlit script


def cmd_lab(args: argparse.Namespace) -> int:
    """Replace this process with the dashboard's server: ``streamlit run`` of :data:`SERVER` with the
    options given after ``lab`` (Streamlit's own: ``streamlit run --help``)."""
    if args.data_dir:
        os.environ["SCANSNAP_DATA_DIR"] = args.data_dir
    command = [sys.executable, "-m", "streamlit", "run", str(SERVER), *args.streamlit_options]
    os.execv(sys.executable, command)
    return EXIT_ERROR  # not reached: execv returns only by raising


def build_parser() -> argparse.ArgumentParser:
    from scansnap.cli_sweep import add_parser as add_sweep_parser

    ap = argparse.ArgumentParser(prog="scansnap", description="Scan & Snap lab: the dashboard and its engine")
    ap.add_argument("--debug", action="store_true", help="show tracebacks")
    ap.add_argument("--data-dir", default=None, help="run store directory (default $SCANSNAP_DATA_DIR or ./data)")
    sub = ap.add_subparsers(dest="command", required=True)
    lab = sub.add_parser(
        "lab",
        help="start the dashboard; options after it go to `streamlit run` (e.g. --server.port 8502)",
        description="Start the dashboard. Options after `lab` go to `streamlit run` (e.g. --server.port 8502).",
    )
    lab.set_defaults(func=cmd_lab, streamlit_options=[])
    r = sub.add_parser("run", help="train a config or a preset of any kind (`scansnap presets`) and store it")
    r.add_argument("--config", help="config JSON file")
    r.add_argument("--preset", help="preset name")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override, e.g. optim.eta_y=10")
    r.add_argument("--out", help="also export config.json, trajectory and scalars here (text: scalars, attn_maps.npz)")
    r.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    r.add_argument("--name")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=cmd_run)
    sub.add_parser("presets", help="list presets").set_defaults(func=cmd_presets)
    sub.add_parser("list", help="list stored runs").set_defaults(func=cmd_list)
    e = sub.add_parser("export", help="export a stored run")
    e.add_argument("run_id")
    e.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    e.add_argument("--out", required=True)
    e.set_defaults(func=cmd_export)
    add_reproduce_parser(sub)
    add_sweep_parser(sub).set_defaults(func=cmd_sweep)
    add_kind_commands(sub)
    return ap


def add_kind_commands(sub: Any) -> None:
    """Each kind's own subcommands (its RunKind's ``commands``: the synthetic kind's ``theory``)."""
    from scansnap.service.run_kinds import KINDS, register_packages, resolve

    register_packages()
    for kind in KINDS.values():
        if kind.commands:
            resolve(kind.commands)(sub)


def main(argv: list[str] | None = None) -> int:
    from scansnap.core.config import ConfigError

    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if rest and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.streamlit_options = rest if args.command == "lab" else []
    try:
        return int(args.func(args))
    except (BadInputError, ConfigError, ValueError) as e:
        if args.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:
        if args.debug:
            raise
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_ERROR
