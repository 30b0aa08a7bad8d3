"""Markdown tables of the recorded benchmark results (``bench/results/*.json``) for BENCHMARKS.md.

    .venv/bin/python -m bench.summary            # prints the tables; paste them into BENCHMARKS.md

It prints one ``## <section>`` per benchmark, titled as BENCHMARKS.md's sections, each with its table.

Every figure is copied from a result file written by ``bench.run_all``; nothing is typed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def load(name: str) -> dict[str, Any] | None:
    p = RESULTS / f"{name}.json"
    return json.loads(p.read_text()) if p.exists() else None


def table(head: list[str], rows: list[list[Any]]) -> str:
    fmt = [" | ".join(head), " | ".join("---" for _ in head)] + [" | ".join(map(str, r)) for r in rows]
    return "\n".join(f"| {line} |" for line in fmt)


def stamp(res: dict[str, Any]) -> str:
    return f"_`{res['command']}`, {res['date']}, {res['wall_s']} s, {res['cores']} cores_"


def _met(ok: bool) -> str:
    return "✅" if ok else "❌"


def targets() -> list[str]:
    """One row per target: the figure measured and whether it is met."""
    names = (
        "engine",
        "engine_1thread",
        "step",
        "sweep",
        "reproduce",
        "ui_throughput",
        "ui_throughput_pinned",
        "ui_latency",
        "ui_latency_pinned",
        "load",
        "tick_payload",
        "first_paint",
    )
    got = {n: load(n) for n in names}
    missing = [n for n, v in got.items() if not v]
    if missing:
        return [f"(missing results: {', '.join(missing)})", ""]
    e, e1, st, sw, rp, ut, utp, ul, ulp, ld, tp, fp = (got[n]["result"] for n in names)  # type: ignore[index]
    vs, vs1 = ({v["config"]: v["speedup"] for v in x["vs_reference"]} for x in (e, e1))
    rep = {v["config"]: v["ratio"] for v in e["replicas"]}
    lv = {v["layout"]: v for v in e["large_vocab"]}
    runs = {v["mode"]: v for v in rp["runs"]}
    quick, full = runs["quick"], runs["full"]
    page, frag = ul["full_rerun_toggle_lock"]["median_ms"], ul["fragment_rerun_switch_n"]["median_ms"]
    rows = [
        [
            "steps/s vs naive reference, syn-small ≥ 3×",
            f"{vs['syn-small']:.1f}× (2 threads), {vs1['syn-small']:.1f}× (1 thread)",
            f"{_met(vs['syn-small'] >= 3)} / {_met(vs1['syn-small'] >= 3)}",
        ],
        [
            "steps/s vs naive reference, syn-medium-10 ≥ 10×",
            f"{vs['syn-medium-10']:.1f}× (2 threads), {vs1['syn-medium-10']:.1f}× (1 thread)",
            f"{_met(vs['syn-medium-10'] >= 10)} / {_met(vs1['syn-medium-10'] >= 10)}",
        ],
        [
            "R = 160 vs R = 1 per step ≤ 8×",
            f"{rep['syn-medium-1']:.0f}× (syn-medium-1), {rep['syn-medium-10']:.0f}× (syn-medium-10)",
            _met(max(rep.values()) <= 8),
        ],
        [
            "M ≈ 10,000, K = 20, 10 queries, batch 128: ≤ 1 GB",
            f"compact layout {lv['compact']['peak_rss_mib']:.0f} MiB peak; paper layout "
            f"{lv['paper']['peak_rss_mib']:.0f} MiB",
            f"{_met(lv['compact']['peak_rss_mib'] <= 1024)} compact / "
            f"{_met(lv['paper']['peak_rss_mib'] <= 1024)} paper",
        ],
        [
            "full Fig. 6 sweep (640 runs) ≤ 2 min",
            f"{sw['ours_total_s']:.0f} s batched; {full['items_s']['fig6']:.0f} s inside `reproduce`",
            _met(max(sw["ours_total_s"], full["items_s"]["fig6"]) <= 120),
        ],
        [
            "Fig. 6 sweep vs one-at-a-time naive reference",
            f"{sw['speedup']:.1f}× ({sw['ours_total_s']:.0f} s vs {sw['reference_total_s_extrapolated']:.0f} s "
            "extrapolated)",
            "recorded",
        ],
        *batched_rows(st, sw),
        [
            "`reproduce --quick` ≤ 30 s",
            f"{quick['wall_s']} s, {quick['verdicts'] - quick['failed']}/{quick['verdicts']} verdicts pass; full: "
            f"{full['wall_s']} s, {full['verdicts'] - full['failed']}/{full['verdicts']}",
            _met(quick["wall_s"] <= 30 and not quick["failed"] and not full["failed"]),
        ],
        [
            "training with a browser watching ≥ 90 % of headless",
            f"training on its own core: {utp['ratio_incl_start']['median']:.2f} stored / {utp['ratio']['median']:.2f} "
            f"watched; browser on the same two cores: {ut['ratio_incl_start']['median']:.2f} / "
            f"{ut['ratio']['median']:.2f}",
            f"{_met(min(utp['ratio']['median'], utp['ratio_incl_start']['median']) >= 0.9)} own core / "
            f"{_met(min(ut['ratio']['median'], ut['ratio_incl_start']['median']) >= 0.9)} shared with the browser",
        ],
        [
            "time from `streamlit run` to the first chart (recorded)",
            f"{ut['first_chart_s']['median']} s median (unpinned), {utp['first_chart_s']['median']} s (pinned)",
            "recorded",
        ],
        [
            "interaction latency < 200 ms while training",
            f"medians: whole-page rerun {page} ms, fragment rerun {frag} ms; pinned "
            f"{ulp['full_rerun_toggle_lock']['median_ms']} / {ulp['fragment_rerun_switch_n']['median_ms']} ms",
            f"{_met(page < 200)} whole-page rerun / {_met(frag < 200)} fragment rerun",
        ],
        [
            "≤ 200 KB per live tick at default settings",
            "KB: " + ", ".join(f"{t['preset']} {t['total_kb']}" for t in tp["ticks"]),
            _met(tp["max_total_kb"] <= 200),
        ],
        _load_target(ld),
        _first_paint_target(fp),
    ]
    lp = load("lecture_pace")
    if lp:
        rows.append(_lecture_pace_target(lp["result"]))
    est = load("estimates")
    if est:
        ratio = est["result"]["max_ratio"]
        rows.append(
            [
                "the server's time, memory and disk estimates are never below the measurement, at the limits",
                f"measured / estimated ≤ {ratio:.2f} over {len(est['result']['cases'])} runs",
                _met(ratio <= 1.0),
            ]
        )
    return [
        table(["target", "measured", "met?"], rows),
        "\nWhere a target is missed, its benchmark's section says why.",
        "",
    ]


def _lecture_pace_target(lp: dict[str, Any]) -> list[str]:
    """The Lecture preset at its own speed: its stated time within 10 %, each phase of the story on screen
    for ≥ 20 % of the lesson; the other speeds measured beside it."""
    own = next(r for r in lp["speeds"] if r["speed"] == lp["default_speed"])
    least = own["every_phase_at_least"]
    shares = ", ".join(f"{k} {v * 100:.0f} %" for k, v in own["median_phase_share"].items())
    others = "; ".join(
        f"at a constant {r['speed']:g} steps/s: "
        + " / ".join(f"{v * 100:.0f}" for v in r["median_phase_share"].values())
        + " %"
        for r in lp["speeds"]
        if r is not own and isinstance(r["speed"], float | int)
    )
    on_time = own["stated_s"] and abs(own["median_wall_s"] - own["stated_s"]) <= 0.1 * own["stated_s"]
    return [
        f"the {lp['preset']} preset takes its stated time within 10 %; each phase of its story "
        f"≥ {least * 100:.0f} % of the wall time",
        f"{own['speed']} time: {own['median_wall_s']} s for {own['stated_s']:g} s stated; {shares}"
        + (f" ({others})" if others else ""),
        _met(bool(on_time) and own["target_met"]),
    ]


def lecture_pace() -> list[str]:
    res = load("lecture_pace")
    if not res:
        return []
    r = res["result"]
    rows = []
    for row in r["speeds"]:
        share = row["median_phase_share"]
        stated = f"{row['stated_s']:g}" if row["stated_s"] else "–"
        speed = f"{row['speed']:g} steps/s" if isinstance(row["speed"], float | int) else str(row["speed"])
        rows.append(
            [
                speed,
                stated,
                row["median_wall_s"],
                *(f"{share[k]:.0%}" for k in ("start", "scan", "snap")),
                _met(row["target_met"]),
            ]
        )
    return [
        stamp(res) + f" ({r['preset']}, medians of {len(r['speeds'][0]['runs'])} runs each; the story read every "
        f"{r['poll_s']:g} s as the Lab's caption reads it)\n",
        table(["speed", "stated (s)", "▶ Start → finished (s)", "start", "scan", "snap", "each ≥ 20 %"], rows),
        "",
    ]


def estimates() -> list[str]:
    """Each config at the limits, every slot busy: time, memory and disk, estimate against measured."""
    res = load("estimates")
    if not res:
        return []
    rows = [
        [
            c["case"],
            c["copies"],
            *(f"{c[k + '_estimate']:,} / {c[k + '_measured']:,}" for k in ("seconds", "peak_mb", "disk_mb")),
            max(v for k, v in c.items() if k.endswith("_ratio") and v is not None),
        ]
        for c in res["result"]["cases"]
    ]
    head = [
        "run (copies at once)",
        "copies",
        "slot s: est. / measured",
        "peak MB: est. / measured",
        "disk MB: est. / measured",
        "largest measured / est.",
    ]
    return [stamp(res) + "\n", table(head, rows), ""]


def _load_target(ld: dict[str, Any]) -> list[str]:
    """The load test's row: every round on one server; health, runs, watchers, peak and idle memory."""
    rounds = ld["rounds"]
    shape = " then ".join(f"{x['sessions']} sessions / {x['runs']} runs" for x in rounds)
    finished = sum(x.get("runs_finished", 0) for x in rounds)
    started = sum(x.get("runs_started", 0) for x in rounds)
    saw = sum(x.get("watchers_saw_finish", 0) for x in rounds)
    watchers = sum(x.get("watchers_checked", 0) for x in rounds)
    return [
        f"load: {shape} on one server, health < 1 s, bounded memory",
        f"health max {max(x['health_max_latency_s'] or 0 for x in rounds)} s; peak "
        f"{max(x['peak_tree_pss_mb'] or 0 for x in rounds)} MB (bound {ld['rss_bound_mb']:.0f}); idle "
        f"{ld['idle_before']['tree_pss_mb']} → {' / '.join(str(x['idle']['tree_pss_mb']) for x in rounds)} MB; "
        f"{finished}/{started} runs finished, {saw}/{watchers} watchers saw the finish",
        _met(ld["pass"] and ld.get("within_bounds", True)),
    ]


