"""A batch written twice (a retry after an unknown commit outcome, a replayed journal).

The second write changes nothing and answers the same, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select
from test_store import db_url  # noqa: F401  (a fixture: SQLite, then PostgreSQL)
from test_store_postgres import pg_url  # noqa: F401  (a fixture)

from arena.errors import MatchAlreadyFinishedError
from arena.store import Store
from arena.store.batch_sql import BatchSql, PlainBatch
from arena.store.models import Bot, Match, Move, Rating, RatingHistory
from protocol.games import Termination

ENDED = datetime(2026, 12, 1, 12, 0, 0, 654321, tzinfo=UTC)


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:  # noqa: F811
    opened = await Store.open(db_url)
    for name in ("alpha", "beta"):
        await opened.add_bot(name)
    yield opened
    await opened.close()


def a_batch(ids: dict[str, int]) -> PlainBatch:
    """A new match, its moves and its rated end, as one group commit."""
    match = {
        "id": "retried",
        "game": "connect4",
        "player0_id": ids["alpha"],
        "player1_id": ids["beta"],
        "move_ms": 1000,
        "bank_ms": 0,
        "rated": True,
        "status": "live",
        "winner": None,
        "result": None,
        "termination": None,
        "fault": None,
        "reason": "",
        "started_at": ENDED,
        "ended_at": None,
        "node_id": None,
    }
    moves = [(ply, ply % 2, ply % 7, 3, 1, ENDED.timestamp(), None) for ply in range(7)]
    end = {
        "status": "finished",
        "winner": 0,
        "result": "1-0",
        "termination": Termination.LINE.value,
        "fault": None,
        "reason": "",
        "ended_at": ENDED,
        "rated": True,
    }
    return PlainBatch([match], [("retried", moves)], [("retried", end)])


async def write(store: Store, batch: PlainBatch) -> list[object]:
    sql = BatchSql(store.engine.dialect.name, store.rating_model)
    async with store._write() as session:  # the store's own write transaction
        outcomes = await session.run_sync(sql.write, batch)
    return [outcome for _, outcome in outcomes]


async def counts(store: Store) -> tuple[int, ...]:
    async with store.engine.connect() as connection:
        return tuple(
            [
                await connection.scalar(select(func.count()).select_from(table))
                for table in (Match, Move, RatingHistory)
            ]
            + [await connection.scalar(select(func.sum(Rating.games)))]
        )


async def bot_ids(store: Store) -> dict[str, int]:
    async with store.engine.connect() as connection:
        return dict((await connection.execute(select(Bot.name, Bot.id))).all())


async def test_the_same_batch_twice_changes_nothing_and_answers_the_same(store: Store) -> None:
    batch = a_batch(await bot_ids(store))
    first = await write(store, batch)
    after_first = await counts(store)
    assert after_first == (1, 7, 2, 2)
    assert await write(store, batch) == first
    assert await counts(store) == after_first


async def test_another_end_of_an_ended_match_is_still_refused(store: Store) -> None:
    batch = a_batch(await bot_ids(store))
    await write(store, batch)
    match_id, end = batch.finishes[0]
    other = PlainBatch(finishes=[(match_id, {**end, "termination": Termination.TIMEOUT.value})])
    [outcome] = await write(store, other)
    assert isinstance(outcome, MatchAlreadyFinishedError)
