"""How much of a wall-clock interval this machine's host left to its CPUs (Linux ``/proc/stat``).

A bound on wall time (health answers within 1 s, a new run trains within 5 s) is stated for a server
that has its machine's cores.  On a virtual machine the host may run something else on them for a
while: the kernel counts that time as *steal*, the 8th number of ``/proc/stat``'s ``cpu`` line, in
ticks summed over the CPUs, beside user, nice, system, idle, iowait, irq and softirq (together: every
tick of every CPU).  Over an interval of wall time ``t`` the host left the machine

    t_kept = t · (1 − Δsteal / Δtotal)

seconds of its CPUs' time per CPU, the time the server could have used.  The bounded tests and the load
test check ``t_kept`` against the bound and record ``t`` beside it; where the host took nothing (or
there is no ``/proc/stat``) the two are equal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
PROC_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class CpuTicks:
    """``/proc/stat``'s ``cpu`` line at one moment: ticks stolen by the host and ticks in all, summed over CPUs."""

    steal: int
    total: int


def parse_cpu_ticks(stat: str) -> CpuTicks:
    """The ``cpu`` line of ``/proc/stat``'s text: total = user + nice + system + idle + iowait + irq +
    softirq + steal (guest time is already inside user and nice); a kernel without the steal field has
    none."""
    line = next((ln for ln in stat.splitlines() if ln.startswith("cpu ")), None)
    if line is None:
        raise ValueError("no 'cpu ' line in /proc/stat's text")
    ticks = [int(x) for x in line.split()[1:9]]
    return CpuTicks(steal=ticks[7] if len(ticks) > 7 else 0, total=sum(ticks))


def cpu_ticks() -> CpuTicks:
    """Now; zeros where the system has no ``/proc/stat`` (then nothing counts as stolen)."""
    try:
        return parse_cpu_ticks(PROC_STAT.read_text())
    except (OSError, ValueError):
        return CpuTicks(0, 0)


def steal_share(before: CpuTicks, after: CpuTicks) -> float:
    """Δsteal / Δtotal between two readings, in [0, 1] (0 when no tick passed)."""
    ticks = after.total - before.total
    return min(max((after.steal - before.steal) / ticks, 0.0), 1.0) if ticks > 0 else 0.0


@dataclass(frozen=True)
class Interval:
    """One measured interval: its wall time, the host's share of the CPUs meanwhile and what it left."""

    wall_s: float
    steal: float

    @property
    def kept_s(self) -> float:
        return self.wall_s * (1.0 - self.steal)

    def says(self) -> str:
        """E.g. "1.07 s (the host took 12% of the CPUs meanwhile: 0.94 s left)"."""
        return f"{self.wall_s:.2f} s (the host took {self.steal:.0%} of the CPUs meanwhile: {self.kept_s:.2f} s left)"


def steal_during(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()``'s result and the host's share of the CPUs while it ran (Δsteal / Δtotal)."""
    before = cpu_ticks()
    out = fn()
    return out, steal_share(before, cpu_ticks())