def batched_rows(st: dict[str, Any], sw: dict[str, Any]) -> list[list[str]]:
    """The targets of the batched replicas: cheaper per replica as R grows, the sweep and one panel fast."""
    p10 = next(p for p in st["panels"] if p["panel"] == "syn-medium-10")
    per, per_old, ratio = (
        p10["R160"]["new_ms_per_replica_step"],
        p10["R160"]["old_ms_per_replica_step"],
        p10["new_per_replica_R10_over_R160"],
    )
    return [
        [
            "syn-medium-10, R = 160: ≤ 0.2 ms per replica-step, ≥ 2× cheaper per replica than R = 10",
            f"{per:.3f} ms (step before: {per_old:.3f}); {ratio:.1f}× cheaper per replica",
            f"{_met(per <= 0.2)} / {_met(ratio >= 2)}",
        ],
        [
            "full Fig. 6 sweep trains in ≤ 10 s",
            f"{sw['new_train_total_s']:.1f} s (step before: {sw['old_train_total_s']:.1f} s); "
            f"{sw['ours_total_s']:.1f} s with the presets' snapshots",
            _met(sw["new_train_total_s"] <= 10),
        ],
        [
            "a Fig. 6 panel as one `python -m scansnap run` ≥ 20× the naive reference run after run",
            f"{sw['cli_panel_vs_reference']:.0f}× ({sw['cli_panel_s']:.2f} s vs {sw['reference_panel_s']:.0f} s)",
            _met(sw["cli_panel_vs_reference"] >= 20),
        ],
    ]


