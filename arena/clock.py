"""Time for the referee: an injectable ``Clock`` and the per-match time-control arithmetic.

The match runner never calls ``time`` or ``asyncio.sleep`` itself. It reads
``clock.now()`` to measure think time and wraps every wait in
``clock.timeout(delay)``. ``MonotonicClock`` is the real thing
(``asyncio.timeout``); ``ManualClock`` is driven by tests with ``advance()``,
so timeouts fire without any sleeping.

``GameClock`` is the pure Kaggle-style overage rule: each move may take
``move_ms``; time beyond that comes out of a per-player bank; the measured
network round trip (capped) is credited back so a distant bot is not
flagged for latency it does not control.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

MAX_RTT_ALLOWANCE_MS = 1000.0
"""The most network round trip credited back per move, so a bot cannot buy time by lagging."""


class Clock(Protocol):
    """Monotonic time in seconds plus a timeout scope measured on the same time line."""

    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful."""
        ...

    def timeout(self, delay: float) -> asyncio.Timeout | _ManualTimeout:
        """An async context manager raising ``TimeoutError`` once ``delay`` seconds pass."""
        ...


class MonotonicClock:
    """The real clock: ``time.monotonic`` and ``asyncio.timeout``."""

    now = staticmethod(time.monotonic)
    """Seconds from ``time.monotonic`` (the function itself: read several times a move)."""

    def timeout(self, delay: float) -> asyncio.Timeout:
        """``asyncio.timeout(delay)``; a negative delay expires at once."""
        return asyncio.timeout(max(0.0, delay))


class _ManualTimeout:
    """A real ``asyncio.timeout`` scope whose expiry is triggered by ``ManualClock.advance``."""

    def __init__(self, clock: ManualClock, deadline: float) -> None:
        self._clock = clock
        self.deadline = deadline
        self._inner = asyncio.timeout(None)

    async def __aenter__(self) -> _ManualTimeout:
        await self._inner.__aenter__()
        self._clock._pending.add(self)
        if self.deadline <= self._clock.now():
            self.expire()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._clock._pending.discard(self)
        await self._inner.__aexit__(exc_type, exc, tb)

    def expire(self) -> None:
        """Make the scope time out at the next turn of the event loop."""
        self._inner.reschedule(asyncio.get_running_loop().time())


class ManualClock:
    """A test clock: time stands still until ``advance`` moves it; due timeouts then fire."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._pending: set[_ManualTimeout] = set()

    def now(self) -> float:
        """The current manual time in seconds."""
        return self._now

    def timeout(self, delay: float) -> _ManualTimeout:
        """A timeout scope that expires when manual time reaches now + ``delay``."""
        return _ManualTimeout(self, self._now + delay)

    def advance(self, seconds: float) -> None:
        """Move time forward and expire every scope whose deadline has passed."""
        self._now += seconds
        for scope in list(self._pending):
            if scope.deadline <= self._now:
                self._pending.discard(scope)
                scope.expire()

    @property
    def waiting(self) -> int:
        """How many timeout scopes are currently open (tests use it to know the runner waits)."""
        return len(self._pending)


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
