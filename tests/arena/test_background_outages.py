"""A database outage as every background task of a real node logs it: quietly.

A real ``arena serve`` node (several-node mode on PostgreSQL, so the cluster's
queue, sweeps and listening connection run beside the tournament scheduler and
the leaderboard) reaches PostgreSQL through a TCP relay the test owns. Cutting
the relay is an outage; the test counts what the node logged over it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cluster_process import Node
from sqlalchemy.engine import make_url
from test_store_pg_outage import Relay
from test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)

from arena.cluster.broker_feed import BrokerFeed
from arena.live.mqtt import MqttPublisher
from arena.outages import Outage

OUTAGE_S = 7.0
"""Long enough for the scheduler's refresh (every 2 s) and the queue's passes to retry."""

LINE = re.compile(r"^\S+ \S+ (?P<level>[A-Z]+) (?P<logger>[\w.]+): ", re.MULTILINE)
STARTS = re.compile(r"^.* failed: .*; retrying with backoff$", re.MULTILINE)
ENDS = re.compile(r"^.* works again after .* failed attempts$", re.MULTILINE)


@pytest.fixture
def db(pg_url: str) -> str:  # noqa: F811
    reset(pg_url)
    return pg_url


@pytest.fixture
async def relay(db: str) -> AsyncIterator[Relay]:
    parsed = make_url(db)
    opened = Relay(parsed.host or "127.0.0.1", parsed.port or 5432)
    await opened.start()
    yield opened
    await opened.cut()


async def _until(check: object, timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not await check():  # type: ignore[operator]
            await asyncio.sleep(0.1)


async def test_a_database_outage_is_a_few_lines_from_every_task(
    db: str,
    relay: Relay,
    tmp_path: Path,
) -> None:
    url = make_url(db).set(port=relay.port).render_as_string(hide_password=False)
    node = Node(tmp_path, url, "quiet")
    async with node:
        before = len(node.log())
        await relay.cut()
        await asyncio.sleep(OUTAGE_S)
        await relay.start()

        async def healthy() -> bool:
            try:
                return (await node.health())["status"] == "ok"
            except OSError:
                return False

        await _until(healthy)

        async def every_task_says_so() -> bool:
            # The tasks' next attempts succeed and say so: the cluster channel's may come
            # RECONNECT_MAX_S (5 s) after the others.
            during = node.log()[before:]
            return len(STARTS.findall(during)) == len(ENDS.findall(during))

        await _until(every_task_says_so)
        during = node.log()[before:]
    assert "Traceback" not in during, during
    lines = Counter(m["logger"] for m in LINE.finditer(during))
    # Per task one line when the outage starts and one when it ends (a 7 s outage has no
    # minute's summary); before, the scheduler alone logged a traceback every 2 s.
    assert lines["arena.tournaments.scheduler"] == 2, during
    assert lines["arena.store"] == 2, during
    assert all(n <= 2 for n in lines.values()), (lines, during)
    assert len(STARTS.findall(during)) == len(ENDS.findall(during)) >= 3, during


class FakeClock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_outage_logs_its_start_a_summary_a_minute_and_its_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="test.outage")
    clock = FakeClock()
    outage = Outage(logging.getLogger("test.outage"), "reading the things", clock=clock)
    assert not outage.succeeded()
    for _ in range(125):  # two minutes and a bit of attempts every second
        outage.failed(ConnectionRefusedError("refused"))
        clock.now += 1.0
    assert outage.succeeded()
    assert not outage.succeeded()
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in lines] == ["ERROR", "DEBUG", "WARNING", "WARNING", "WARNING"]
    assert lines[0][1] == (
        "reading the things failed: ConnectionRefusedError: refused; retrying with backoff"
    )
    assert lines[2][1] == (
        "reading the things still failing after 1 min 0 s: ConnectionRefusedError: refused;"
        " 61 failed attempts in the last 1 min 0 s"  # t = 0 to 60 s, both ends
    )
    assert lines[4][1] == "reading the things works again after 2 min 5 s and 125 failed attempts"
    assert caplog.records[1].exc_info is not None  # the traceback, at debug level only


async def test_an_unreachable_broker_is_one_line_per_task_not_one_per_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    with socket.socket() as probe:  # a port nothing listens on: every connect is refused
        probe.bind(("127.0.0.1", 0))
        url = f"mqtt://127.0.0.1:{probe.getsockname()[1]}"
    publisher = MqttPublisher(url, reconnect_min_s=0.05, reconnect_max_s=0.1)
    feed = BrokerFeed(url)
    await publisher.start()
    await feed.start(is_local=lambda _match: False, result_committed=lambda _game: None)
    try:
        async with asyncio.timeout(30):
            while _failures(caplog) < 2:  # both have failed once
                await asyncio.sleep(0.05)
            await asyncio.sleep(2.5)  # the publisher retries about 20 times, the feed 3
    finally:
        await publisher.stop(1.0)
        await feed.stop()
    lines = [
        r for r in caplog.records if r.levelno >= logging.INFO and r.name.startswith("arena.")
    ]
    assert sorted(r.getMessage().split(" failed:")[0] for r in lines) == [
        f"the MQTT publisher to {url}",
        f"the broker feed from {url}",
    ], [r.getMessage() for r in lines]
    assert all(r.exc_info is None for r in lines)


def _failures(caplog: pytest.LogCaptureFixture) -> int:
    return sum(" failed: " in r.getMessage() for r in caplog.records)
