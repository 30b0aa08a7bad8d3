"""How long each phase of the story is on screen when the Lecture preset plays at its default speed (issue
50: at 20 steps/s the scan was on screen for 2 of 16 seconds, "frozen" for 80 % of the lesson).

The run is started the way the Lab's ▶ Start does, through the service facade the dashboard calls
(``submit`` paused, ``set_speed`` to the speed, ``resume``: ``scansnap/ui/run_actions.py``), on a job manager made as
the dashboard makes its own (``get_service``).  Every ``--poll-s`` the story is read as the Lab's caption
reads it (the stored history → :func:`scansnap.kinds.synthetic.paper.story.run_story`), so each phase's time is
the time its sentence would be on screen: *start* (the attention has not moved yet), *scan* (common tokens losing
attention, then distinct tokens winning) and *snap* (the attention frozen, provisional or not), each as a
share of the wall time from ▶ Start to ``finished``.  Target: every phase ≥ 20 % at the preset's own speed.
``--speeds`` plays the same run at other speeds side by side (e.g. ``story 20``: story time against the
20 steps/s the preset had), one after another, after one warm-up run (the fork server's torch import).

    PYTHONPATH=. .venv/bin/python -m bench.lecture_pace [--repeats 3] [--speeds story 20]

Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from typing import Any

from scansnap.kinds.synthetic.paper.observe import observed
from scansnap.kinds.synthetic.paper.story import run_story
from scansnap.paper.history import RunHistory
from scansnap.paper.presets import get_preset
from scansnap.service.facade import STORY, STORY_S, Actor, LabService, get_service
from scansnap.service.jobs import TERMINAL

MIN_SHARE = 0.20  # the target: no phase on screen for less than a fifth of the lesson
LECTURER = Actor("bench-lecturer")  # a visitor, as a lecturer at the dashboard is (limits apply)
PHASE = {"starting": "start", "suppressing": "scan", "winning": "scan", "snapped": "snap"}


def story_phase(svc: LabService, rid: str, hist: RunHistory, cfg: Any) -> str:
    """The phase the Lab's story sentence names now (start, scan or snap)."""
    hist.update(svc.store)
    if not hist.steps:
        return "start"
    return PHASE[run_story(observed(hist, svc.store.statics(rid), 0, cfg)).phase]


def timed_start(svc: LabService, preset: str, speed: float | str | None, poll_s: float) -> dict[str, Any]:
    """One run of ``preset`` at ``speed``, started as the Lab's ▶ Start does: its wall time and how long
    the story showed each phase."""
    cfg = get_preset(preset).config
    rid = svc.submit(cfg, LECTURER, name=preset, paused=True)
    hist = RunHistory(rid)
    svc.set_speed(rid, speed, LECTURER)
    t0 = time.monotonic()
    svc.resume(rid, LECTURER)
    shown = {"start": 0.0, "scan": 0.0, "snap": 0.0}
    began: dict[str, float] = {}
    last = t0
    while (s := svc.status(rid)) is not None and s.status not in TERMINAL:
        time.sleep(poll_s)
        phase, now = story_phase(svc, rid, hist, cfg), time.monotonic()
        shown[phase] += now - last
        began.setdefault(phase, round(now - t0, 2))
        last = now
    wall = time.monotonic() - t0
    return {
        "status": s.status if s else None,
        "wall_s": round(wall, 2),
        "phase_s": {k: round(v, 2) for k, v in shown.items()},
        "phase_share": {k: round(v / wall, 3) for k, v in shown.items()},
        "phase_began_s": began,
    }


def stated_s(preset: str, speed: float | str | None) -> float | None:
    """What the speed says the run takes: STORY_S in story time, steps / speed at a steps/s cap."""
    if speed == STORY:
        return STORY_S
    return get_preset(preset).config.optim.steps / float(speed) if speed else None


def measure(preset: str, speeds: list[float | str | None], repeats: int, poll_s: float) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="lecture-pace-") as tmp:
        svc = get_service(tmp)  # the dashboard's own: slots and torch threads as the server sets them
        try:
            timed_start(svc, preset, None, poll_s)  # warm-up: the fork server is still importing torch
            for speed in speeds:
                runs = [timed_start(svc, preset, speed, poll_s) for _ in range(repeats)]
                shares = {k: statistics.median(r["phase_share"][k] for r in runs) for k in ("start", "scan", "snap")}
                rows.append(
                    {
                        "speed": speed,
                        "stated_s": stated_s(preset, speed),
                        "median_wall_s": statistics.median(r["wall_s"] for r in runs),
                        "median_phase_share": {k: round(v, 3) for k, v in shares.items()},
                        "every_phase_at_least": MIN_SHARE,
                        "target_met": all(min(r["phase_share"].values()) >= MIN_SHARE for r in runs),
                        "runs": runs,
                    }
                )
        finally:
            svc.jobs.shutdown()
    return {"preset": preset, "default_speed": get_preset(preset).speed, "poll_s": poll_s, "speeds": rows}


def _speed(text: str) -> float | str | None:
    return STORY if text == STORY else None if text == "max" else float(text)


def main() -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--preset", default="lecture")
    ap.add_argument("--speeds", nargs="+", type=_speed, help="story, max or steps/s (default: the preset's)")
    ap.add_argument("--poll-s", type=float, default=0.1, help="how often the story is read")
    args = ap.parse_args()
    speeds = args.speeds or [get_preset(args.preset).speed]
    load_before = os.getloadavg()
    res = measure(args.preset, speeds, args.repeats, args.poll_s)
    res |= {"load_before": load_before, "load_after": os.getloadavg()}
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":  # workers import this module as __mp_main__: nothing may run then
    main()
