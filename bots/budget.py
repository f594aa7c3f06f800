"""The time one move may take: a ``Budget`` handed to ``Strategy.choose_move``.

A strategy gets the clock the server gave this move (``your_turn``'s
``time_left_ms`` and ``bank_ms``), the round trip the client measured, and a
``deadline`` on ``time.monotonic()`` that already leaves the safety margin::

    spend    = (time_left_ms - bank_ms) + BANK_SHARE * bank_ms
    margin   = max(MARGIN_MS, LAG_FACTOR * lag) + MARGIN_FRACTION * spend
               + uncredited round trip
    think    = max(0, spend - margin)
    deadline = (when your_turn arrived) + think

``spend`` is the per-move limit plus a tenth of what is left of the bank,
so the bank shrinks geometrically and is never planned away. The margin
covers what happens outside the search: the hand-off to the search workers,
merging their results, sending the move, and schedulers that are late on a
busy machine (the bot's and the server's). ``lag`` is how much of its
margin the server's clock actually took on this bot's recent moves
(``LagMeter``, the second worst of the last 20, so one hiccup does not
starve the next twenty searches): on a loaded machine the margin grows to
one and a half times that. The server credits the network round trip back (the
smallest one it measured lately, at most ``RTT_CREDIT_CAP_MS``), so only
what this move's trip may take beyond that credit is subtracted: the latest
round trip minus the smallest this connection has seen, plus anything above
the cap.

A strategy stops at the deadline even when its own budget (``time_ms``,
``sims``) would go on: ``budget.cap_s(configured_s)`` is the time to search.
``expires`` is the last moment to send a move at all (the whole time left,
less the uncredited round trip and ``SEND_MS``): a client that has no move
from its search by then sends a fallback move rather than lose on time.
``Budget.UNLIMITED`` (no clock) is what offline play without a time control
passes.
"""

from __future__ import annotations

import time
from collections import deque
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

SEND_MS = 20.0
"""What ``expires`` keeps back for sending the move and the server reading it."""

LAG_FACTOR = 1.5
"""How far the fixed margin grows beyond the worst lag seen lately."""

LAG_WINDOW = 20
"""How many of this bot's last moves the lag is taken over."""


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
    lag_ms: float = 0.0,
) -> float:
    """How long a strategy may search for a move given this clock (the module's formula)."""
    per_move = max(0.0, time_left_ms - bank_ms)
    spend = per_move + BANK_SHARE * max(0.0, bank_ms)
    fixed = max(margin_ms, LAG_FACTOR * lag_ms)
    margin = fixed + MARGIN_FRACTION * spend + uncredited_rtt_ms(rtt_ms, rtt_floor_ms)
    return max(0.0, spend - margin)


def rtt_credit_ms(rtt_floor_ms: float | None) -> float:
    """About what the server credits back for a move: its round-trip floor, capped."""
    return 0.0 if rtt_floor_ms is None else min(rtt_floor_ms, RTT_CREDIT_CAP_MS)


class LagMeter:
    """How much of its margin the server's clock took on this bot's last moves.

    For each move the client notes what the server should charge (the planned
    search plus the round trip it credits); when the server reports the move
    (``moved.think_ms``, measured before the credit), the excess is one
    sample of what the hand-off, the network and both machines' schedulers
    added. ``lag_ms`` is the second largest of the last ``window`` samples:
    a lag that keeps coming back counts, a single hiccup does not.
    """

    def __init__(self, window: int = LAG_WINDOW) -> None:
        self._expected: dict[str, tuple[int, float]] = {}
        self._samples: deque[float] = deque(maxlen=window)

    @property
    def lag_ms(self) -> float:
        """The second worst recent lag (0 before two samples)."""
        worst = sorted(self._samples)[-2:]
        return worst[0] if len(worst) == 2 else 0.0

    def planned(self, match_id: str, ply: int, planned_ms: float, credit_ms: float) -> None:
        """A search of ``planned_ms`` starts for ``ply`` of ``match_id``."""
        self._expected[match_id] = (ply, planned_ms + credit_ms)

    def charged(self, match_id: str, ply: int, measured_ms: float) -> None:
        """The server measured ``measured_ms`` for this bot's move at ``ply``."""
        expected = self._expected.get(match_id)
        if expected is not None and expected[0] == ply:
            del self._expected[match_id]
            self._samples.append(max(0.0, measured_ms - expected[1]))

    def forget(self, match_id: str | None = None) -> None:
        """Drop the pending move of ``match_id`` (of every match when None)."""
        if match_id is None:
            self._expected.clear()
        else:
            self._expected.pop(match_id, None)


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
    planned_ms: float | None = None
    """The search time from the turn's arrival to ``deadline`` (None: no clock)."""
    expires: float | None = None
    """The last moment (``time.monotonic()``) a move can be sent and still count."""

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
        lag_ms: float = 0.0,
    ) -> Budget:
        """The budget of a ``your_turn`` that arrived at ``received`` (``time.monotonic()``)."""
        think = think_ms(time_left_ms, bank_ms, rtt_ms, rtt_floor_ms, margin_ms, lag_ms)
        last_ms = max(think, time_left_ms - uncredited_rtt_ms(rtt_ms, rtt_floor_ms) - SEND_MS)
        return cls(
            received + think / 1000.0, time_left_ms, bank_ms, rtt_ms, think,
            received + last_ms / 1000.0,
        )

    @classmethod
    def seconds(cls, seconds: float, now: float | None = None) -> Budget:
        """A plain deadline ``seconds`` from ``now`` (default: this instant), no clock fields."""
        start = time.monotonic() if now is None else now
        return cls(start + seconds, planned_ms=max(0.0, seconds * 1000.0))

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
