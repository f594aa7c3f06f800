"""Abuse limits at the door: a message rate per connection, failed logins per address.

``TokenBucket`` limits a connection's incoming message rate on the injected
clock. It is there against floods: the server refunds the token of a move
that answers the bot's current turn, since the server's own pace bounds
those, and scales a bot's bucket by its ``max_matches``.

``AddressBuckets`` is a ``TokenBucket`` per remote address, for what an
address may do however many connections it opens (guests starting games).

``LoginThrottle`` slows down token guessing. Each failed login is counted
against the remote address; past ``free_failures`` failures within
``window_s`` seconds, the address must wait before its next hello is even
checked: ``base_delay_s`` doubled for every further failure, up to
``max_delay_s``. A hello that arrives during the wait is refused with
``throttled`` and its connection closed, without looking at the token. A
successful login clears the address's record.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field

from arena.play.clock import Clock


class TokenBucket:
    """Allows ``rate`` events per second on average and ``burst`` at once."""

    def __init__(self, rate: float, burst: int, clock: Clock) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._last = clock.now()

    def scale(self, factor: int) -> None:
        """Multiply rate and burst by ``factor`` (a bot's ``max_matches``), keeping the tokens."""
        self._tokens += self._burst * (factor - 1)
        self._rate *= factor
        self._burst *= factor

    def refund(self) -> None:
        """Give back the token of an event that turned out not to count."""
        tokens = self._tokens + 1.0
        self._tokens = tokens if tokens < self._burst else self._burst

    def take(self) -> bool:
        """Spend one token; False when the bucket is empty (the event should be refused)."""
        now = self._clock.now()
        tokens = self._tokens + (now - self._last) * self._rate
        # A comparison, not min(): this runs for every message.
        self._tokens = tokens if tokens < self._burst else self._burst
        self._last = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True


class AddressBuckets:
    """A ``TokenBucket`` per remote address (the ``max_addresses`` most recently used)."""

    def __init__(
        self, rate: float, burst: int, clock: Clock, *, max_addresses: int = 10_000
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._max_addresses = max_addresses
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def take(self, address: str) -> bool:
        """Spend one of ``address``'s tokens; False when it has none left."""
        bucket = self._buckets.pop(address, None) or TokenBucket(
            self.rate, self.burst, self._clock
        )
        self._buckets[address] = bucket  # most recently used last
        while len(self._buckets) > self._max_addresses:
            self._buckets.popitem(last=False)
        return bucket.take()

    def wait_s(self) -> float:
        """How long an address that ran out waits for its next token, at most."""
        return 1.0 / self.rate if self.rate > 0 else float("inf")


FREE_FAILURES = 5
"""Failed logins per address per window before the throttle applies."""
FAILURE_WINDOW_S = 60.0
BASE_DELAY_S = 1.0
MAX_DELAY_S = 300.0
MAX_ADDRESSES = 10_000
"""Addresses remembered at most (the least recently failed are forgotten first)."""


@dataclass(slots=True)
class _Record:
    failures: deque[float] = field(default_factory=deque)
    blocked_until: float = 0.0


class LoginThrottle:
    """Failed logins per remote address, and how long each must wait; see the module docstring."""

    def __init__(
        self,
        clock: Clock,
        *,
        free_failures: int = FREE_FAILURES,
        window_s: float = FAILURE_WINDOW_S,
        base_delay_s: float = BASE_DELAY_S,
        max_delay_s: float = MAX_DELAY_S,
        max_addresses: int = MAX_ADDRESSES,
    ) -> None:
        self._clock = clock
        self.free_failures = free_failures
        self.window_s = window_s
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self._max_addresses = max_addresses
        self._records: OrderedDict[str, _Record] = OrderedDict()
        self.failed_total = 0
        """Every failed login since start (for metrics)."""
        self.throttled_total = 0
        """Every hello refused unchecked because its address had to wait."""

    def wait_s(self, address: str) -> float:
        """How long ``address`` must still wait before a hello is checked (0: go ahead)."""
        record = self._records.get(address)
        if record is None:
            return 0.0
        left = record.blocked_until - self._clock.now()
        return left if left > 0.0 else 0.0

    def refused(self, address: str) -> None:
        """Count a hello refused unchecked because ``address`` had to wait."""
        self.throttled_total += 1

    def failed(self, address: str) -> float:
        """Count a failed login from ``address``; returns the wait now imposed on it (0: none)."""
        self.failed_total += 1
        now = self._clock.now()
        record = self._records.pop(address, None) or _Record()
        self._records[address] = record  # most recently failed last
        while len(self._records) > self._max_addresses:
            self._records.popitem(last=False)
        failures = record.failures
        failures.append(now)
        while failures and failures[0] < now - self.window_s:
            failures.popleft()
        over = len(failures) - self.free_failures
        if over <= 0:
            return 0.0
        delay = self.base_delay_s * 2.0 ** min(over - 1, 32)
        delay = delay if delay < self.max_delay_s else self.max_delay_s
        record.blocked_until = now + delay
        return delay

    def succeeded(self, address: str) -> None:
        """A login from ``address`` succeeded: forget its failures."""
        self._records.pop(address, None)
