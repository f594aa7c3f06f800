"""Time for the referee: an injectable ``Clock`` and the per-match time-control arithmetic.

Nothing in a match reads the time or sleeps by itself. The match shell
reads ``clock.now()`` for every input it hands the referee and asks
``clock.call_at(when, callback)`` to be woken at the referee's next
deadline. ``MonotonicClock`` is the real thing (the running event loop's
timers); ``ManualClock`` is driven by tests with ``advance()``, so deadlines
pass without any sleeping.

``GameClock`` is the pure Kaggle-style overage rule: each move may take
``move_ms``; time beyond that comes out of a per-player bank; the measured
network round trip (capped) is credited back so a distant bot is not
flagged for latency it does not control.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

MAX_RTT_ALLOWANCE_MS = 1000.0
"""The most network round trip credited back per move, so a bot cannot buy time by lagging."""


class TimerHandle(Protocol):
    """A scheduled callback that can be cancelled (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> None:
        """Do not run the callback (no effect once it has run)."""
        ...


class Clock(Protocol):
    """Monotonic time in seconds, and callbacks at given times on the same time line."""

    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback`` once ``now()`` reaches ``when`` (at once if it already has)."""
        ...


class MonotonicClock:
    """The real clock: ``time.monotonic`` and the running event loop's timers."""

    now = staticmethod(time.monotonic)
    """Seconds from ``time.monotonic`` (the function itself: read several times a move)."""

    def call_at(self, when: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        """Schedule ``callback`` on the running loop ``when - now()`` seconds from now."""
        return asyncio.get_running_loop().call_later(when - time.monotonic(), callback)


class _ManualTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A test clock: time stands still until ``advance`` moves it; due callbacks then run."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _ManualTimer]] = []
        self._order = itertools.count()

    def now(self) -> float:
        """The current manual time in seconds."""
        return self._now

    def call_at(self, when: float, callback: Callable[[], None]) -> _ManualTimer:
        """Run ``callback`` when ``advance`` reaches ``when``."""
        timer = _ManualTimer(when, callback)
        heapq.heappush(self._timers, (when, next(self._order), timer))
        return timer

    def advance(self, seconds: float) -> None:
        """Move time forward, running every due callback in order, each at its own time."""
        target = self._now + seconds
        while self._timers and self._timers[0][0] <= target:
            when, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, when)
            timer.callback()
        self._now = target

    def hold(self, seconds: float) -> None:
        """Move time forward without running what falls due meanwhile, as a callback that
        keeps an event loop busy would: those callbacks run late, at the next ``advance``."""
        self._now += seconds

    @property
    def waiting(self) -> int:
        """How many callbacks are scheduled and not cancelled."""
        return sum(1 for _, _, timer in self._timers if not timer.cancelled)


def rtt_allowance_ms(rtt_ms: float) -> float:
    """The part of a measured round trip credited back to the mover (capped)."""
    # Comparisons, not min()/max(): this runs twice per move, and the builtins cost
    # several times as much for two arguments.
    if rtt_ms > MAX_RTT_ALLOWANCE_MS:
        return MAX_RTT_ALLOWANCE_MS
    return rtt_ms if rtt_ms > 0.0 else 0.0


Snapshot = tuple[tuple[int, int], tuple[int, int]]
"""``(time_left_ms, bank_ms)`` per player, rounded for the wire."""


@dataclass
class GameClock:
    """Both players' banks under one ``move_ms`` per-move limit (Kaggle overage rules).

    The banks change only through ``charge``.
    """

    move_ms: int
    banks_ms: list[float]
    _snapshot: Snapshot | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def start(cls, move_ms: int, bank_ms: int) -> GameClock:
        """A fresh clock: each player starts with the full bank."""
        return cls(move_ms, [float(bank_ms), float(bank_ms)])

    def time_left_ms(self, player: int) -> float:
        """What ``player`` may spend on its next move, not counting the round-trip credit."""
        return self.move_ms + self.banks_ms[player]

    def allowance_ms(self, player: int, rtt_ms: float) -> float:
        """The hard limit for ``player``'s move measured at the server: time left + rtt credit."""
        return self.time_left_ms(player) + rtt_allowance_ms(rtt_ms)

    def fits(self, player: int, think_ms: float, rtt_ms: float) -> bool:
        """True when a move that took ``think_ms`` at the server is in time (nothing charged)."""
        return self._overage(think_ms, rtt_ms) <= self.banks_ms[player]

    def charge(self, player: int, think_ms: float, rtt_ms: float) -> bool:
        """Charge a move that took ``think_ms`` at the server; False when it overran (flag fell)."""
        overage = self._overage(think_ms, rtt_ms)
        if overage > self.banks_ms[player]:
            return False
        if overage:
            self.banks_ms[player] -= overage
            self._snapshot = None
        return True

    def _overage(self, think_ms: float, rtt_ms: float) -> float:
        over = think_ms - rtt_allowance_ms(rtt_ms) - self.move_ms
        return over if over > 0.0 else 0.0

    def snapshot(self) -> Snapshot:
        """``(time_left_ms, bank_ms)`` per player, rounded for the wire.

        The same object until a bank changes: most moves use no bank, and a
        ``moved`` per move asks.
        """
        if self._snapshot is None:
            left = (round(self.time_left_ms(0)), round(self.time_left_ms(1)))
            banks = (round(self.banks_ms[0]), round(self.banks_ms[1]))
            self._snapshot = (left, banks)
        return self._snapshot
