"""The one admission rule (scansnap/service/jobs.py ``_admit``): every path that adds work re-checks the
server-wide queue (SCANSNAP_MAX_QUEUE_S) and the visitor's runs (SCANSNAP_MAX_PER_OWNER), and a run's
estimated slot time counts from the moment it exists until it ends, paused or light included.

Each test reproduces one way the review got past the limit (finding 1): four fresh cookies that start
paused, move the speed slider and resume; one cookie that starts, pauses and starts again; a resume,
a step, a faster speed or a stored run's resume after the queue filled; a visitor's reproduction.
The runs here are created paused and never train, so nothing depends on this host's speed."""

from __future__ import annotations

import pytest

from scansnap.kinds.synthetic.service.budget import estimated_seconds
from scansnap.paper.items.costs import estimated_seconds as reproduction_seconds
from scansnap.paper.presets import get_preset
from scansnap.service.facade import Actor, LabService, ServiceError
from scansnap.service.jobs import JobManager
from scansnap.service.limits import Limits
from scansnap.service.store import RunStore
from tests.guards import GUARD_S

FULL = r"min of training queued or running.*SCANSNAP_MAX_QUEUE_S"
OPERATOR = Actor("browser-operator", operator=True)


def _cfg(steps: int = 20_000):
    return get_preset("syn-small").config.with_overrides({"optim.steps": steps, "optim.batch": 8, "data.T": 16})


PER_RUN = estimated_seconds(_cfg())


@pytest.fixture
def service(tmp_path):
    """One slot; the queue holds 1.5 runs (as 30 min holds one 24.6-min run and not two)."""
    jobs = JobManager(RunStore(tmp_path), max_concurrent=1, limits=Limits(max_queue_s=1.5 * PER_RUN))
    yield LabService(jobs)
    jobs.shutdown()


def test_a_paused_run_counts_in_the_queue_so_fresh_cookies_cannot_stack_runs(service):
    """The Lab creates a run paused, sets its speed, then resumes it: the paused run already holds its
    place, so a second cookie's run is refused though nothing trains yet."""
    first = service.submit(_cfg(), Actor("browser-1"), paused=True)
    assert service.jobs.queued_seconds() == pytest.approx(PER_RUN)
    for k in range(2, 5):
        with pytest.raises(ServiceError, match=FULL):
            service.submit(_cfg(), Actor(f"browser-{k}"), paused=True)
    service.set_speed(first, 1.0, Actor("browser-1"))  # throttled light: still counted
    assert service.jobs.queued_seconds() == pytest.approx(PER_RUN)
    service.set_speed(first, None, Actor("browser-1"))  # the slider at max: its own place, admitted
    with pytest.raises(ServiceError, match=FULL):
        service.submit(_cfg(), Actor("browser-5"), paused=True)


def test_one_cookie_cannot_start_pause_and_start_again(service):
    me = Actor("browser-1")
    service.submit(_cfg(), me, paused=True)
    with pytest.raises(ServiceError, match=FULL):
        service.submit(_cfg(), me, paused=True)


def test_resume_step_and_a_faster_speed_are_admitted_again(service):
    """A visitor's paused run that went dormant (no page showed it for SCANSNAP_IDLE_PAUSE_S) holds no
    place; once the queue filled meanwhile, its resume, a step and a faster speed are refused, a slower
    speed is not; the operator is never refused."""
    visitor = Actor("browser-1")
    rid = service.submit(_cfg(), visitor, paused=True)
    service.set_speed(rid, 2.0, visitor)
    job = service.jobs._jobs[rid]
    job.paused_at = job.watched_at = job.paused_at - 2 * service.jobs.limits.idle_pause_s
    assert service.jobs.queued_seconds() == 0.0  # dormant: its place is free
    other = service.submit(_cfg(), Actor("browser-2"), paused=True)  # and taken
    with pytest.raises(ServiceError, match=FULL):
        service.resume(rid, visitor)
    with pytest.raises(ServiceError, match=FULL):
        service.step(rid, 10, visitor)
    with pytest.raises(ServiceError, match=FULL):
        service.set_speed(rid, 20.0, visitor)
    service.set_speed(rid, 1.0, visitor)  # slower: no more work, allowed
    assert service.status(rid).status == "paused" and service.status(rid).speed == 1.0
    service.stop(other, Actor("browser-2"))
    service.step(rid, 1, visitor)  # the place is free again
    service.stop(rid, OPERATOR)


def test_the_operators_runs_count_against_a_visitors_resume(service):
    visitor = Actor("browser-1")
    rid = service.submit(_cfg(), visitor, paused=True)
    job = service.jobs._jobs[rid]
    job.paused_at = job.watched_at = job.paused_at - 2 * service.jobs.limits.idle_pause_s
    service.submit(_cfg(), OPERATOR, paused=True)
    service.submit(_cfg(), OPERATOR, paused=True)  # the operator is not limited
    with pytest.raises(ServiceError, match=FULL):
        service.resume(rid, visitor)
    service.resume(rid, OPERATOR)  # the operator may resume anyone's run


def test_a_stored_runs_resume_is_admitted_like_a_new_run(service):
    visitor = Actor("browser-1")
    rid = service.submit(_cfg(), visitor, paused=True)
    service.stop(rid, visitor)
    service.jobs.wait(rid, GUARD_S)
    service.submit(_cfg(), Actor("browser-2"), paused=True)
    with pytest.raises(ServiceError, match=FULL):
        service.resume_stored(rid, visitor)
    assert service.run(rid)["status"] == "stopped"  # refused before anything was written


def test_the_owner_quota_is_checked_on_resume_without_counting_the_run_itself(tmp_path):
    jobs = JobManager(RunStore(tmp_path), max_concurrent=1, limits=Limits(max_queue_s=10 * PER_RUN, max_per_owner=2))
    service, me = LabService(jobs), Actor("browser-1")
    try:
        a = service.submit(_cfg(), me, paused=True)
        service.submit(_cfg(), me, paused=True)
        service.resume(a, me)  # two live runs, its own among them: allowed
        with pytest.raises(ServiceError, match="you already have 2 runs"):
            service.submit(_cfg(), me, paused=True)
    finally:
        jobs.shutdown()


def test_a_visitors_quick_reproduction_counts_in_the_queue(tmp_path):
    quick = reproduction_seconds(["fig5"], True)
    jobs = JobManager(RunStore(tmp_path), max_concurrent=1, limits=Limits(max_queue_s=PER_RUN + 0.5 * quick))
    service = LabService(jobs)
    try:
        rid = service.submit(_cfg(), Actor("browser-1"), paused=True)
        with pytest.raises(ServiceError, match=FULL):  # the facade admits a visitor's reproduction
            service.start_reproduction(["fig5"], True, Actor("browser-2"))
        with pytest.raises(ServiceError, match="only the operator starts it"):  # finding 7: hours, any visitor
            service.start_reproduction(["fig5"], False, Actor("browser-2"))
        service.stop(rid, OPERATOR)
        jobs.wait(rid, GUARD_S)
        rep = service.start_reproduction(["fig5"], True, Actor("browser-2"))
        assert jobs.queued_seconds() > 0  # until it ends
        assert jobs.wait(rep, GUARD_S) == "finished"
        assert jobs.queued_seconds() == 0.0
    finally:
        jobs.shutdown()
