"""What a visitor may ask of the server (steps per run, the server-wide queue of training), what a
delete does to a training run, and the limits' environment variables."""

from __future__ import annotations

import re

import pytest

from scansnap.kinds.synthetic.service.budget import estimated_seconds
from scansnap.paper.presets import get_preset
from scansnap.service.facade import Actor, LabService, ServiceError
from scansnap.service.jobs import TERMINAL, JobManager
from scansnap.service.limits import IDLE_PAUSE_FLOOR_S, REFRESH_S, SLOWEST_REFRESH_S, Limits, live_refresh_s
from scansnap.service.store import RunStore
from tests.guards import GUARD_S


def _cfg(steps: int):
    return get_preset("syn-small").config.with_overrides({"optim.steps": steps, "optim.batch": 8, "data.T": 16})


@pytest.fixture
def service(tmp_path):
    jobs = JobManager(RunStore(tmp_path), max_concurrent=1, limits=Limits(max_steps=1000, max_queue_s=600.0))
    yield LabService(jobs)
    jobs.shutdown()


def test_a_visitor_may_not_ask_for_more_steps_than_the_server_allows(service):
    with pytest.raises(ServiceError, match=r"at most 1,000 steps \(SCANSNAP_MAX_STEPS\); this one asks for 1,001"):
        service.submit(_cfg(1001), Actor("browser-a"))
    rid = service.submit(_cfg(1001), Actor("browser-op", operator=True), paused=True)  # the operator may
    service.stop(rid, Actor("browser-op", operator=True))


def test_new_cookies_do_not_get_around_the_servers_queue(tmp_path):
    """Each submission from a fresh owner id (a client that reconnects mints a new cookie) still
    counts against the server-wide queue of estimated training seconds: the run that holds the one
    slot and the runs queued behind it."""
    per_run = estimated_seconds(_cfg(20_000))  # long enough that the first run is far from done below
    jobs = JobManager(RunStore(tmp_path), max_concurrent=1, limits=Limits(max_queue_s=2.5 * per_run))
    service = LabService(jobs)
    try:
        started = [service.submit(_cfg(20_000), Actor(f"browser-{i}")) for i in range(2)]  # one trains, one waits
        assert service.jobs.queued_seconds() > 1.5 * per_run  # unless the first did half its steps already
        with pytest.raises(ServiceError, match=r"min of training queued or running.*SCANSNAP_MAX_QUEUE_S"):
            service.submit(_cfg(20_000), Actor("browser-new"))
        with pytest.raises(ServiceError, match=r"min of training queued or running"):  # the Lab submits paused
            service.submit(_cfg(20_000), Actor("browser-paused"), paused=True)
        for rid in started:
            service.stop(rid, Actor("", operator=True))
            service.jobs.wait(rid, GUARD_S)
        assert service.jobs.queued_seconds() == 0.0
        service.stop(service.submit(_cfg(20_000), Actor("browser-new")), Actor("browser-new"))
    finally:
        jobs.shutdown()


def test_deleting_a_training_run_stops_its_worker_and_frees_its_place(service):
    me = Actor("browser-a")
    rid = service.submit(_cfg(1000), me)
    service.jobs.changed.acquire()
    service.jobs.changed.wait_for(lambda: service.jobs.status(rid).step > 0, GUARD_S)
    service.jobs.changed.release()
    service.delete(rid, me)
    assert service.run(rid) is None and not service.is_live(rid)
    assert service.jobs.status(rid).status in TERMINAL and service.jobs.active() == []
    assert service.jobs.worker_pids() == []
    service.stop(service.submit(_cfg(10), me, paused=True), me)  # the owner's places are free again


def test_a_run_that_vanishes_from_the_store_ends_its_job(service):
    """The supervisor treats a run deleted behind its back (not through the facade) like a failed
    store write: the job ends, with a status, and counts no more."""
    rid = service.submit(_cfg(1000), Actor("browser-a"))
    service.store.delete(rid)
    assert service.jobs.wait(rid, GUARD_S) in TERMINAL
    assert service.jobs.active() == [] and service.jobs.queued_seconds() == 0.0


def test_only_the_owner_or_the_operator_manages_a_run(service):
    rid = service.submit(_cfg(10), Actor("browser-a"), paused=True)
    for act in (service.pause, service.stop, service.delete):
        with pytest.raises(ServiceError, match="only the browser that started run"):
            act(rid, Actor("browser-b"))
    with pytest.raises(ServiceError, match="only the browser that started run"):
        service.rename(rid, "mine now", Actor("browser-b"))
    service.delete(rid, Actor("someone", operator=True))
    assert service.run(rid) is None


