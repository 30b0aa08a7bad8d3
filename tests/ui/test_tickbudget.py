"""The live area's refresh budget (scansnap/ui/tickbudget.py): ticks stretch with the number of watchers."""

import pytest

from scansnap.ui.live.tickbudget import TickBudget


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_few_watchers_keep_the_base_tick():
    b = TickBudget(base=0.5, budget=0.5, first_cost=0.04, clock=Clock())
    for i in range(5):
        b.record(f"s{i}", 0.04)
    assert b.watching() == 5 and b.tick() == 0.5  # 5 × 0.04 / 0.5 = 0.4 < 0.5


def test_many_watchers_stretch_the_tick_to_keep_the_budget():
    b = TickBudget(base=0.5, budget=0.5, max_tick=5.0, first_cost=0.04, clock=Clock())
    for i in range(20):
        b.record(f"s{i}", 0.04)
    assert b.tick() == pytest.approx(20 * 0.04 / 0.5)  # 1.6 s: the 20 live areas use half a core
    assert b.tick("newcomer") == pytest.approx(21 * 0.04 / 0.5)
    assert b.tick("s3") == pytest.approx(20 * 0.04 / 0.5)  # already counted: not twice
    for i in range(200):
        b.record(f"x{i}", 0.04)
    assert b.max_tick < 220 * 0.04 / 0.5 and b.tick() == b.max_tick  # 17.6 s wanted: capped


def test_the_cost_is_measured_and_stale_sessions_drop_out():
    clock = Clock()
    b = TickBudget(base=0.5, budget=0.5, first_cost=0.01, ttl=6.0, clock=clock)
    for _ in range(30):
        b.record("a", 0.2)  # slow ticks raise the average cost
    # an exponential average of the ticks' times: after 30 ticks of 0.2 s the first guess (0.01) has faded
    assert b.cost == pytest.approx(0.2, rel=0.01)
    b.record("b", 0.2)
    clock.t = 5.0
    b.record("c", 0.2)
    assert b.watching() == 3
    clock.t = 10.0  # a and b last ticked 10 s ago: their tabs are gone
    assert b.watching() == 1
    b.forget("c")
    assert b.watching() == 0 and b.tick() == 0.5


def test_off_by_asks_for_a_new_interval_only_beyond_a_factor_1_5():
    b = TickBudget(base=0.5, budget=0.5, first_cost=0.04, clock=Clock())
    for i in range(20):
        b.record(f"s{i}", 0.04)  # wants 1.6 s
    assert b.off_by(0.5) and not b.off_by(1.2) and not b.off_by(2.0) and b.off_by(2.5)


def test_a_session_that_declared_its_tick_is_not_asked_to_change_it_again():
    """The full rerun declares tick(me); the next fragment tick compares with off_by(tick, me):
    the two must agree, or the page would rerun forever."""
    b = TickBudget(base=0.5, budget=0.5, first_cost=0.5, clock=Clock())  # a slow machine: 0.5 s a tick
    declared = b.tick("me")
    b.record("me", 0.5)
    assert not b.off_by(declared, "me")


def test_the_servers_budget_never_stretches_a_refresh_past_the_idle_pauses_bound():
    """The idle pause (SCANSNAP_IDLE_PAUSE_S, at least two of these) counts on a watched page refreshing at
    least every SLOWEST_REFRESH_S, however many watch and however slow a tick."""
    from scansnap.service.facade import SLOWEST_REFRESH_S
    from scansnap.ui.live.frame import tick_budget

    assert tick_budget().max_tick == SLOWEST_REFRESH_S  # the server's one budget (shared: not loaded here)
    b = TickBudget(base=tick_budget().base, max_tick=tick_budget().max_tick, first_cost=2.0, clock=Clock())
    for i in range(500):
        b.record(f"busy-{i}", 2.0)  # 500 watchers, 2 s a tick: 2,000 s of refresh wanted
    assert b.tick() == SLOWEST_REFRESH_S
