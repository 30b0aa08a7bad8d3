"""The training slots in the pages (AppTest): the Runs page lists each slot's holder, the light runs and
the queue; a paused run (say, one the server paused because nobody watched it) is resumed from the
Runs page and from the Sweep page by its owner."""

from __future__ import annotations

from scansnap.paper.presets import get_preset
from scansnap.paper.sweeps import sweep_config
from scansnap.service.jobs import get_manager
from tests.apphelp import run_app, wait_for
from tests.guards import GUARD_S

LONG = {"optim.steps": 100_000, "optim.batch": 8, "data.T": 16}


def _slots_table(at):
    [table] = [d.value for d in at.dataframe if "holds" in d.value.columns]
    return table


def test_the_runs_page_lists_the_slots_and_resumes_a_paused_run(data_dir):
    at = run_app().switch_page("app_pages/runs.py").run()
    owner = at.session_state["owner"]
    m = get_manager(data_dir)
    cfg = get_preset("syn-small").config.with_overrides(LONG)
    busy = m.submit(cfg, name="busy", owner=owner)
    paused = m.submit(cfg, name="left paused", owner=owner, paused=True)
    try:
        wait_for(lambda: m.status(busy).step > 0)
        at.run()
        table = _slots_table(at)
        assert list(table["holds"]) == [f"slot {i + 1}" for i in range(m.max_concurrent)]
        assert table.iloc[0]["run"] == busy and table.iloc[0]["owner"] == "you" and table.iloc[0]["name"] == "busy"
        assert set(table["status"].iloc[1:]) <= {"free"}, "a paused run holds no slot"
        at.selectbox(key="runs.pick").set_value(paused).run()
        at.button(key="runs.resume").click().run()
        assert not at.exception
        wait_for(lambda: m.status(paused).step > 0)
    finally:
        for rid in (busy, paused):
            m.stop(rid)
            m.wait(rid, GUARD_S)


def test_a_paused_sweep_is_resumed_from_the_sweep_page(data_dir):
    at = run_app().switch_page("app_pages/sweep.py")
    at.session_state["owner"] = "session-sweeper"  # (the sweep page asks for its owner only on ▶ Run)
    at.run()
    m = get_manager(data_dir)
    cfg = sweep_config(get_preset("syn-small").config.with_overrides(LONG), [1.0], [1.0], [1], 100_000)
    rid = m.submit(cfg, name="a sweep", owner="session-sweeper", paused=True)
    try:
        at.session_state["sweep.run"] = rid
        at.run()
        assert any("paused" in p.proto.text for p in at.get("progress"))
        at.button(key="sweep.resume").click().run()
        assert not at.exception
        wait_for(lambda: m.status(rid).step > 0)
    finally:
        m.stop(rid)
        m.wait(rid, GUARD_S)


def _pause_then_resume_each_twice() -> None:
    """Each of the Lab's Pause and Resume callbacks run twice, as Streamlit may run a click's callback
    when a fragment's rerun interrupts the click's run (test_lab_live_pause_reload saw the run resume)."""
    import time

    import streamlit as st

    from scansnap.kinds.synthetic.ui.actions import RUN
    from tests.guards import GUARD_S

    action = st.session_state["do"]
    getattr(RUN, action)()
    deadline = time.monotonic() + GUARD_S  # the second call comes once the first has taken effect
    while (RUN.live_status().status == "paused") != (action == "pause") and time.monotonic() < deadline:
        time.sleep(0.05)
    getattr(RUN, action)()


def test_a_pause_or_resume_run_twice_acts_once(data_dir):
    """Pause twice leaves the run paused (the old Pause/Resume toggle resumed it); Resume twice leaves it
    training."""
    from streamlit.testing.v1 import AppTest

    m = get_manager(data_dir)
    rid = m.submit(get_preset("syn-small").config.with_overrides(LONG), name="twice", owner="session-twice")
    try:
        wait_for(lambda: m.status(rid).step > 0)
        for action, want in (("pause", "paused"), ("resume", "running")):
            at = AppTest.from_function(_pause_then_resume_each_twice, default_timeout=GUARD_S + 60)  # past its own wait
            for key, value in (("owner", "session-twice"), ("lab.run", rid), ("do", action)):
                at.session_state[key] = value
            at.run()
            assert not at.exception, [e.value for e in at.exception]
            assert m.status(rid).pause_requested == (action == "pause"), action  # what the last call left asked
            wait_for(lambda want=want: m.status(rid).status == want)  # resumed: queued for its slot, then running
    finally:
        m.stop(rid)
        m.wait(rid, GUARD_S)
