"""The time one move may take: a ``Budget`` handed to ``Strategy.choose_move``.

A strategy gets the clock the server gave this move (``your_turn``'s
``time_left_ms`` and ``bank_ms``), the round trip the client measured, and a
``deadline`` on ``time.monotonic()`` that already leaves the safety margin::

    spend    = (time_left_ms - bank_ms) + BANK_SHARE * bank_ms
    margin   = MARGIN_MS + MARGIN_FRACTION * spend + uncredited round trip
    think    = max(0, spend - margin)
    deadline = (when your_turn arrived) + think

``spend_ms`` is the per-move limit plus a tenth of what is left of the bank,
so the bank shrinks geometrically and is never planned away. The margin
covers what happens outside the search: the hand-off to the search workers,
merging their results, sending the move, and a scheduler that is late on a
busy machine. The server credits the network round trip back (the smallest
one it measured lately, at most ``RTT_CREDIT_CAP_MS``), so only what this
move's trip may take beyond that credit is subtracted: the latest round trip
minus the smallest this connection has seen, plus anything above the cap.

A strategy stops at the deadline even when its own budget (``time_ms``,
``sims``) would go on: ``budget.cap_s(configured_s)`` is the time to search.
``Budget.UNLIMITED`` (no clock) is what offline play without a time control
passes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

MARGIN_MS = 30.0
"""The fixed part of the safety margin (``arena-bot --margin-ms``)."""

MARGIN_FRACTION = 0.10
"""The part of the safety margin that grows with the time planned for the move."""

BANK_SHARE = 0.10
"""The share of the remaining bank one move may plan to spend."""

RTT_CREDIT_CAP_MS = 1000.0
"""The most round trip the server credits back per move (see docs/protocol.md)."""


def uncredited_rtt_ms(rtt_ms: float, rtt_floor_ms: float | None) -> float:
    """What this move's network round trip may cost beyond the server's credit.

    The server credits about the smallest round trip it measured, capped at
    ``RTT_CREDIT_CAP_MS``; this move's trip is expected to take ``rtt_ms`` (the
    latest measurement). ``rtt_floor_ms`` None: no measurement yet.
    """
    floor = rtt_ms if rtt_floor_ms is None else min(rtt_floor_ms, rtt_ms)
    return max(0.0, rtt_ms - min(floor, RTT_CREDIT_CAP_MS))


def think_ms(
    time_left_ms: float,
    bank_ms: float,
    rtt_ms: float = 0.0,
    rtt_floor_ms: float | None = None,
    margin_ms: float = MARGIN_MS,
) -> float:
    """How long a strategy may search for a move given this clock (the module's formula)."""
    per_move = max(0.0, time_left_ms - bank_ms)
    spend = per_move + BANK_SHARE * max(0.0, bank_ms)
    margin = margin_ms + MARGIN_FRACTION * spend + uncredited_rtt_ms(rtt_ms, rtt_floor_ms)
    return max(0.0, spend - margin)


@dataclass(frozen=True, slots=True)
class Budget:
    """The time one move may take; see the module docstring for the arithmetic.

    ``deadline`` is on ``time.monotonic()`` (None: no clock). The clock fields
    are what the server sent, for strategies that plan further ahead (all
    None/0 when there is no clock).
    """

    deadline: float | None = None
    time_left_ms: float | None = None
    """``your_turn.time_left_ms``: the most this move may take, per-move limit plus bank."""
    bank_ms: float = 0.0
    """``your_turn.bank_ms``: the bank part of ``time_left_ms``."""
    rtt_ms: float = 0.0
    """The network round trip the client measured last (0 before any measurement)."""

    UNLIMITED: ClassVar[Budget]

    @classmethod
    def for_turn(
        cls,
        time_left_ms: float,
        bank_ms: float,
        received: float,
        rtt_ms: float = 0.0,
        rtt_floor_ms: float | None = None,
        margin_ms: float = MARGIN_MS,
    ) -> Budget:
        """The budget of a ``your_turn`` that arrived at ``received`` (``time.monotonic()``)."""
        think = think_ms(time_left_ms, bank_ms, rtt_ms, rtt_floor_ms, margin_ms)
        return cls(received + think / 1000.0, time_left_ms, bank_ms, rtt_ms)

    @classmethod
    def seconds(cls, seconds: float, now: float | None = None) -> Budget:
        """A plain deadline ``seconds`` from ``now`` (default: this instant), no clock fields."""
        return cls((time.monotonic() if now is None else now) + seconds)

    @property
    def limited(self) -> bool:
        """Whether there is a deadline at all."""
        return self.deadline is not None

    def remaining_s(self, now: float | None = None) -> float | None:
        """Seconds left until the deadline (never negative), None without a clock."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - (time.monotonic() if now is None else now))

    def cap_s(self, configured_s: float | None, now: float | None = None) -> float | None:
        """The time to search: the strategy's own limit, cut to what is left (None: neither)."""
        remaining = self.remaining_s(now)
        if remaining is None:
            return configured_s
        return remaining if configured_s is None else min(configured_s, remaining)


Budget.UNLIMITED = Budget()
