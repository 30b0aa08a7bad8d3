"""One reproduction, run inside its worker process (torch): items in order, the report written into
``.tmp-<id>/`` and renamed into place at the end (:mod:`scansnap.service.reproductions`)."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from scansnap.core.device import describe_device, resolve_device
from scansnap.paper.items.result import ItemResult
from scansnap.paper.items.runner import run_item
from scansnap.paper.report import write_report
from scansnap.service.control import RunControl
from scansnap.service.reproductions import SUBDIR, check_id
from scansnap.service.run_kinds import item_loader

log = logging.getLogger(__name__)


class StopRequestedError(Exception):
    """Raised inside the worker when a stop was requested."""


def run_and_store(
    data_dir: str,
    rid: str,
    names: list[str],
    quick: bool,
    control: RunControl,
    on_item: Callable[[str | None, int], None],
) -> tuple[str, str | None]:
    """Run the items and store the reproduction; returns (state, error) with state finished,
    stopped or failed.  Nothing is left behind unless it finished."""
    root = Path(data_dir) / SUBDIR
    tmp = root / f".tmp-{check_id(rid)}"
    current = "starting"
    try:
        results = []
        for done, name in enumerate(names):
            if control.stop_event.is_set():
                raise StopRequestedError
            current = name
            on_item(name, done)
            results.append(run_item(name, quick, progress=_progress(control), corpus_loader=item_loader(name)))
        current = "writing the report"
        on_item(None, len(names))
        write(results, tmp, quick)
        if control.stop_event.is_set():
            raise StopRequestedError
        tmp.rename(root / rid)
        return "finished", None
    except StopRequestedError:
        return "stopped", None
    except Exception as e:
        log.exception("reproduction %s failed", rid)
        return "failed", f"{current}: {type(e).__name__}: {e}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _progress(control: RunControl) -> Callable[[int], None]:
    def progress(n: int) -> None:
        control.report_step(control.step + n)
        if control.stop_event.is_set():
            raise StopRequestedError

    return progress


def write(results: list[ItemResult], out: Path, quick: bool) -> None:
    """The report (write_report), configs.json and every figure as plotly JSON."""
    shutil.rmtree(out, ignore_errors=True)
    write_report(results, out, quick, describe_device(resolve_device("auto")))
    configs = {r.name: r.configs for r in results}
    (out / "configs.json").write_text(json.dumps(configs, indent=2, ensure_ascii=False), encoding="utf-8")
    figdir = out / "figures"
    figdir.mkdir()
    index = []
    for r in results:
        for k, (caption, fig) in enumerate(r.figures):
            (figdir / f"{r.name}_{k}.json").write_text(fig.to_json(), encoding="utf-8")
            index.append({"item": r.name, "k": k, "caption": caption})
    (figdir / "index.json").write_text(json.dumps(index, indent=1, ensure_ascii=False), encoding="utf-8")
