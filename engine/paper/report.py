"""The reproduce report: one self-contained HTML file, ``verdicts.json`` and the data as Parquet.

The HTML embeds plotly.js once (``include_plotlyjs=True`` on the first figure, so it opens
offline: no script is loaded from the network) and holds every figure, the verdict table
(item, claim, statistic, value, threshold, PASS/FAIL), each item's exact configs (JSON), the
library versions and the device.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from engine.core.device import describe_device, library_versions, resolve_device
from engine.paper.items import QUICK_DIFFERENCES, ItemResult
from engine.paper.verdicts import Verdict

SCHEMA_VERSION = 1
VERDICT_KEYS = ("item", "claim", "statistic", "value", "threshold", "passed", "detail")
CSS = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}
th{background:#f3f3f3}.PASS{color:#17691d;font-weight:bold}.FAIL{color:#b00020;font-weight:bold}
pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px;max-height:400px}.note{color:#555}"""


def environment() -> dict[str, Any]:
    """Library versions and the device the runs used."""
    versions = library_versions()
    for pkg in ("pandas", "scipy", "plotly", "pyarrow", "pydantic"):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = "not installed"
    return {"versions": versions, "device": describe_device(resolve_device("auto"))}


def fmt_value(v: float) -> str:
    if not math.isfinite(v):
        return str(v)
    return f"{v:.4g}" if v == 0 or 1e-3 <= abs(v) < 1e5 else f"{v:.3e}"


def text_table(results: Sequence[ItemResult], width: int = 70) -> str:
    """One screen: per item, one line per verdict (PASS/FAIL, claim, value, threshold)."""
    lines = []
    for r in results:
        lines.append(f"{r.name} ({r.wall_s:.1f} s)")
        for v in r.verdicts:
            claim = v.claim if len(v.claim) <= width else v.claim[: width - 1] + "…"
            word = "PASS" if v.passed else "FAIL"
            lines.append(f"  {word}  {claim:<{width}} {fmt_value(v.value):>10}  {v.threshold}")
    return "\n".join(lines)


def summary(results: Sequence[ItemResult], quick: bool, env: dict[str, Any]) -> dict[str, Any]:
    """The ``verdicts.json`` document."""
    verdicts = [v for r in results for v in r.verdicts]
    return {
        "schema": SCHEMA_VERSION,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "quick_differences": list(QUICK_DIFFERENCES) if quick else [],
        "all_passed": all(v.passed for v in verdicts),
        "n_verdicts": len(verdicts),
        "n_failed": sum(not v.passed for v in verdicts),
        "wall_s": round(sum(r.wall_s for r in results), 3),
        "items": [
            {
                "name": r.name,
                "title": r.title,
                "passed": r.passed,
                "wall_s": round(r.wall_s, 3),
                "notes": r.notes,
                "data": sorted(r.data),
            }
            for r in results
        ],
        "verdicts": [v.to_dict() for v in verdicts],
        **env,
    }


def verdict_rows(verdicts: Sequence[Verdict]) -> str:
    rows = []
    for v in verdicts:
        word = "PASS" if v.passed else "FAIL"
        cells = [v.item, v.claim, v.statistic, fmt_value(v.value), v.threshold]
        tds = "".join(f"<td>{html.escape(c)}</td>" for c in cells)
        rows.append(f"<tr>{tds}<td class='{word}'>{word}</td><td class='note'>{html.escape(v.detail)}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("item", "claim", "statistic", "value", "threshold", "verdict", "detail"))
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def item_section(r: ItemResult, first: bool) -> tuple[str, bool]:
    """One item's HTML: figures (plotly.js inlined with the very first figure), notes, configs."""
    parts = [
        f"<h2 id='{r.name}'>{html.escape(r.title)}</h2>",
        f"<p class='note'>{'PASS' if r.passed else 'FAIL'} · {r.wall_s:.1f} s</p>",
    ]
    for caption, fig in r.figures:
        parts.append(f"<h3>{html.escape(caption)}</h3>")
        parts.append(fig.to_html(full_html=False, include_plotlyjs=first, config={"displaylogo": False}))
        first = False
    parts.append(verdict_rows(r.verdicts))
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in r.notes]
    cfg = json.dumps(r.configs, indent=2, ensure_ascii=False)
    parts.append(f"<details><summary>exact configs (JSON)</summary><pre>{html.escape(cfg)}</pre></details>")
    return "\n".join(parts), first


def render_html(results: Sequence[ItemResult], doc: dict[str, Any]) -> str:
    verdicts = [v for r in results for v in r.verdicts]
    status = "all verdicts pass" if doc["all_passed"] else f"{doc['n_failed']} of {doc['n_verdicts']} verdicts FAIL"
    mode = "--quick (" + "; ".join(QUICK_DIFFERENCES) + ")" if doc["quick"] else "full"
    body = [
        "<h1>Scan and Snap (Tian et al., NeurIPS 2023): reproduction report</h1>",
        f"<p>{html.escape(status)} · mode: {html.escape(mode)} · {doc['wall_s']:.1f} s · {doc['created']}</p>",
        "<h2>Verdicts</h2>",
        verdict_rows(verdicts),
    ]
    first = True
    for r in results:
        section, first = item_section(r, first)
        body.append(section)
    env = json.dumps({"versions": doc["versions"], "device": doc["device"]}, indent=2)
    body.append(f"<h2>Environment</h2><pre>{html.escape(env)}</pre>")
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Scan and Snap reproduction</title>"
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>"
    )


def report_html(results: Sequence[ItemResult], quick: bool) -> str:
    """The report as one HTML string (for a download button: nothing is written to disk)."""
    return render_html(results, summary(results, quick, environment()))


def write_report(results: Sequence[ItemResult], out: str | Path, quick: bool) -> dict[str, Any]:
    """Write DIR/report.html, DIR/verdicts.json and DIR/data/<item>_<name>.parquet; returns the summary."""
    out = Path(out)
    (out / "data").mkdir(parents=True, exist_ok=True)
    for stale in (out / "data").glob("*.parquet"):  # a previous report's data must not mix in
        stale.unlink()
    doc = summary(results, quick, environment())
    files = []
    for r in results:
        for name, frame in r.data.items():
            path = out / "data" / f"{r.name}_{name}.parquet"
            frame.to_parquet(path, index=False)
            files.append(str(path.relative_to(out)))
    doc["data_files"] = files
    (out / "verdicts.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    (out / "report.html").write_text(render_html(results, doc), encoding="utf-8")
    return doc
