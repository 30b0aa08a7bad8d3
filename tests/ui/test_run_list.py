"""How a run reads in the Runs page's lists and what the page says after an action (scansnap/ui/run_list.py): pure."""

from __future__ import annotations

import pytest

from scansnap.ui.run_list import (
    MAX_NAME,
    NO_STEP,
    chosen_run,
    deleted,
    id_in_label,
    name_problem,
    recovery_note,
    renamed,
    resumed,
    run_label,
    step_text,
    stopped,
    table_row,
)

RUN = {
    "id": "abc123",
    "name": "my run",
    "status": "queued",
    "last_step": None,
    "kind": "synthetic",
    "owner": "me",
    "device": "cpu",
    "node": None,
}


@pytest.mark.parametrize(("step", "text"), [(None, "—"), (0, "0"), (7, "7"), (12345, "12,345")])
def test_a_step_reads_as_a_number_and_a_missing_one_as_a_dash(step, text):
    assert step_text(step) == text


def test_a_queued_run_lists_its_step_as_a_dash_never_none():
    row = table_row(RUN, "me", 1, "2026-01-01 00:00:00")
    assert row["step"] == NO_STEP and row["yours"] and row["trained on"] == "this server"
    assert run_label(RUN) == "my run · abc123 · queued · step —"
    assert "None" not in run_label(RUN) and "None" not in str(row.values())


def test_the_label_names_its_run_even_when_the_name_holds_the_separator():
    info = {**RUN, "name": "a · b · c", "status": "stopped", "last_step": 300}
    assert run_label(info) == "a · b · c · abc123 · stopped · step 300"
    assert id_in_label(run_label(info)) == "abc123"
    assert id_in_label("no separator here") is None


def test_the_page_shows_the_picked_run_then_the_last_one_shown_then_the_newest():
    ids = ["new", "mid", "old"]
    assert chosen_run("mid", "old", ids) == "mid"
    stale = run_label({**RUN, "id": "old", "name": "before the rename", "status": "stopped", "last_step": 5})
    assert chosen_run(stale, "mid", ids) == "old"  # a label from before a rename or a status change
    assert chosen_run("deleted", "mid", ids) == "mid"
    assert chosen_run(None, "deleted", ids) == "new"
    assert chosen_run(None, None, ids) == "new"


def test_a_name_must_be_new_non_empty_and_not_too_long():
    assert name_problem("fresh", "old") is None
    assert "empty" in name_problem("", "old")
    assert "already" in name_problem("old", "old")
    assert f"at most {MAX_NAME}" in name_problem("x" * (MAX_NAME + 1), "old")


def test_each_action_says_what_it_did():
    assert renamed("a", "b") == "Renamed 'a' to 'b'."
    assert deleted("a", "abc123", 31) == "Deleted run 'a' (abc123) and all its data: 31 snapshots."
    assert deleted("a", "abc123", 1).endswith(": 1 snapshot.")
    assert resumed("a", 1200, "running") == "Resumed 'a' from step 1,200; it is training."
    assert resumed("a", 100, "queued").startswith("Resumed 'a' from step 100; it is queued")
    assert resumed("a", None, "running").startswith("Resumed 'a' from step 0 (it had no checkpoint yet)")
    assert stopped("a", 40, True).startswith("Stopped 'a' at step 40")
    assert stopped("a", 40, False).startswith("Stopping 'a'")


def test_the_recovery_note_says_the_status_once_and_where_the_snapshots_end():
    note = recovery_note("stopped", 300, "stopped at step 315")
    assert note == "This run is **stopped** (stopped at step 315); its stored snapshots reach step 300."
    assert recovery_note("interrupted", None, None) == "This run is **interrupted**; no snapshot is stored."
