"""How a stored run reads in a list (the Runs page's table and picker, the HTML report's status line) and
what the Runs page says after it acted on one.  Pure: no Streamlit, no service.

A step that does not exist yet (a queued run has stored none) reads "—", never "None"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NO_STEP = "—"
SEP = " · "  # between a picker label's fields: name · id · status · step S
MAX_NAME = 200  # characters of a run's name (RunConfig.name's max_length)


def step_text(step: int | None) -> str:
    """A stored step for people: ``1,234``; "—" when the run has none yet."""
    return NO_STEP if step is None else f"{int(step):,}"


def run_label(info: dict[str, Any]) -> str:
    """The run picker's line for a stored run: name · id · status · step S."""
    return SEP.join((str(info["name"]), str(info["id"]), str(info["status"]), f"step {step_text(info['last_step'])}"))


def id_in_label(label: str) -> str | None:
    """The run id of a :func:`run_label` line (a name may hold " · " itself: the id is third from the end)."""
    parts = label.rsplit(SEP, 3)
    return parts[1] if len(parts) == 4 else None


def chosen_run(picked: object, last: str | None, ids: Sequence[str]) -> str:
    """The run the page shows, of the listed ``ids`` (newest first, not empty): the picker's value (a run id,
    or a label from a page drawn before the run's name, status or step changed), else the run shown last,
    else the newest."""
    candidates = [picked, id_in_label(picked) if isinstance(picked, str) else None, last]
    return next((c for c in candidates if isinstance(c, str) and c in ids), ids[0])


def table_row(info: dict[str, Any], me: str, replicas: int, created: str) -> dict[str, Any]:
    """One row of the runs table (``created`` already formatted; ``me``: this browser's owner id)."""
    return {
        "id": info["id"],
        "name": info["name"],
        "status": info["status"],
        "step": step_text(info["last_step"]),
        "kind": info["kind"],
        "replicas": replicas,
        "yours": info["owner"] == me,
        "created": created,
        "device": info["device"],
        "trained on": info["node"] or "this server",
    }


def plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def name_problem(new: str, old: str) -> str | None:
    """Why ``new`` (already stripped) cannot rename the run called ``old``, or None when it can."""
    if not new:
        return "A run's name cannot be empty: type the new name, then press Rename."
    if len(new) > MAX_NAME:
        return f"A run's name has at most {MAX_NAME} characters; this one has {len(new):,}."
    if new == old:
        return f"The run is called '{old}' already: type another name, then press Rename."
    return None


def renamed(old: str, new: str) -> str:
    return f"Renamed '{old}' to '{new}'."


def deleted(name: str, rid: str, snapshots: int) -> str:
    return f"Deleted run '{name}' ({rid}) and all its data: {plural(snapshots, 'snapshot')}."


def what_it_does(status: str | None) -> str:
    """What a run that was just started or resumed does now, from its job's status."""
    if status == "running":
        return "it is training"
    if status == "queued":
        return "it is queued: it trains as soon as a training slot is free"
    if status == "paused":
        return "it is paused"
    return f"it is {status or 'not training'}"


def resumed(name: str, step: int | None, status: str | None) -> str:
    """After *Resume from checkpoint* (``step``: its checkpoint's; None when it had none)."""
    start = f"from step {step_text(step)}" if step is not None else "from step 0 (it had no checkpoint yet)"
    return f"Resumed '{name}' {start}; {what_it_does(status)}."


def continued(name: str, step: int, status: str | None) -> str:
    """After ▶ Resume of a paused run."""
    return f"Resumed '{name}' at step {step_text(step)}; {what_it_does(status)}."


def stopped(name: str, step: int, done: bool) -> str:
    """After ⏹ Stop (``done``: its worker has ended)."""
    if done:
        return f"Stopped '{name}' at step {step_text(step)}: Resume from checkpoint continues it."
    return f"Stopping '{name}' (step {step_text(step)}): it ends at its next step."


def rerun_started(name: str, rid: str, status: str | None) -> str:
    return f"Started '{name}' again from scratch as run {rid}; {what_it_does(status)}."


def recovery_note(status: str, last_step: int | None, message: str | None) -> str:
    """The sentence over an interrupted or stopped run's recovery buttons (Markdown: ``message`` goes
    through :func:`scansnap.ui.text.plain` first)."""
    why = f" ({message})" if message else ""
    kept = "no snapshot is stored" if last_step is None else f"its stored snapshots reach step {step_text(last_step)}"
    return f"This run is **{status}**{why}; {kept}."
