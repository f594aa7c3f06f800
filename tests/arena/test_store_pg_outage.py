"""PostgreSQL going away mid-run and coming back: the store degrades, ends wait, all commits.

The outage is a TCP relay the test owns, between the store and the local
PostgreSQL: cutting it drops every connection and refuses new ones, as a
stopped server does, without stopping the PostgreSQL that other test runs
share on this machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from test_store_outage import assert_told_once, serving_store, until
from test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)

from arena.store import HealthState, Store
from arena.store.models import Match, Move
from protocol.games import Termination

GAME = "connect4"
PLAYERS = ("alpha", "beta")


class Relay:
    """A TCP relay to ``host:port`` that can be cut (as a stopped server) and restored."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.target = host, port
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        """Listen (again) on the relay's port, a fresh one the first time."""
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        """Refuse new connections and drop every open one."""
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream = await asyncio.open_connection(self.host, self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, upstream}
        await asyncio.gather(self._pipe(reader, upstream), self._pipe(upstream_reader, writer))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.transport.abort()
        self._writers.discard(writer)


@pytest.fixture
def fresh_url(pg_url: str) -> str:  # noqa: F811
    reset(pg_url)
    return pg_url


@pytest.fixture
async def relay(fresh_url: str) -> AsyncIterator[Relay]:
    parsed = make_url(fresh_url)
    opened = Relay(parsed.host or "127.0.0.1", parsed.port or 5432)
    await opened.start()
    yield opened
    await opened.cut()


async def test_a_postgresql_outage_degrades_the_store_until_it_returns(
    fresh_url: str,
    relay: Relay,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="arena.store")
    url = make_url(fresh_url).set(port=relay.port).render_as_string(hide_password=False)
    store, health = await serving_store(url)
    try:
        match_id = await store.create_match(GAME, PLAYERS, 1000, 0)
        for ply in range(10):
            store.record_move(match_id, ply, ply % 2, ply % 7, 5, 1)
        await store.flush()

        await relay.cut()
        for ply in range(10, 60):
            store.record_move(match_id, ply, ply % 2, ply % 7, 5, 1)
        end = asyncio.create_task(store.finish_match(match_id, 1, Termination.LINE, None, True))
        degraded = await health.reach(HealthState.DEGRADED)
        assert degraded.reason == "database unreachable"
        await until(lambda: store.commit_stats.failures >= 4)
        assert not end.done()

        await relay.start()
        await health.reach(HealthState.OK)
        changes = await asyncio.wait_for(end, 30)
        assert [c.bot for c in changes] == list(PLAYERS) and changes[1].delta > 0
    finally:
        await store.close()

    direct = await Store.open(fresh_url)
    try:
        async with direct.engine.connect() as connection:
            moves = await connection.scalar(select(func.count()).select_from(Move))
            status = await connection.scalar(select(Match.result).where(Match.id == match_id))
        assert (moves, status) == (60, "0-1")
    finally:
        await direct.close()
    assert_told_once(health, caplog, "database unreachable")
