"""Bytes the Lab's live area sends per tick (issue 3: ≤ 200 KB a tick at default settings).

For each preset: train it headless to the end into a fresh data directory, then build the live
tick exactly as the Lab does (``scansnap.kinds.synthetic.ui.live._figures`` → ``live_payload`` JSON, six charts) at the
last stored step, replica 0, next token 0, and report the bytes per chart and in total.

    PYTHONPATH=. .venv/bin/python -m bench.tick_payload [--presets lecture syn-medium-10 ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ("syn-small", "lecture", "theorem4", "syn-medium-10")


def last_run(data_dir: Path) -> tuple[str, str, Any, dict[str, Any]]:
    """The newest run of ``data_dir``: its id, config JSON, whole stored history and statics."""
    from scansnap.paper.history import RunHistory
    from scansnap.service.store import RunStore

    with RunStore(data_dir) as store:
        rid = store.list_runs(1)[0]["id"]
        info = store.get_run(rid)
        assert info is not None
        hist = RunHistory(rid)
        hist.update(store)
        return rid, info["config_json"], hist, store.statics(rid)


def tick_bytes(data_dir: Path) -> dict[str, int]:
    """Bytes per chart of the Lab's tick (``scansnap.kinds.synthetic.ui.live._tick``: sent to each watcher)."""
    from scansnap.kinds.synthetic.ui import live as lab_live
    from scansnap.ui.chart_style import FONT

    rid, cfg_json, hist, statics = last_run(data_dir)
    tick = lab_live._tick(hist, statics, cfg_json, rid, (0, 0, 0, None, FONT))
    return {key: nbytes for key, _, nbytes in tick.charts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--presets", nargs="*", default=list(DEFAULT))
    args = ap.parse_args()
    logging.getLogger("streamlit").setLevel(logging.ERROR)  # "no runtime" warnings of st.cache_data
    res = []
    with tempfile.TemporaryDirectory(prefix="tick-payload-") as tmp:
        for name in args.presets:
            d = Path(tmp) / name
            subprocess.run(
                [sys.executable, "-m", "scansnap", "--data-dir", str(d), "run", "--preset", name, "--quiet"],
                cwd=ROOT,
                check=True,
                timeout=600,
            )
            per_chart = tick_bytes(d)
            total_kb = round(sum(per_chart.values()) / 1024, 1)
            res.append({"preset": name, "bytes_per_chart": per_chart, "total_kb": total_kb})
    print(json.dumps({"ticks": res, "max_total_kb": max(r["total_kb"] for r in res), "target_kb": 200}, indent=1))


if __name__ == "__main__":
    main()