def step() -> list[str]:
    """One table: the step before the fused one against it, side by side in one run (torch's threads); the
    chunk sizes and the one-thread run (process CPU time) as a line each."""
    res = load("step")
    if not res:
        return []
    r = res["result"]
    head = ["config", "R", "before (ms/step)", "after (ms/step)", "speed-up", "after, ms per replica-step"]
    rows = [
        [v["config"], 1, f"{v['old_ms_per_step']:.2f}", f"{v['new_ms_per_step']:.2f}", f"{v['speedup']:.2f}×", ""]
        for v in r["single_runs"]
    ]
    rows += [
        [
            p["panel"],
            v["R"],
            f"{v['old_ms_per_step']:.2f}",
            f"{v['new_ms_per_step']:.2f}",
            f"**{v['speedup']:.1f}×**",
            f"{v['new_ms_per_replica_step']:.3f}",
        ]
        for p in r["panels"]
        for v in (p["R10"], p["R160"])
    ]
    ratios = ", ".join(f"{p['panel']} {p['new_per_replica_R10_over_R160']:.1f}×" for p in r["panels"])
    sizes = ("8", "16", "32", "64")
    chunks = "; ".join(
        f"{c['replicas']}: " + " / ".join(f"{c['ms_per_step'][k]:.1f}" for k in sizes) for c in r["chunk_sizes"]
    )
    out = [
        stamp(res) + f" ({r['device']}, torch threads {r['threads']}, {r.get('clock', 'wall')} clock, load average "
        "before/after "
        f"{r['load_before'][0]:.1f} / {r['load_after'][0]:.1f})\n",
        table(head, rows),
        f"\nPer replica, R = 160 is cheaper than R = 10 by: {ratios}. Replicas per chunk {' / '.join(sizes)} → "
        f"ms/step at R = 160: {chunks}.",
    ]
    one = load("step_1thread_cpu")
    if one:
        r1 = one["result"]
        speedups = ", ".join(f"{p['panel']} {p['R160']['speedup']:.1f}×" for p in r1["panels"])
        out.append("")
        out.append(
            f"With one thread (`{one['command']}`, {one['date']}, {r1.get('clock', 'wall')} clock) the speed-up "
            f"at R = 160 is {speedups}."
        )
    return [*out, ""]


