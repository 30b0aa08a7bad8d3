"""How often the Lab's live area may refresh, given everyone else watching (no streamlit here).

Every session watching a live run re-runs its live area every ``tick`` seconds, and all of
them share one Python process (one GIL) with the web server's event loop (training runs in
worker processes).  With ``n`` sessions ticking and one tick costing ``c`` seconds of CPU, the live
areas take ``n·c/tick`` of a core.  :class:`TickBudget` keeps that under ``budget`` (a
fraction of one core) by stretching the tick: ``tick = max(base, n·c/budget)``, capped at
``max_tick``.  ``c`` is measured, not guessed: an exponential average of the ticks' own wall
time.  A session counts as watching while it has ticked within the last ``ttl`` seconds.

Measured here (bench/load_test.py): 20 students watching a broadcast at a fixed 0.5 s tick
kept the server busy (health checks up to 5 s); with the budget, ticks stretch instead.
"""

from __future__ import annotations

import threading
import time

from scansnap.service.facade import REFRESH_S, SLOWEST_REFRESH_S


class TickBudget:
    def __init__(
        self,
        base: float = REFRESH_S,  # the deployment's is SCANSNAP_TICK_S (scansnap/ui/live/frame.py)
        budget: float = 0.5,
        max_tick: float = SLOWEST_REFRESH_S,  # the idle pause counts on a watched page refreshing this often
        ttl: float = 6.0,
        first_cost: float = 0.05,
        clock: object = time.monotonic,
    ):
        self.base, self.budget, self.max_tick, self.ttl = base, budget, max_tick, ttl
        self.cost = first_cost  # seconds of CPU per tick (exponential moving average)
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def record(self, session: str, seconds: float) -> None:
        """Session ``session`` just ticked, which took ``seconds``."""
        with self._lock:
            self._seen[session] = self._clock()  # type: ignore[operator]
            self.cost = 0.8 * self.cost + 0.2 * max(0.0, seconds)

    def forget(self, session: str) -> None:
        with self._lock:
            self._seen.pop(session, None)

    def watching(self) -> int:
        """Sessions that ticked within the last ``ttl`` seconds (stale ones are dropped)."""
        now = self._clock()  # type: ignore[operator]
        with self._lock:
            for s in [s for s, t in self._seen.items() if now - t > self.ttl]:
                del self._seen[s]
            return len(self._seen)

    def tick(self, session: str | None = None) -> float:
        """The refresh interval now, counting ``session`` (the caller) as watching if it is not yet."""
        n = self.watching()
        with self._lock:
            n += session is not None and session not in self._seen
        return min(self.max_tick, max(self.base, n * self.cost / self.budget))

    def off_by(self, current: float, session: str | None = None) -> bool:
        """Whether a session ticking every ``current`` s should re-declare its interval: the
        budgeted tick differs from it by more than a factor 1.5."""
        want = self.tick(session)
        return want > 1.5 * current or want < current / 1.5
