"""The ``seek_queue`` table of nodes sharing PostgreSQL: read it, sync a node's rows, take pairs.

The statements call the functions of migration 0007 (``seek_queue_sync``,
``seek_queue_take``), each in a transaction of its own under one advisory
lock; ``arena.cluster.seek_queue`` decides what to sync and which pairs to
take (``Store.seek_queue``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from arena.store.records import Arrival

QUEUE_LOCK = 0x4D435455
"""The advisory lock that serializes pairing passes (one key for every node)."""

_SYNC = text(
    "SELECT * FROM seek_queue_sync(:lock, :node, CAST(:withdrawn AS integer[]),"
    " CAST(:moved AS integer[]), CAST(:moved_to AS boolean[]), CAST(:local AS integer[]),"
    " CAST(:bot AS text[]), CAST(:game AS text[]), CAST(:move_ms AS integer[]),"
    " CAST(:bank_ms AS integer[]), CAST(:rating AS double precision[]),"
    " CAST(:movable AS boolean[]))"
)
_READ = text("SELECT * FROM seek_queue ORDER BY id")
_TAKE = text(
    "SELECT * FROM seek_queue_take(:lock, :node, CAST(:first AS bigint[]),"
    " CAST(:second AS bigint[]), CAST(:channel AS text[]), CAST(:payload AS text[]))"
)


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One seek in the table, of any node."""

    id: int
    """Orders the seeks of all nodes by their arrival."""
    node_id: str
    local_id: int
    """The seek's order in its node's lobby."""
    bot: str
    game: str
    move_ms: int
    bank_ms: int
    rating: float
    movable: bool
    """Whether another node may pair the seek into a match it hosts."""


@dataclass(frozen=True, slots=True)
class NewSeek:
    """A seek of this node to insert."""

    local_id: int
    bot: str
    game: str
    move_ms: int
    bank_ms: int
    rating: float
    movable: bool


@dataclass(frozen=True, slots=True)
class TakePlan:
    """A pair to take: its two rows (None: a seek of this node without a row), its player
    on another node, and the ``pg_notify`` that sends that player here (None: no notice)."""

    rows: tuple[int | None, int | None]
    remote_bot: str | None
    channel: str | None
    payload: str | None


def _rows(result: Sequence[Row[Any]]) -> list[QueueRow]:
    return [
        QueueRow(
            q.id, q.node_id, q.local_id, q.bot, q.game, q.move_ms, q.bank_ms, q.rating, q.movable
        )
        for q in result
    ]


class SeekQueueConnection:
    """One connection of a pairing pass: every statement commits on its own."""

    def __init__(self, conn: AsyncConnection, node_id: str) -> None:
        self._conn = conn
        self._node_id = node_id

    async def sync(
        self, withdrawn: list[int], moved: list[tuple[int, bool]], new: list[NewSeek]
    ) -> list[QueueRow]:
        """Delete this node's ``withdrawn`` rows (by lobby order), set ``movable`` of the
        ``moved`` ones, insert the ``new`` ones; returns the whole queue as of then."""
        result = await self._conn.execute(
            _SYNC,
            {
                "lock": QUEUE_LOCK,
                "node": self._node_id,
                "withdrawn": withdrawn,
                "moved": [order for order, _ in moved],
                "moved_to": [movable for _, movable in moved],
                "local": [seek.local_id for seek in new],
                "bot": [seek.bot for seek in new],
                "game": [seek.game for seek in new],
                "move_ms": [seek.move_ms for seek in new],
                "bank_ms": [seek.bank_ms for seek in new],
                "rating": [seek.rating for seek in new],
                "movable": [seek.movable for seek in new],
            },
        )
        return _rows(result.all())

    async def take(self, plans: list[TakePlan]) -> list[tuple[int, Arrival | None]]:
        """Take the pairs of ``plans`` whose rows are still there, sending their notices
        (delivered when the take commits). Returns the index in ``plans`` of each pair
        taken, with what this node needs of its player on another node (None: it has none,
        or that player is not a registered bot)."""
        result = await self._conn.execute(
            _TAKE,
            {
                "lock": QUEUE_LOCK,
                "node": self._node_id,
                "first": [plan.rows[0] for plan in plans],
                "second": [plan.rows[1] for plan in plans],
                "channel": [plan.channel for plan in plans],
                "payload": [plan.payload for plan in plans],
            },
        )
        taken: list[tuple[int, Arrival | None]] = []
        for index, bot_id, token_hash, created_at, ratings in result.all():
            number = index - 1  # PostgreSQL counts from 1
            remote = plans[number].remote_bot
            arrival = None
            if remote is not None and bot_id is not None:
                games = {game: float(r) for game, r in json.loads(ratings or "{}").items()}
                arrival = Arrival(remote, bot_id, token_hash, created_at, games)
            taken.append((number, arrival))
        return taken


class SeekQueueTable:
    """The ``seek_queue`` table as one node sees it."""

    def __init__(self, engine: AsyncEngine, node_id: str) -> None:
        # Every statement of a pass is a transaction of its own: no BEGIN, no COMMIT.
        self._engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        self.node_id = node_id

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[SeekQueueConnection]:
        """One connection for the statements of a pass."""
        async with self._engine.connect() as conn:
            yield SeekQueueConnection(conn, self.node_id)

    async def read(self) -> list[QueueRow]:
        """The whole queue, read without the lock."""
        async with self._engine.connect() as conn:
            return _rows((await conn.execute(_READ)).all())