def engine() -> list[str]:
    """One table: each measure with torch's default threads and with one, side by side as columns."""
    runs = [res for res in (load("engine"), load("engine_1thread")) if res]
    if not runs:
        return []
    rs = [res["result"] for res in runs]

    def cells(key: str, name_key: str, name: str, fmt) -> list[str]:
        return [fmt(next(v for v in r[key] if v[name_key] == name)) for r in rs]

    rows = []
    for v in rs[0]["vs_reference"]:
        rows.append(
            [
                f"{v['config']}, R = 1: steps/s, ours / reference",
                "≥ 3×" if v["config"] == "syn-small" else "≥ 10×",
                *cells(
                    "vs_reference",
                    "config",
                    v["config"],
                    lambda x: (
                        f"{x['engine_steps_per_s']:.0f} / {x['reference_steps_per_s']:.1f} = **{x['speedup']:.1f}×**"
                    ),
                ),
            ]
        )
    for v in rs[0]["replicas"]:
        rows.append(
            [
                f"{v['config']}: ms/step, R = {v['R']} / R = 1 (per-replica speed-up)",
                "≤ 8×",
                *cells(
                    "replicas",
                    "config",
                    v["config"],
                    lambda x: (
                        f"{x['ms_per_step_R']:.1f} / {x['ms_per_step_1']:.2f} = **{x['ratio']:.1f}×** "
                        f"({x['per_replica_speedup']:.1f}×)"
                    ),
                ),
            ]
        )
    for v in rs[0]["large_vocab"]:
        rows.append(
            [
                f"{v['layout']} layout, M = {v['M']}, K = {v['K']}: peak RSS MiB (the trainer), steps/s",
                "≤ 1024 MiB",
                *cells(
                    "large_vocab",
                    "layout",
                    v["layout"],
                    lambda x: f"**{x['peak_rss_mib']:.0f}** ({x['trainer_peak_mib']:.0f}), {x['steps_per_s']:.2f}",
                ),
            ]
        )
    head = ["measure", "target", *(f"torch threads: {r['threads']}" for r in rs)]
    return ["_" + "; ".join(stamp(res).strip("_") for res in runs) + "_\n", table(head, rows), ""]


