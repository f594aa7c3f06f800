"""``StoreCore``: what every store operation stands on, and the base of ``Store``.

The engine and its sessions, the group commit (``movebuffer``, written inline
or by the SQLite writer process), the node's lease (``claim_node``,
``abort_orphans``), the store's ``health``, and ``close``, which commits or
journals what is pending and releases the node.

Units of work each get their own session from one ``async_sessionmaker``.
On SQLite, writers inside this process queue on an ``asyncio.Lock`` before
opening their ``BEGIN IMMEDIATE`` transaction: SQLite allows one writer
at a time anyway, and waiting on the lock is cheaper and fairer than
polling the file lock through ``busy_timeout`` (which still covers writers
in other processes). PostgreSQL needs no such gate.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from types import TracebackType
from typing import Any, Self

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from arena.errors import EndNotCommittedError, StoreError
from arena.ratings import DEFAULT_MODEL, RatingModel
from arena.store import lease, nodes
from arena.store.batch_sql import BatchSql
from arena.store.engine import is_sqlite, read_sessions
from arena.store.health import HealthListener, HealthMonitor, Pending, StoreHealth
from arena.store.journal import DEFAULT_RESERVE_BYTES, RecoveryJournal, save_batch
from arena.store.lease import Lease
from arena.store.logins import LoginReads
from arena.store.movebuffer import (
    DEFAULT_MAX_ANALYSIS_BYTES,
    DEFAULT_MAX_PENDING,
    Batch,
    CommitStats,
    Finish,
    MoveBuffer,
)
from arena.store.opening import mask_url
from arena.store.records import Arrival, RatingChange
from arena.store.writer_process import WriterProcess

CLOSE_TIMEOUT_S = 5.0
"""How long ``close`` tries to commit what is pending before journaling it."""


class StoreCore:
    """Engine, sessions, group commit, node lease, health and closing; see ``Store``."""

    def __init__(
        self,
        engine: AsyncEngine,
        journal: RecoveryJournal,
        *,
        rating_model: RatingModel = DEFAULT_MODEL,
        flush_interval: float = 0.05,
        flush_batch: int = 512,
        finish_delay: float = 0.02,
        max_pending_moves: int = DEFAULT_MAX_PENDING,
        max_pending_analysis_bytes: int = DEFAULT_MAX_ANALYSIS_BYTES,
        journal_reserve_bytes: int = DEFAULT_RESERVE_BYTES,
        writer: WriterProcess | None = None,
    ) -> None:
        self.engine = engine
        self.rating_model = rating_model
        """How a result changes ratings: given, never computed here."""
        self.url = mask_url(engine.url)
        """The database URL, password masked."""
        self.journal = journal
        self._journal_reserve = journal_reserve_bytes
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        sqlite = is_sqlite(engine)
        self._read_sessions = read_sessions(engine)
        self._write_gate: AbstractAsyncContextManager[Any] = (
            asyncio.Lock() if sqlite else contextlib.nullcontext()
        )
        self._sql = BatchSql(engine.dialect.name, rating_model)
        self._writer = writer
        self._buffer = MoveBuffer(
            self._write_batch,
            interval=flush_interval,
            batch_size=flush_batch,
            finish_delay=finish_delay,
            max_pending=max_pending_moves,
            max_analysis_bytes=max_pending_analysis_bytes,
        )
        self._monitor: HealthMonitor = self._buffer.monitor
        self._lease: Lease | None = None
        self._identity = nodes.identity()
        # Caches for the server's hot path, never for a decision the database must make.
        self._bot_ids: dict[str, int] = {}
        self._ratings: dict[tuple[str, str], float | None] = {}
        self._arrivals: dict[str, tuple[Arrival, float]] = {}
        """Bots expected to log in here: what is known of them, until when it may be used."""
        self._logins: dict[str, tuple[str, datetime]] = {}
        """Each bot's token hash and creation time as of its last login here."""
        self._login_reads = LoginReads(self._read)
        """Logins read together while the last read ran (a reconnection storm)."""
        self._closed = False

    async def close(self, timeout_s: float = CLOSE_TIMEOUT_S) -> None:
        """Commit what is pending (or journal it), release the node, free the connections.

        Tries for up to ``timeout_s`` to commit; what still fails goes to the
        recovery journal, and the callers still waiting for those match ends
        get ``EndNotCommittedError``. Then the node's lease is released (when
        the database allows) and, unless something was journaled, its
        remaining live matches aborted.
        """
        if self._closed:
            return
        self._closed = True
        self._login_reads.close()
        try:
            if self._lease is not None:
                await self._lease.stop()
            left = await self._buffer.stop(timeout_s)
            if left:
                where = await save_batch(self.journal, left.plain(), self.node_id)
                for finish in left.finishes:
                    if not finish.done.done():
                        finish.done.set_exception(EndNotCommittedError(finish.match_id, where))
            if self._lease is not None:
                # Journaled ends must find their matches live when replayed: leave those
                # matches to the next start's clean-up, which runs after the replay.
                await self._lease.release(timeout_s, abort_matches=not left)
                self.journal.release_reservation()
        finally:
            try:
                if self._writer is not None:
                    await self._writer.stop()
            finally:
                await self.engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # Node ownership and health -----------------------------------------------

    async def claim_node(
        self,
        node_id: str | None = None,
        *,
        allow_multi_node: bool = False,
        lease_s: float = nodes.LEASE_S,
        heartbeat_s: float = nodes.HEARTBEAT_S,
    ) -> str:
        """Register this store as the serving node ``node_id`` and start its heartbeat.

        Returns the node id (default ``host-pid-random``). Raises
        ``NodeConflictError`` naming the holder when another live node holds
        the database: always on SQLite; on PostgreSQL unless every node
        passes ``allow_multi_node`` (experimental: nodes then share the
        database, each owning its own matches). Matches opened from now on
        record the node. Also reserves the recovery journal's room.
        """
        if self._lease is not None:
            raise StoreError(f"this store already is node {self._lease.node_id}")
        if self._closed:
            raise StoreError("the store is closed")
        self._lease = await lease.claim(
            self.url,
            node_id or nodes.default_node_id(self._identity),
            self._identity,
            self._write,
            self._monitor,
            sqlite=is_sqlite(self.engine),
            allow_multi_node=allow_multi_node,
            lease_s=lease_s,
            heartbeat_s=heartbeat_s,
        )
        await asyncio.to_thread(self.journal.reserve, self._journal_reserve)
        return self._lease.node_id

    @property
    def node_id(self) -> str | None:
        """The node this store claimed the database as, if any."""
        return self._lease.node_id if self._lease is not None else None

    @property
    def shared(self) -> bool:
        """This store is one node of several sharing the database (``allow_multi_node``)."""
        return self._lease is not None and self._lease.shared

    async def abort_orphans(self) -> int:
        """End, as aborted (infrastructure fault, unrated), every live match whose node is gone.

        Gone: no longer registered, lease expired, or dead (see
        ``arena.store.nodes``); matches written by an arena without node
        ownership (no node) count as orphans too. Matches of live nodes are
        never touched, and two nodes cleaning at once end each orphan once.
        Returns how many matches this call ended.
        """
        return len(await self.abort_orphan_matches())

    async def abort_orphan_matches(self) -> list[str]:
        """``abort_orphans``, returning the ids of the matches this call ended."""
        async with self._write() as session:
            return await nodes.abort_orphans(session, self._identity)

    @property
    def health(self) -> StoreHealth:
        """Whether writes commit now (``ok``), fail and are retried (``degraded``), or the
        node's lease was lost; with a short reason and since when."""
        return self._monitor.health

    def subscribe_health(self, listener: HealthListener) -> Callable[[], None]:
        """Call ``listener(health)`` on this loop at every change of ``health``; returns an
        unsubscribe function."""
        return self._monitor.subscribe(listener)

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncSession]:
        """One write transaction (``BEGIN IMMEDIATE`` on SQLite), committed on leaving: for
        the store's own units of work; a match's writes go through the group commit."""
        async with self._write_gate, self._sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
        """One read-only transaction (never waits for writers on SQLite)."""
        async with self._read_sessions() as session, session.begin():
            yield session

    async def flush(self) -> None:
        """Write every queued move now."""
        await self._buffer.flush()

    @property
    def writer(self) -> str:
        """Where the group commits run: ``process`` (a writer process) or ``inline``."""
        return "process" if self._writer is not None else "inline"

    @property
    def writer_pid(self) -> int | None:
        """The writer process's id while it runs; None for inline commits."""
        return self._writer.pid if self._writer is not None else None

    @property
    def commit_stats(self) -> CommitStats:
        """Counts and recent durations of this store's group commits (live, not a copy)."""
        return self._buffer.stats

    def pending(self) -> Pending:
        """How many new matches, moves and match ends wait for the next group commit."""
        return self._buffer.pending()

    async def _write_batch(self, batch: Batch) -> None:
        """The group commit: new matches, moves and match ends in one transaction."""
        plain = batch.plain()
        if self._writer is not None:
            outcomes = await self._writer.write(plain)
        else:
            async with self._write() as session:
                outcomes = await session.run_sync(self._sql.write, plain)
        for finish, (game, outcome) in zip(batch.finishes, outcomes, strict=True):
            self._settle(finish, game, outcome)

    def _settle(
        self, finish: Finish, game: str | None, outcome: list[RatingChange] | Exception
    ) -> None:
        if isinstance(outcome, list):
            for change in outcome:
                self._ratings[change.bot, game or ""] = change.after
        if finish.done.done():  # the caller gave up waiting; the end is recorded anyway
            return
        if isinstance(outcome, Exception):
            finish.done.set_exception(outcome)
        else:
            finish.done.set_result(outcome)
