"""What one visitor may ask of the server, and what the server takes on at once: the operator sets
each limit with an environment variable (read when the service starts; a bad value stops it with a
message naming the variable).  docs/operate.md's limits table lists them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

# A page that shows a live run tells the server so on each refresh, at least this often: the Lab's
# refresh stretches under load up to this (scansnap/ui/live/tickbudget.py).  A run is idle-paused only after
# two refreshes could have come and none did.
SLOWEST_REFRESH_S = 5.0
IDLE_PAUSE_FLOOR_S = 2 * SLOWEST_REFRESH_S
REFRESH_S = 0.5  # SCANSNAP_TICK_S: the fastest refresh of a page showing a live run (the default)
FASTEST_REFRESH_S = 0.1  # the least SCANSNAP_TICK_S may be


@dataclass(frozen=True)
class Limits:
    max_steps: int = 100_000  # SCANSNAP_MAX_STEPS: optimiser steps of one run started from a browser
    max_queue_s: float = 1800.0  # SCANSNAP_MAX_QUEUE_S: estimated training seconds queued + running, server-wide
    max_per_owner: int = 2  # SCANSNAP_MAX_PER_OWNER: runs one browser may have queued, training or paused
    idle_pause_s: float = 600.0  # SCANSNAP_IDLE_PAUSE_S: a run no page shows this long pauses itself
    park_after_s: float = 30.0  # SCANSNAP_PARK_S: a paused run's worker ends (checkpoint stored) after this
    max_owner_disk_mb: float = 2048.0  # SCANSNAP_MAX_OWNER_DISK_MB: what one browser's runs may store, in all

    @classmethod
    def from_env(cls) -> Limits:
        idle = env_number("SCANSNAP_IDLE_PAUSE_S", cls.idle_pause_s, float)
        if idle < IDLE_PAUSE_FLOOR_S:
            raise ValueError(
                f"SCANSNAP_IDLE_PAUSE_S={idle:g} is too short: set at least {IDLE_PAUSE_FLOOR_S:g} s (a page "
                f"watching a run refreshes only every {SLOWEST_REFRESH_S:g} s under load, so a shorter limit "
                "would pause runs that someone watches)"
            )
        return cls(
            env_number("SCANSNAP_MAX_STEPS", cls.max_steps, int),
            env_number("SCANSNAP_MAX_QUEUE_S", cls.max_queue_s, float),
            env_number("SCANSNAP_MAX_PER_OWNER", cls.max_per_owner, int),
            idle,
            env_number("SCANSNAP_PARK_S", cls.park_after_s, float),
            env_number("SCANSNAP_MAX_OWNER_DISK_MB", cls.max_owner_disk_mb, float),
        )


def live_refresh_s() -> float:
    """``SCANSNAP_TICK_S``: how often, at the fastest, a page showing a live run refreshes (the tick budget
    stretches it under load, up to :data:`SLOWEST_REFRESH_S`); a value outside that range is refused."""
    tick = env_number("SCANSNAP_TICK_S", REFRESH_S, float)
    if not FASTEST_REFRESH_S <= tick <= SLOWEST_REFRESH_S:
        raise ValueError(
            f"SCANSNAP_TICK_S={tick:g} is out of range: set {FASTEST_REFRESH_S:g} to {SLOWEST_REFRESH_S:g} s (a "
            f"watched page tells the server it watches at each refresh, at least every {SLOWEST_REFRESH_S:g} s)"
        )
    return tick


DEFAULT_MAX_EXPORT_MB = 200.0  # SCANSNAP_MAX_EXPORT_MB: the largest zip (its estimate) the dashboard builds


def max_export_bytes() -> int:
    """``SCANSNAP_MAX_EXPORT_MB`` in bytes: the dashboard builds no export whose estimated zip is larger (the
    command line's ``python -m scansnap export`` has no such limit)."""
    return int(env_number("SCANSNAP_MAX_EXPORT_MB", DEFAULT_MAX_EXPORT_MB, float) * 2**20)


def env_number(name: str, default: float, typ: type = float) -> Any:
    """The operator's variable ``name`` as a positive ``typ``, else ``default``; ValueError naming it when
    it is not one."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = typ(raw)
    except ValueError:
        raise ValueError(f"{name}={raw[:40]!r} is not a number: set a positive {typ.__name__}") from None
    if not value > 0:
        raise ValueError(f"{name}={raw[:40]!r} must be > 0")
    return value


def check_visitor_disk(lim: Limits, held: float, adds: float) -> None:
    """Refuse (RuntimeError, saying why) a visitor's work that would store ``adds`` bytes beside the
    ``held`` bytes their runs store or will store (live runs: their estimate's rest)."""
    if held + adds > lim.max_owner_disk_mb * 2**20:
        mb = 2**20
        raise RuntimeError(
            f"your runs store about {held / mb:,.0f} MB and this adds about {adds / mb:,.0f} MB, over the limit of "
            f"{lim.max_owner_disk_mb:,.0f} MB per visitor (SCANSNAP_MAX_OWNER_DISK_MB): delete runs you no longer "
            "need on the Runs page, or keep fewer snapshots"
        )


def check_visitor_run(lim: Limits, steps: int, seconds: float, queued: float) -> None:
    """Refuse (RuntimeError, saying why) a visitor's run of ``steps`` steps and an estimated ``seconds`` of
    slot time when the server already has ``queued`` slot-seconds queued or running."""
    if steps > lim.max_steps:
        raise RuntimeError(
            f"a run started from the dashboard may take at most {lim.max_steps:,} steps (SCANSNAP_MAX_STEPS); "
            f"this one asks for {steps:,}: use fewer steps"
        )
    if queued + seconds > lim.max_queue_s:
        raise RuntimeError(
            f"the server has about {queued / 60:.1f} min of training queued or running and this run adds "
            f"about {seconds / 60:.1f} min, over the limit of {lim.max_queue_s / 60:.1f} min "
            "(SCANSNAP_MAX_QUEUE_S): try a shorter run, or again when the queue has moved on"
        )