def sweep() -> list[str]:
    res = load("sweep")
    if not res:
        return []
    r = res["result"]
    rows = [
        [
            p["panel"],
            p["runs"],
            f"{p['ours_s']:.1f}",
            f"{p['reference_per_run_s']:.2f}",
            f"{p['reference_extrapolated_s']:.0f}",
        ]
        for p in r["panels"]
    ]
    rows.append(
        [
            "**all**",
            r["total_runs"],
            f"**{r['ours_total_s']:.1f}**",
            "",
            f"**{r['reference_total_s_extrapolated']:.0f}**",
        ]
    )
    head = ["panel", "runs", "ours (s)", "reference per run (s)", "reference, 160 runs (s, extrapolated)"]
    if "new_train_total_s" in r:
        head += ["training, step before (s)", "training, step after (s)"]
        for row, p in zip(rows, r["panels"], strict=False):
            row += [f"{p['old_train_s']:.1f}", f"{p['new_train_s']:.1f}"]
        rows[-1] += [f"**{r['old_train_total_s']:.1f}**", f"**{r['new_train_total_s']:.1f}**"]
    ref = r["reference_panel_run_s"]
    cli = (
        f" One panel as one `python -m scansnap run --preset syn-medium-10` process: {r['cli_panel_s']:.2f} s "
        f"(median of {', '.join(f'{t:.2f}' for t in r['cli_panel_runs_s'])} s), **{r['cli_panel_vs_reference']:.1f}×** "
        f"faster than the reference's 160 runs one after another, all timed: {r['reference_panel_s']:.1f} s "
        f"(one run: min {ref['min']:.2f}, median {ref['median']:.2f}, max {ref['max']:.2f} s)."
    )
    return [
        stamp(res) + (f" ({r['device']})" if "device" in r else "") + "\n",
        table(head, rows),
        f"\nSpeed-up of the batched sweep over one-at-a-time naive runs: **{r['speedup']:.1f}×** "
        f"(torch threads {r['threads']}).{cli}\n",
    ]


def reproduce() -> list[str]:
    res = load("reproduce")
    if not res:
        return []
    rows = [
        [
            v["mode"],
            f"**{v['wall_s']}**",
            f"{v['items_s']['fig6']:.1f}",
            f"{v['items_s']['theorems']:.1f}",
            f"{v['verdicts'] - v['failed']}/{v['verdicts']}",
        ]
        for v in res["result"]["runs"]
    ]
    return [
        stamp(res) + "\n",
        table(["mode", "whole command (s)", "Fig. 6 (s)", "theorems (s)", "verdicts passing"], rows),
        "",
    ]


def reproduce_page() -> list[str]:
    """Seconds per item as the Reproduce page runs them: its estimate (scansnap/paper/items/costs.py)."""
    res = load("reproduce_page")
    if not res:
        return []
    r = res["result"]
    names = list(r["runs"][0]["items_s"])
    rows = [
        [
            v["mode"],
            f"**{v['wall_s']}**",
            *(v["items_s"].get(n, "–") for n in names),
            v["report_s"],
            f"{v['verdicts'] - v['failed']}/{v['verdicts']}",
        ]
        for v in r["runs"]
    ]
    return [
        stamp(res) + f" (load average before {r['load_before'][0]:.1f}, after {r['load_after'][0]:.1f})\n",
        table(["mode", "start → finished (s)", *names, "report and the rest", "verdicts passing"], rows),
        "",
    ]


