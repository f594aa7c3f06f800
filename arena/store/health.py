"""The store's health (ok, degraded and why, or lease lost), its log lines and its listeners.

Two sources report to one ``HealthMonitor``: the group commit (``writes``) and
the node's heartbeat (``heartbeat``). The store is degraded while the latest
attempt of either failed, and ok again once both succeed. The log gets one
line per change of state and, while degraded, one summary line a minute;
never a traceback per retry (the first failure's traceback is logged at
DEBUG level for diagnosis).
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from arena.outages import SUMMARY_EVERY_S, Outage
from arena.outages import one_line as one_line  # the store's modules take it from here

log = logging.getLogger("arena.store")

WRITES = "writes"
"""The group commit's source name."""

HEARTBEAT = "heartbeat"
"""The node heartbeat's source name."""


class HealthState(enum.StrEnum):
    """What the store can promise right now."""

    OK = "ok"
    """Writes commit."""
    DEGRADED = "degraded"
    """Writes fail and are retried; match ends wait. Start no new matches."""
    LEASE_LOST = "lease_lost"
    """Another node took this node's lease over (final): stop serving."""


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """One state of the store: why it is not ok (empty when it is) and since when."""

    state: HealthState
    reason: str
    since: datetime
    """When this state began (aware UTC)."""

    @property
    def ok(self) -> bool:
        """True when writes commit."""
        return self.state is HealthState.OK


HealthListener = Callable[[StoreHealth], None]
"""Called on the store's event loop with the new health at every change of state."""


@dataclass(frozen=True, slots=True)
class Pending:
    """How many new matches, moves and match ends wait to be committed (or were)."""

    matches: int = 0
    moves: int = 0
    ends: int = 0

    def __add__(self, other: Pending) -> Pending:
        return Pending(
            self.matches + other.matches, self.moves + other.moves, self.ends + other.ends
        )

    def __str__(self) -> str:
        return (
            f"{_count(self.moves, 'move')}, {_count(self.matches, 'new match', 'new matches')}"
            f" and {_count(self.ends, 'match end')}"
        )


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


_REASONS = (
    (
        ("database or disk is full", "no space left", "could not extend file", "disk full"),
        "database or disk is full",
    ),
    (("readonly database", "read-only file system"), "database file is read-only"),
    (("database is locked",), "database is locked by another process"),
    (("disk i/o error",), "disk I/O error"),
    (("unable to open database file",), "cannot open the database file"),
    (("writer process",), "the database writer process failed"),
    (
        (
            "connection refused",
            "connection is closed",
            "connection was closed",
            "connection reset",
            "terminating connection",
            "the database system is",
            "could not connect",
            "connect call failed",
            "broken pipe",
            "unexpected connection_lost",
            "cannot connect",
        ),
        "database unreachable",
    ),
)


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and what it wraps: causes, contexts and a DBAPI error's ``orig``."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo:
        item = todo.pop()
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        orig = getattr(item, "orig", None)
        todo += [item.__cause__, item.__context__]
        todo += [orig] if isinstance(orig, BaseException) else []
    return seen


class DescribedFailure(Exception):
    """A database failure described where it happened (a helper process, by
    ``describe_failure``), raised again here with that description as its message."""


def describe_failure(error: BaseException) -> str:
    """A short human reason for a failed write, such as ``database or disk is full``."""
    if isinstance(error, DescribedFailure):
        return str(error)
    chain = _chain(error)
    text = " | ".join(str(item).lower() for item in chain)
    for needles, reason in _REASONS:
        if any(needle in text for needle in needles):
            return reason
    if any(isinstance(item, TimeoutError) for item in chain):  # an OSError too: first
        return "database not answering"
    if any(isinstance(item, OSError) for item in chain):
        return "database unreachable"
    return one_line(error)


def database_outage(log: logging.Logger, what: str, **options: Any) -> Outage:
    """An ``Outage`` of a background task that reads or writes the database: its lines
    give reasons such as ``database unreachable`` (``options``: ``Outage``'s)."""
    return Outage(log, what, describe=describe_failure, **options)


class _StoreOutage(Outage):
    """The store's outage: its lines say what waits to be written and what was."""

    def __init__(self, pending: Callable[[], Pending], **options: Any) -> None:
        super().__init__(log, "store", describe=describe_failure, **options)
        self._pending = pending
        self.written = Pending()

    def started(self, error: BaseException, source: str) -> None:
        self.written = Pending()
        self.log.error(
            "store degraded: %s; %s waiting, retried with backoff (the %s failed with %s)",
            self.reason,
            self._pending(),
            source,
            one_line(error),
        )

    def still(self, lasted: str, window: str) -> None:
        self.log.warning(
            "store still degraded after %s: %s; %d failed attempts in the last %s; %s waiting",
            lasted,
            self.reason,
            self.attempts_since_summary,
            window,
            self._pending(),
        )

    def ended(self, lasted: str) -> None:
        self.log.warning(
            "store recovered after %s and %d failed attempts: committed %s that were waiting",
            lasted,
            self.attempts,
            self.written,
        )


class HealthMonitor:
    """Tracks the sources' latest outcomes, logs the changes and tells the listeners."""

    def __init__(
        self,
        pending: Callable[[], Pending],
        *,
        summary_every_s: float = SUMMARY_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._outage = _StoreOutage(pending, summary_every_s=summary_every_s, clock=clock)
        self._failing: dict[str, BaseException] = {}
        self._health = StoreHealth(HealthState.OK, "", datetime.now(UTC))
        self._listeners: list[HealthListener] = []

    @property
    def health(self) -> StoreHealth:
        """The current state."""
        return self._health

    def subscribe(self, listener: HealthListener) -> Callable[[], None]:
        """Call ``listener`` at every change of state; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def failed(self, source: str, error: BaseException) -> None:
        """``source``'s latest attempt failed with ``error``."""
        if self._health.state is HealthState.LEASE_LOST:
            return
        self._failing[source] = error
        self._outage.failed(error, source)
        reason = self._outage.reason
        if self._health.state is HealthState.OK:
            self._change(HealthState.DEGRADED, reason)
        elif reason != self._health.reason:
            # The same state for another cause: the snapshot says the current one.
            self._health = StoreHealth(HealthState.DEGRADED, reason, self._health.since)

    def succeeded(self, source: str, written: Pending | None = None) -> None:
        """``source``'s latest attempt succeeded, committing ``written``."""
        self._failing.pop(source, None)
        if self._health.state is not HealthState.DEGRADED:
            return
        if written is not None:
            self._outage.written += written
        if self._failing:
            return
        self._outage.succeeded()
        self._change(HealthState.OK, "")

    def lease_lost(self, reason: str) -> None:
        """The node's lease is gone for good: log it once and tell the listeners."""
        if self._health.state is HealthState.LEASE_LOST:
            return
        log.critical("store lost its node lease: %s; this node must stop serving", reason)
        self._change(HealthState.LEASE_LOST, reason)

    def _change(self, state: HealthState, reason: str) -> None:
        self._health = StoreHealth(state, reason, datetime.now(UTC))
        for listener in list(self._listeners):
            try:
                listener(self._health)
            except Exception:
                log.exception("a store health listener failed")
