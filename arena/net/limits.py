"""Abuse limits at the door: a message rate per connection, failed logins per address.

``TokenBucket`` limits a connection's incoming message rate on the injected
clock. It is there against floods: the server refunds the token of a move
that answers the bot's current turn, since the server's own pace bounds
those, and scales a bot's bucket by its ``max_matches``.

``AddressBuckets`` is a ``TokenBucket`` per remote address, for what an
address may do however many connections it opens (guests starting games).

``LoginThrottle`` slows down token guessing. Each failed login is counted
twice: against the remote address and against the bot name tried. Past
``free_failures`` failures of one of them within ``window_s`` seconds, it
must wait before its next hello is even checked: ``base_delay_s`` doubled
for every further failure, up to ``max_delay_s``. A hello that arrives
while its address or its bot name must wait is refused with ``throttled``
and its connection closed, without looking at the token; so guesses spread
over many addresses meet the name's wait, and guesses at many names from one
address meet the address's. Two exceptions keep an attack from locking out
the bot it aims at: a bot that last logged in from this very address is
checked despite either wait (a bot sharing the attacker's address, or one
whose name is under attack from elsewhere, still logs in); only the
failures of that name from that address (a third count, the pair) can make
it wait. A successful login clears only its own name's and pair's failures,
never the address's (an attacker's own valid logins do not reset its
address).
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
        bucket = self._buckets.pop(address, None) or TokenBucket(self.rate, self.burst, self._clock)
        self._buckets[address] = bucket  # most recently used last
        while len(self._buckets) > self._max_addresses:
            self._buckets.popitem(last=False)
        return bucket.take()

    def wait_s(self) -> float:
        """How long an address that ran out waits for its next token, at most."""
        return 1.0 / self.rate if self.rate > 0 else float("inf")


FREE_FAILURES = 5
"""Failed logins per address, and per bot name, per window before the throttle applies."""
FAILURE_WINDOW_S = 60.0
BASE_DELAY_S = 1.0
MAX_DELAY_S = 300.0
MAX_KEYS = 10_000
"""Addresses and names remembered at most, each (the least recently failed are forgotten)."""


@dataclass(slots=True)
class _Record:
    failures: deque[float] = field(default_factory=deque)
    blocked_until: float = 0.0


class _Failures:
    """Failed logins by one kind of key (addresses, or bot names)."""

    def __init__(self, max_keys: int) -> None:
        self._max_keys = max_keys
        self._records: OrderedDict[str, _Record] = OrderedDict()

    def wait_s(self, key: str, now: float) -> float:
        record = self._records.get(key)
        if record is None:
            return 0.0
        left = record.blocked_until - now
        return left if left > 0.0 else 0.0

    def failed(self, key: str, now: float, throttle: LoginThrottle) -> float:
        record = self._records.pop(key, None) or _Record()
        self._records[key] = record  # most recently failed last
        while len(self._records) > self._max_keys:
            self._records.popitem(last=False)
        failures = record.failures
        failures.append(now)
        while failures and failures[0] < now - throttle.window_s:
            failures.popleft()
        over = len(failures) - throttle.free_failures
        if over <= 0:
            return 0.0
        delay = throttle.base_delay_s * 2.0 ** min(over - 1, 32)
        delay = delay if delay < throttle.max_delay_s else throttle.max_delay_s
        record.blocked_until = now + delay
        return delay

    def forget(self, key: str) -> None:
        self._records.pop(key, None)


class LoginThrottle:
    """Failed logins per remote address and per bot name; see the module docstring."""

    def __init__(
        self,
        clock: Clock,
        *,
        free_failures: int = FREE_FAILURES,
        window_s: float = FAILURE_WINDOW_S,
        base_delay_s: float = BASE_DELAY_S,
        max_delay_s: float = MAX_DELAY_S,
        max_keys: int = MAX_KEYS,
    ) -> None:
        self._clock = clock
        self.free_failures = free_failures
        self.window_s = window_s
        self.base_delay_s = base_delay_s
        self.max_delay_s = max_delay_s
        self._max_keys = max_keys
        self._addresses = _Failures(max_keys)
        self._names = _Failures(max_keys)
        self._pairs = _Failures(max_keys)
        self._home: OrderedDict[str, str] = OrderedDict()
        """The address each bot last logged in from (the most recent ``max_keys``)."""
        self.failed_total = 0
        """Every failed login since start (for metrics)."""
        self.throttled_total = 0
        """Every hello refused unchecked because its address or bot name had to wait."""

    def wait_s(self, address: str, name: str) -> float:
        """How long a hello for ``name`` from ``address`` must still wait (0: check it now)."""
        now = self._clock.now()
        pair = self._pairs.wait_s(f"{name} {address}", now)
        if self._home.get(name) == address:
            return pair
        return max(pair, self._addresses.wait_s(address, now), self._names.wait_s(name, now))

    def refused(self) -> None:
        """Count a hello refused unchecked because it had to wait."""
        self.throttled_total += 1

    def failed(self, address: str, name: str) -> float:
        """Count a failed login for ``name`` from ``address``; the wait now imposed (0: none)."""
        self.failed_total += 1
        now = self._clock.now()
        return max(
            self._addresses.failed(address, now, self),
            self._names.failed(name, now, self),
            self._pairs.failed(f"{name} {address}", now, self),
        )

    def succeeded(self, address: str, name: str) -> None:
        """``name`` logged in from ``address``: forget the name's failures, remember its home."""
        self._names.forget(name)
        self._pairs.forget(f"{name} {address}")
        self._home.pop(name, None)
        self._home[name] = address
        while len(self._home) > self._max_keys:
            self._home.popitem(last=False)