@pytest.mark.parametrize(("value", "why"), [("abc", "is not a number"), ("-5", "must be > 0"), ("0", "must be > 0")])
def test_bad_limits_in_the_environment_name_the_variable(monkeypatch, value, why):
    monkeypatch.setenv("SCANSNAP_MAX_QUEUE_S", value)
    with pytest.raises(ValueError, match=f"SCANSNAP_MAX_QUEUE_S={value!r} {why}"):
        Limits.from_env()


def test_an_idle_pause_shorter_than_two_slow_refreshes_is_refused(monkeypatch):
    """A watched page refreshes (and says it watches) at least every SLOWEST_REFRESH_S: a shorter idle pause
    than two of them would pause runs someone watches.  The floor itself is allowed."""
    monkeypatch.setenv("SCANSNAP_IDLE_PAUSE_S", "4")
    with pytest.raises(ValueError, match=r"SCANSNAP_IDLE_PAUSE_S=4 is too short: set at least 10 s"):
        Limits.from_env()
    monkeypatch.setenv("SCANSNAP_IDLE_PAUSE_S", str(2 * SLOWEST_REFRESH_S))
    assert Limits.from_env().idle_pause_s == IDLE_PAUSE_FLOOR_S == 2 * SLOWEST_REFRESH_S


def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("SCANSNAP_MAX_STEPS", "500")
    monkeypatch.setenv("SCANSNAP_MAX_PER_OWNER", "3")
    assert Limits.from_env() == Limits(max_steps=500, max_queue_s=Limits.max_queue_s, max_per_owner=3)


def test_a_grid_counts_as_one_of_a_visitors_runs_and_is_queued_whole_or_not_at_all(tmp_path):
    """A visitor may have 2 runs (SCANSNAP_MAX_PER_OWNER): a grid of 3 is one of them; a grid whose
    total time overflows the queue stores none of its runs."""
    per_run = estimated_seconds(_cfg(200))
    jobs = JobManager(RunStore(tmp_path), max_concurrent=1, limits=Limits(max_queue_s=10 * per_run, max_per_owner=2))
    service = LabService(jobs)
    visitor = Actor("browser-a")
    try:
        grid = service.submit_grid([_cfg(200)] * 3, ["a", "b", "c"], visitor)
        single = service.submit(_cfg(200), visitor, paused=True)  # the grid counted once: a second run is allowed
        with pytest.raises(ServiceError, match="you already have 2 runs"):
            service.submit(_cfg(200), visitor, paused=True)
        for rid in [*grid, single]:
            service.stop(rid, visitor)
            jobs.wait(rid, GUARD_S)
        before = len(jobs.store.list_runs())
        with pytest.raises(ServiceError, match="SCANSNAP_MAX_QUEUE_S"):
            service.submit_grid([_cfg(200)] * 11, [str(i) for i in range(11)], visitor)
        assert len(jobs.store.list_runs()) == before  # none of the 11 stored
    finally:
        jobs.shutdown()


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("abc", "'abc' is not a number"),
        ("0", "'0' must be > 0"),
        ("0.05", "0.05 is out of range: set 0.1 to 5 s"),
        ("6", "6 is out of range: set 0.1 to 5 s"),
    ],
)
def test_a_bad_refresh_in_the_environment_names_the_variable_and_the_range(monkeypatch, value, why):
    """SCANSNAP_TICK_S, the fastest refresh of a live page: a watched page must say so at least every
    SLOWEST_REFRESH_S (the idle pause counts on it), so a refresh slower than that is refused too."""
    monkeypatch.setenv("SCANSNAP_TICK_S", value)
    with pytest.raises(ValueError, match=re.escape(f"SCANSNAP_TICK_S={why}")):
        live_refresh_s()


def test_the_refresh_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("SCANSNAP_TICK_S", raising=False)
    assert live_refresh_s() == REFRESH_S == 0.5
    monkeypatch.setenv("SCANSNAP_TICK_S", "1")
    assert live_refresh_s() == 1.0
    monkeypatch.setenv("SCANSNAP_TICK_S", str(SLOWEST_REFRESH_S))
    assert live_refresh_s() == SLOWEST_REFRESH_S
