"""bench/host_steal.py: the share of an interval the virtual machine's host took from its CPUs, which the
time-bounded tests (the hall, the load test, the huge-vocabulary link) leave out of their measured seconds."""

from __future__ import annotations

import time

import pytest

import bench.host_steal as hs
from bench.host_steal import CpuTicks, Interval, parse_cpu_ticks, steal_share

# /proc/stat as this machine printed it (2 CPUs): user nice system idle iowait irq softirq steal guest guest_nice
STAT = """cpu  8387054 924830 906258 3678517 72163 0 28818 510707 0 0
cpu0 3875505 433559 429607 2225195 18439 0 15313 259149 0 0
cpu1 4511549 491271 476651 1453321 53724 0 13505 251557 0 0
intr 91456313 0 0
ctxt 208967506
"""


def test_the_cpu_line_gives_steal_and_every_tick():
    ticks = parse_cpu_ticks(STAT)
    # total: the first eight numbers (guest time is counted inside user already)
    assert ticks == CpuTicks(steal=510707, total=8387054 + 924830 + 906258 + 3678517 + 72163 + 0 + 28818 + 510707)


def test_a_kernel_without_the_steal_field_has_none():
    assert parse_cpu_ticks("cpu  10 0 5 85 0 0 0\n") == CpuTicks(steal=0, total=100)


def test_text_without_a_cpu_line_is_refused():
    with pytest.raises(ValueError, match="no 'cpu ' line"):
        parse_cpu_ticks("cpu0 1 2 3 4\n")


def test_the_share_is_the_stolen_ticks_over_every_tick_between_two_readings():
    before, after = CpuTicks(steal=100, total=1000), CpuTicks(steal=150, total=1200)
    assert steal_share(before, after) == 50 / 200
    assert steal_share(before, before) == 0.0  # no tick passed
    assert steal_share(after, before) == 0.0  # readings in the wrong order (or a reset counter): nothing stolen


def test_an_interval_keeps_what_the_host_left():
    took = Interval(wall_s=1.2, steal=0.25)
    assert took.kept_s == pytest.approx(0.9)
    assert took.says() == "1.20 s (the host took 25% of the CPUs meanwhile: 0.90 s left)"
    assert Interval(3.0, 0.0).kept_s == 3.0


def test_this_machine_counts_ticks_and_a_missing_proc_stat_counts_none(monkeypatch, tmp_path):
    before = hs.cpu_ticks()
    out, host = hs.steal_during(lambda: time.sleep(0.2) or "done")
    after = hs.cpu_ticks()
    assert out == "done" and 0.0 <= host <= 1.0
    assert after.total > before.total >= before.steal >= 0  # 0.2 s is 20 ticks per CPU at 100 Hz
    monkeypatch.setattr(hs, "PROC_STAT", tmp_path / "absent")
    assert hs.cpu_ticks() == CpuTicks(0, 0)