def ui_throughput() -> list[str]:
    """One table: the browser on the same two cores and training on a core of its own (``--pin``) as columns,
    each cell the median (min–max) of the repeats."""
    runs = [res for res in (load("ui_throughput"), load("ui_throughput_pinned")) if res]
    if not runs:
        return []
    rs = [res["result"] for res in runs]
    measures = [
        ("headless, torch default threads (steps/s)", "headless_steps_per_s"),
        ("headless, 1 thread (steps/s)", "headless_1thread_steps_per_s"),
        ("headless on core 0 beside a busy core 1 (the control, steps/s)", "headless_beside_browser_steps_per_s"),
        ("server, browser watching: watched rate (steps/s)", "browser_watched_steps_per_s"),
        ("server, browser watching: stored rate, start included (steps/s)", "browser_steps_per_s"),
        ("fresh server: click on Start → first step on the page (s)", "start_delay_s"),
        ("**ratio watched / best headless**", "ratio"),
        ("ratio stored (start included) / best headless", "ratio_incl_start"),
        ("ratio watched / the control", "ratio_to_control"),
        ("`streamlit run` → first chart in the browser (s)", "first_chart_s"),
    ]

    def cell(r: dict[str, Any], key: str, bold: bool) -> str:
        if key not in r:
            return "–"
        v = r[key]
        med = f"**{v['median']}**" if bold else f"{v['median']}"
        return f"{med} ({v['min']}–{v['max']})"

    rows = [[name, *(cell(r, key, name.startswith("**")) for r in rs)] for name, key in measures]
    head = [
        "median (min–max)",
        *(
            "training on its own core (`--pin`)"
            if r.get("pinned") or "ratio_to_control" in r
            else "browser on the same two cores"
            for r in rs
        ),
    ]
    return ["_" + "; ".join(stamp(res).strip("_") for res in runs) + "_\n", table(head, rows), ""]


def ui_latency() -> list[str]:
    """One table: server and browser sharing both cores, and the server with its training worker on core 0
    and the browser on core 1 (``--pin``), side by side as columns."""
    runs = [res for res in (load("ui_latency"), load("ui_latency_pinned")) if res]
    if not runs:
        return []
    rs = [res["result"] for res in runs]
    names = [k for k, v in rs[0].items() if isinstance(v, dict) and "median_ms" in v]
    head = ["interaction"]
    for r in rs:
        where = "pinned: " if r.get("pinned") else ""
        head += [f"{where}median (ms)", f"{where}p90 (ms)", f"{where}max (ms)"]
    head.append("trials")
    rows = [
        [
            k,
            *(x for r in rs for x in (r[k]["median_ms"], r[k]["p90_ms"], r[k]["max_ms"])),
            " / ".join(str(r[k]["n"]) for r in rs),
        ]
        for k in names
    ]
    lost = " / ".join(str(len(r.get("lost_interactions", []))) for r in rs)
    return [
        "_"
        + "; ".join(stamp(res).strip("_") for res in runs)
        + "_"
        + f" (training at {rs[0]['speed']} steps/s; interactions retried: {lost})\n",
        table(head, rows),
        "",
    ]


def load_test() -> list[str]:
    res = load("load")
    if not res:
        return []
    r = res["result"]
    idle0 = r["idle_before"]
    rows = [["idle after start", "", "", "", "", "", idle0["rss_mb"], idle0["tree_pss_mb"], "", ""]]
    for x in r["rounds"]:
        failed = [k for k, ok in {**x["checks"], **x.get("bounds", {})}.items() if not ok]
        rows.append(
            [
                f"{x['round'] + 1}: {x['sessions']} sessions, {x['runs']} runs",
                x["health_max_latency_s"],
                f"{x.get('runs_finished')}/{x.get('runs_started')}",
                f"{x.get('pages_rendered')}/{x['sessions']}",
                x["peak_rss_mb"],
                f"**{x['peak_tree_pss_mb']}**",
                x["idle"]["rss_mb"],
                f"**{x['idle']['tree_pss_mb']}**",
                x["wall_s"],
                f"❌ {', '.join(failed)}" if failed else "✅",
            ]
        )
    head = [
        "round",
        "health max (s)",
        "runs finished",
        "pages rendered",
        "peak RSS, server (MiB)",
        "peak PSS, server + workers (MiB)",
        "idle RSS after (MiB)",
        "idle PSS after (MiB)",
        "wall (s)",
        "checks and bounds",
    ]
    load_avg = ", ".join(f"{v:.1f}" for v in r["loadavg_start"])
    return [
        stamp(res) + f" (one server for every round; load average at the start {load_avg}; idle = "
        f"{r['settle_s']:g} s after the round's clients closed and its runs ended; the idle server's bound "
        f"{r.get('idle_bound_mb', '–')} MiB: idle after start + full caches + kept sessions + slack)\n",
        table(head, rows),
        "",
    ]


