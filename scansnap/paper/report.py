"""The one HTML report renderer, for a single run and for a reproduction, plus the reproduction's
``verdicts.json`` and Parquet data.

A report is self-contained: plotly.js is embedded once (with the first figure), so it opens offline
and loads no script from the network.  It holds a headline, the verdict table (claim, statistic,
value, threshold, PASS / FAIL / N/A with the reason), sections of figures with their notes and exact
configs, and the environment (library versions, device).
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from scansnap.paper.environment import environment
from scansnap.paper.items.catalog import quick_differences
from scansnap.paper.items.result import ItemResult
from scansnap.paper.verdicts import WORDS, Verdict, tally

SCHEMA_VERSION = 2  # 2: verdicts carry status ("pass" / "fail" / "n/a"), reason, conditions, id
CSS = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;font-size:16px}
table{border-collapse:collapse;font-size:14px}td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top}
th{background:#f3f3f3}.PASS{color:#17691d;font-weight:bold}.FAIL{color:#b00020;font-weight:bold}
.NA{color:#555;font-weight:bold}pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px;max-height:400px}
.note{color:#555}"""


@dataclass
class Section:
    """One part of a report: a heading, figures (caption, plotly figure or its dict), verdicts, notes,
    the exact configs behind it (shown as JSON) and a status line under the heading."""

    title: str
    figures: list[tuple[str, Any]] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    configs: dict[str, Any] | None = None
    status: str = ""
    anchor: str = ""


def fmt_value(v: float) -> str:
    if not math.isfinite(v):
        return str(v)
    return f"{v:.4g}" if v == 0 or 1e-3 <= abs(v) < 1e5 else f"{v:.3e}"


def verdict_word(v: Verdict) -> str:
    return WORDS[v.status]


def verdict_rows(verdicts: Sequence[Verdict]) -> str:
    """The verdict table; an n/a row shows its reason (and failed conditions) instead of a value."""
    rows = []
    for v in verdicts:
        word = verdict_word(v)
        value = fmt_value(v.value) if v.status != "n/a" else "—"
        note = v.detail if v.status != "n/a" else "; ".join([v.reason, *v.conditions])
        cells = "".join(f"<td>{html.escape(c)}</td>" for c in (v.item, v.claim, v.statistic, value, v.threshold))
        css = word.replace("/", "")
        rows.append(f"<tr>{cells}<td class='{css}'>{word}</td><td class='note'>{html.escape(note)}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("item", "claim", "statistic", "value", "threshold", "verdict", "detail"))
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _figure_html(fig: Any, first: bool) -> str:
    figure = fig if isinstance(fig, go.Figure) else go.Figure(fig)
    return figure.to_html(full_html=False, include_plotlyjs=first, config={"displaylogo": False})


def section_html(s: Section, first: bool) -> tuple[str, bool]:
    """One section's HTML; ``first``: plotly.js is still to be embedded (with this section's first figure)."""
    anchor = f" id='{html.escape(s.anchor)}'" if s.anchor else ""
    parts = [f"<h2{anchor}>{html.escape(s.title)}</h2>"]
    if s.status:
        parts.append(f"<p class='note'>{html.escape(s.status)}</p>")
    for caption, fig in s.figures:
        parts.append(f"<h3>{html.escape(caption)}</h3>")
        parts.append(_figure_html(fig, first))
        first = False
    if s.verdicts:
        parts.append(verdict_rows(s.verdicts))
    parts += [f"<p class='note'>{html.escape(n)}</p>" for n in s.notes]
    if s.configs is not None:
        cfg = html.escape(json.dumps(s.configs, indent=2, ensure_ascii=False))
        parts.append(f"<details><summary>exact configs (JSON)</summary><pre>{cfg}</pre></details>")
    return "\n".join(parts), first


def render_html(
    title: str, headline: str, verdicts: Sequence[Verdict], sections: Sequence[Section], env: dict[str, Any]
) -> str:
    """The whole report as one HTML page (title, headline, all verdicts, sections, environment)."""
    body = [f"<h1>{html.escape(title)}</h1>", f"<p>{html.escape(headline)}</p>"]
    if verdicts:
        body += ["<h2>Verdicts</h2>", verdict_rows(verdicts)]
    first = True
    for s in sections:
        part, first = section_html(s, first)
        body.append(part)
    env_json = html.escape(json.dumps({"versions": env["versions"], "device": env["device"]}, indent=2))
    body.append(f"<h2>Environment</h2><pre>{env_json}</pre>")
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>"
    )


# ----------------------------------------------------------------- reproductions
def text_table(results: Sequence[ItemResult], width: int = 70) -> str:
    """One screen: per item, one line per verdict (PASS/FAIL/N/A, claim, value, threshold)."""
    lines = []
    for r in results:
        lines.append(f"{r.name} ({r.wall_s:.1f} s)")
        for v in r.verdicts:
            claim = v.claim if len(v.claim) <= width else v.claim[: width - 1] + "…"
            lines.append(f"  {verdict_word(v):<4}  {claim:<{width}} {fmt_value(v.value):>10}  {v.threshold}")
    return "\n".join(lines)


def summary(results: Sequence[ItemResult], quick: bool, env: dict[str, Any]) -> dict[str, Any]:
    """The ``verdicts.json`` document (n/a verdicts do not fail a reproduction)."""
    verdicts = [v for r in results for v in r.verdicts]
    counts = tally(verdicts)
    return {
        "schema": SCHEMA_VERSION,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "quick_differences": list(quick_differences()) if quick else [],
        "all_passed": all(v.status != "fail" for v in verdicts),
        "n_verdicts": counts.total,
        "n_passed": counts.passed,
        "n_failed": counts.failed,
        "n_na": counts.na,
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


def reproduction_html(results: Sequence[ItemResult], doc: dict[str, Any]) -> str:
    status = tally(v for r in results for v in r.verdicts).sentence
    mode = "--quick (" + "; ".join(quick_differences()) + ")" if doc["quick"] else "full"
    headline = f"{status} · mode: {mode} · the items took {doc['wall_s']:.1f} s · {doc['created']}"
    sections = [Section(r.title, r.figures, r.verdicts, r.notes, r.configs, _item_status(r), r.name) for r in results]
    title = "Scan and Snap (Tian et al., NeurIPS 2023): reproduction report"
    return render_html(title, headline, [v for r in results for v in r.verdicts], sections, doc)


def _item_status(r: ItemResult) -> str:
    return f"{'PASS' if r.passed else 'FAIL'} · {r.wall_s:.1f} s"


def write_report(results: Sequence[ItemResult], out: str | Path, quick: bool, device: str) -> dict[str, Any]:
    """Write DIR/report.html, DIR/verdicts.json and DIR/data/<item>_<name>.parquet; returns the summary."""
    out = Path(out)
    (out / "data").mkdir(parents=True, exist_ok=True)
    for stale in (out / "data").glob("*.parquet"):  # a previous report's data must not mix in
        stale.unlink()
    doc = summary(results, quick, environment(device))
    files = []
    for r in results:
        for name, frame in r.data.items():
            path = out / "data" / f"{r.name}_{name}.parquet"
            frame.to_parquet(path, index=False)
            files.append(str(path.relative_to(out)))
    doc["data_files"] = files
    (out / "verdicts.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    (out / "report.html").write_text(reproduction_html(results, doc), encoding="utf-8")
    return doc
