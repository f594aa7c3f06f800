"""The health monitor on its own: states, the log's lines and their rhythm, failure reasons.

The clock is injected so a minute of failures takes no time; the store-level
behaviour is tested on a real full disk (test_store_outage) and a real
PostgreSQL outage (test_store_pg_outage).
"""

from __future__ import annotations

import logging
import sqlite3

import pytest
from sqlalchemy.exc import OperationalError

from arena.errors import StoreError
from arena.store.health import (
    HEARTBEAT,
    WRITES,
    HealthMonitor,
    HealthState,
    Pending,
    StoreHealth,
    describe_failure,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def disk_full() -> OperationalError:
    return OperationalError("INSERT ...", {}, sqlite3.OperationalError("database or disk is full"))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def monitor(clock: Clock) -> HealthMonitor:
    return HealthMonitor(lambda: Pending(1, 120, 2), clock=clock)


def test_one_line_per_change_and_one_summary_a_minute(
    monitor: HealthMonitor, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="arena.store")
    seen: list[StoreHealth] = []
    monitor.subscribe(seen.append)
    for _ in range(250):  # a failed attempt every half second for 125 s
        monitor.failed(WRITES, disk_full())
        clock.now += 0.5
    monitor.succeeded(WRITES, Pending(1, 120, 2))
    assert caplog.messages == [
        "store degraded: database or disk is full; 120 moves, 1 new match and 2 match ends"
        " waiting, retried with backoff (the writes failed with OperationalError:"
        " (sqlite3.OperationalError) database or disk is full)",
        "store still degraded after 1 min 0 s: database or disk is full; 121 failed attempts"
        " in the last 1 min 0 s; 120 moves, 1 new match and 2 match ends waiting",
        "store still degraded after 2 min 0 s: database or disk is full; 120 failed attempts"
        " in the last 1 min 0 s; 120 moves, 1 new match and 2 match ends waiting",
        "store recovered after 2 min 5 s and 250 failed attempts: committed 120 moves,"
        " 1 new match and 2 match ends that were waiting",
    ]
    assert [h.state for h in seen] == [HealthState.DEGRADED, HealthState.OK]
    assert all(r.exc_info is None for r in caplog.records)


def test_writes_and_heartbeat_must_both_succeed_again(monitor: HealthMonitor) -> None:
    monitor.failed(WRITES, disk_full())
    monitor.failed(HEARTBEAT, ConnectionRefusedError(111, "Connection refused"))
    assert monitor.health.reason == "database unreachable"  # the latest cause
    monitor.succeeded(WRITES, Pending(0, 3, 0))
    assert monitor.health.state is HealthState.DEGRADED
    monitor.succeeded(HEARTBEAT)
    assert monitor.health.ok and monitor.health.reason == ""


def test_a_lost_lease_is_final(monitor: HealthMonitor) -> None:
    monitor.failed(WRITES, disk_full())
    monitor.lease_lost("node n1 is no longer registered")
    monitor.succeeded(WRITES)
    monitor.failed(HEARTBEAT, disk_full())
    assert monitor.health.state is HealthState.LEASE_LOST
    assert monitor.health.reason == "node n1 is no longer registered"


def test_a_failing_listener_does_not_stop_the_others(
    monitor: HealthMonitor, caplog: pytest.LogCaptureFixture
) -> None:
    told: list[HealthState] = []

    def broken(_health: StoreHealth) -> None:
        raise RuntimeError("listener bug")

    monitor.subscribe(broken)
    unsubscribe = monitor.subscribe(lambda health: told.append(health.state))
    monitor.failed(WRITES, disk_full())
    unsubscribe()
    monitor.succeeded(WRITES)
    assert told == [HealthState.DEGRADED]
    assert "a store health listener failed" in caplog.messages


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (disk_full(), "database or disk is full"),
        (
            StoreError("writing a batch failed: OperationalError: database or disk is full"),
            "database or disk is full",
        ),
        (
            sqlite3.OperationalError("attempt to write a readonly database"),
            "database file is read-only",
        ),
        (sqlite3.OperationalError("database is locked"), "database is locked by another process"),
        (sqlite3.OperationalError("disk I/O error"), "disk I/O error"),
        (
            StoreError("the database writer process failed: EOFError"),
            "the database writer process failed",
        ),
        (ConnectionRefusedError(111, "Connect call failed"), "database unreachable"),
        (OSError(113, "No route to host"), "database unreachable"),
        (TimeoutError(), "database not answering"),
        (ValueError("something else\nentirely"), "ValueError: something else"),
    ],
)
def test_failure_reasons(error: BaseException, reason: str) -> None:
    assert describe_failure(error) == reason