def load_memory() -> list[str]:
    """Idle memory after each round, one server per variant (a change measured side by side)."""
    res = load("load_memory")
    if not res:
        return []
    variants = res["result"]["variants"]
    rounds = [x["round"] for x in variants[0]["rounds"]]
    rows = [
        [
            v["name"],
            f"{v['idle_before']['rss_mb']} / {v['idle_before']['tree_pss_mb']}",
            *(f"{x['idle_rss_mb']} / {x['idle_tree_pss_mb']}" for x in v["rounds"]),
            v["rounds"][-1].get("sqlite_connections", "–"),
        ]
        for v in variants
    ]
    head = ["server", "idle after start", *(f"idle after {i + 1}: {r}" for i, r in enumerate(rounds)), "SQLite conns"]
    return [
        stamp(res) + " (idle memory, MiB: RSS of the server process / PSS of its process tree; SQLite "
        "connections open in the server after the last round)\n",
        table(head, rows),
        "",
    ]


def tick_payload() -> list[str]:
    res = load("tick_payload")
    if not res:
        return []
    rows = [
        [
            t["preset"],
            *(t["bytes_per_chart"].get(k, "–") for k in ("cn", "cnh", "z", "H", "B", "loss")),
            f"**{t['total_kb']}**",
        ]
        for t in res["result"]["ticks"]
    ]
    return [
        stamp(res) + "\n",
        table(["preset", "c_n lines", "c_n heatmap", "z_m lines", "entropy", "B̂", "loss", "KB per tick"], rows),
        "",
    ]


def chart_draw() -> list[str]:
    res = load("chart_draw")
    if not res:
        return []
    r = res["result"]
    keys = ("cn", "cnh", "z", "H", "B", "loss")
    rows = [
        [name, *(v["per_chart_ms"][k] for k in keys), f"**{v['tick_ms']}**", r["ratio_to_lab"][name]]
        for name, v in r["variants"].items()
    ]
    traces = ", ".join(f"{k} {r['lab_traces'][k]}" for k in keys)
    return [
        stamp(res) + f" ({r['preset']}, its last {r['ticks']} ticks × {r['rounds']} rounds; traces as the Lab "
        f"sends them: {traces})\n",
        table(
            ["drawn as", "c_n lines", "c_n heatmap", "z_m lines", "entropy", "B̂", "loss", "ms per tick", "× lab"], rows
        ),
        "",
    ]


def chart_sight() -> list[str]:
    res = load("chart_sight")
    if not res:
        return []
    r = res["result"]
    keys = ("ticks", "charts_per_tick", "react_ms_per_tick", "renderer_cpu_per_s")
    rows = [[name, *(v[k] for k in keys)] for name, v in r["variants"].items()]
    ratio = r["ratio_to_all"]
    return [
        stamp(res) + f" ({r['preset']} in the Lab at {r['size']}, sidebar open, at its pace; medians of "
        f"{r['rounds']} windows of {r['seconds']} s per variant, in turns)\n",
        table(["charts redrawn", "ticks", "charts per tick", "Plotly.react ms per tick", "renderer CPU per s"], rows),
        "",
        f"Out of sight waiting / every chart: Plotly.react per tick × {ratio['react_ms_per_tick']}, "
        f"renderer CPU × {ratio['renderer_cpu_per_s']}.",
        "",
    ]


def first_paint() -> list[str]:
    res = load("first_paint")
    if not res:
        return []
    med = res["result"]["median"]
    rows = [
        [
            name,
            v["server_ready_s"],
            v["cold_controls_in_dom_s"],
            f"**{v['cold_controls_s']}**",
            v["cold_chart_s"],
            v["warm_controls_s"],
        ]
        for name, v in med.items()
    ]
    head = ["page / server", "server ready (s)", "controls in the page, cold (s)", "controls seen, cold (s)"]
    head += ["first chart, cold (s)", "controls seen, warm (s)"]
    return [
        stamp(res) + f" (medians of {res['result']['repeats']} cold servers per variant, variants interleaved)\n",
        table(head, rows),
        "",
    ]


def _first_paint_target(fp: dict[str, Any]) -> list[str]:
    """The first page's controls within 3 s of the server being ready, cold, with the prewarm."""
    lab, lecture = fp["median"]["lab / prewarm"], fp["median"]["lecture / prewarm"]
    return [
        "first page's controls ≤ 3 s after the server is ready, cold start",
        f"lecture page {lecture['cold_controls_s']} s, Lab {lab['cold_controls_s']} s; warm "
        f"{lecture['warm_controls_s']} / {lab['warm_controls_s']} s",
        f"{_met(lecture['cold_controls_s'] <= 3)} lecture / {_met(lab['cold_controls_s'] <= 3)} Lab",
    ]


def hall() -> list[str]:
    """One table: each scenario's figure beside its bound."""
    res = load("hall")
    if not res:
        return []
    r = res["result"]
    what = {
        "free": "a visitor presses ▶ Start on an idle server",
        "two_paused": "… after two visitors started 100,000-step runs, paused them and left",
        "two_throttled": "… after two visitors started 100,000-step runs at 1 step/s and left",
        "thirty_cookies": "thirty fresh cookies start a 3,000-step run each, then one more visitor",
        "huge_link": "the huge-vocabulary link",
    }

    def measured(name: str, bound: str) -> str:
        v = r.get(name, {})
        if "trained_after_s" in v:
            return f"trained after {v['trained_after_s']} s"
        if name == "thirty_cookies":
            return (
                f'thirty started in {v["thirty_starts_s"]} s; the next told "starts in about {v["stated_wait_s"]} s", '
                f"trained after {v['waited_s']} s (×{v['waited_over_stated']} of the stated wait)"
            )
        if name == "huge_link" and "health" in bound:
            return f"the slowest of ten health answers {v['health_max_s']} s"
        if name == "huge_link":
            return (
                f"refused with its limit {_met(v['refused_with_the_limit'])}; the server {v['idle_mb']} → "
                f"{v['peak_mb']} MiB (+{v['growth_mb']})"
            )
        return "–"

    rows = []
    for key, ok in r["bounds"].items():
        name, _, bound = key.partition(": ")
        rows.append([what.get(name, name), measured(name, bound), bound, _met(ok)])
    return [
        stamp(res) + " (a fresh server per scenario, two slots, warmed by one short run)\n",
        table(["scenario", "measured", "bound", "met"], rows),
        "",
    ]


def upload_checks() -> list[str]:
    res = load("upload_checks")
    if not res:
        return []
    r = res["result"]
    rows = [
        [c["case"], f"{c['bytes']:,}", c["slowest_s"], "accepted" if c["answer"] == "accepted" else "refused"]
        for c in r["cases"]
    ]
    return [
        stamp(res) + f" (the slowest of {r['repeats']} each; bound {r['bound_s']} s: {_met(r['within_bound'])})\n",
        table(["upload", "bytes", "slowest (s)", "answer"], rows),
        "",
    ]


def main() -> None:
    for title, part in (
        ("Targets", targets),
        ("Engine", engine),
        ("Training step", step),
        ("Fig. 6 sweep", sweep),
        ("Reproduce", reproduce),
        ("Reproduce page", reproduce_page),
        ("Lecture pace", lecture_pace),
        ("Estimates against measured", estimates),
        ("UI throughput", ui_throughput),
        ("UI latency", ui_latency),
        ("Live chart drawing", chart_draw),
        ("Live charts out of sight", chart_sight),
        ("Live tick payload", tick_payload),
        ("First paint", first_paint),
        ("Load", load_test),
        ("Load: memory after rounds", load_memory),
        ("The hall: a new visitor's start and the server's health", hall),
        ("Upload checks", upload_checks),
    ):
        print(f"## {title}\n")
        print("\n".join(part()))


if __name__ == "__main__":
    main()
