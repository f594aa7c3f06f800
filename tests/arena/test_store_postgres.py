"""PostgreSQL: a throwaway database for the suite, plus what only a server database shows.

``pg_url`` creates ``arena_test_<random>`` through the ``postgres``
maintenance database and drops it at the end; it skips when PostgreSQL is
unreachable. ``ARENA_TEST_PG_DSN`` points it elsewhere (an asyncpg DSN of
a maintenance database a superuser can create databases from).
``test_store.py`` runs every store test against it as well.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import make_url

from arena.errors import MatchAlreadyFinishedError
from arena.store import Store
from arena.store.engine import current_revision, make_engine, migrate
from arena.store.models import Base
from protocol.games import Termination
from tests.arena.test_migrations import downgrade
from tests.arena.test_rated_openings import check_bot_pair_histories

ADMIN_DSN = os.environ.get("ARENA_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


async def _admin(*statements: str) -> None:
    connection = await asyncpg.connect(ADMIN_DSN, timeout=3)
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """An async SQLAlchemy URL of a fresh database that lives for the test session."""
    name = f"arena_test_{secrets.token_hex(6)}"
    try:
        asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        pytest.skip(f"PostgreSQL is unreachable at {ADMIN_DSN}: {error!r}")
    url = make_url(ADMIN_DSN).set(drivername="postgresql+asyncpg", database=name)
    yield url.render_as_string(hide_password=False)
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def reset(url: str) -> None:
    """Empty the database behind ``url`` completely, migrations included."""

    async def run() -> None:
        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        connection = await asyncpg.connect(dsn, timeout=3)
        try:
            await connection.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        finally:
            await connection.close()

    asyncio.run(run())


@pytest.fixture
def fresh_pg(pg_url: str) -> str:
    """``pg_url``, emptied first."""
    reset(pg_url)
    return pg_url


@pytest.fixture
async def two_nodes(fresh_pg: str) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores on one database, as two arena processes would be."""
    first = await Store.open(fresh_pg)
    second = await Store.open(fresh_pg)
    yield first, second
    await first.close()
    await second.close()


async def test_migrated_schema_matches_the_models(fresh_pg: str) -> None:
    store = await Store.open(fresh_pg)
    try:
        assert await current_revision(store.engine) == "0010"
        async with store.engine.connect() as connection:
            diff = await connection.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(sync, opts={"compare_type": True}), Base.metadata
                )
            )
        assert diff == []
    finally:
        await store.close()


async def test_the_seek_queue_functions_go_down_and_up_with_their_migration(fresh_pg: str) -> None:
    functions = "SELECT count(*) FROM pg_proc WHERE proname LIKE 'seek_queue_%'"
    engine = make_engine(fresh_pg)
    try:
        await migrate(engine)
        async with engine.connect() as connection:
            assert await connection.scalar(text(functions)) == 2
        await downgrade(engine, "0006")
        async with engine.connect() as connection:
            assert await connection.scalar(text(functions)) == 0
        await migrate(engine)
        assert await current_revision(engine) == "0010"
    finally:
        await engine.dispose()


async def test_postgres_writes_inline_even_when_a_writer_process_is_asked_for(
    fresh_pg: str,
) -> None:
    store = await Store.open(fresh_pg, writer_process=True)
    try:
        assert store.writer == "inline"
    finally:
        await store.close()


async def test_two_processes_migrating_at_once(fresh_pg: str) -> None:
    stores = await asyncio.gather(*(Store.open(fresh_pg) for _ in range(3)))
    try:
        assert [await current_revision(s.engine) for s in stores] == ["0010"] * 3
    finally:
        for store in stores:
            await store.close()


async def test_finish_race_between_nodes_rates_once(two_nodes: tuple[Store, Store]) -> None:
    first, second = two_nodes
    await first.add_bot("alpha")
    await first.add_bot("beta")
    for _ in range(5):
        match_id = await first.create_match("connect4", ("alpha", "beta"), 1000, 10_000)
        outcomes = await asyncio.gather(
            first.finish_match(match_id, 0, Termination.LINE, None, True),
            second.finish_match(match_id, 0, Termination.LINE, None, True),
            return_exceptions=True,
        )
        assert sum(isinstance(o, MatchAlreadyFinishedError) for o in outcomes) == 1
        assert sum(isinstance(o, list) and len(o) == 2 for o in outcomes) == 1
    board = await second.leaderboard("connect4")
    assert [(row.bot, row.games, row.wins) for row in board] == [("alpha", 5, 5), ("beta", 5, 0)]


async def test_nodes_sharing_bots_do_not_deadlock_and_rebuild_agrees(
    two_nodes: tuple[Store, Store],
) -> None:
    first, second = two_nodes
    names = [f"bot{i}" for i in range(4)]
    for name in names:
        await first.add_bot(name)
    pairs = [(a, b) for a in names for b in names if a != b] * 2
    ids = [await first.create_match("tictactoe", pair, 500, 5000) for pair in pairs]
    nodes = (first, second)
    await asyncio.gather(
        *(
            nodes[i % 2].finish_match(
                match_id, i % 3 if i % 3 < 2 else None, Termination.LINE, None, True
            )
            for i, match_id in enumerate(ids)
        )
    )
    before = await first.leaderboard("tictactoe")
    assert sum(row.games for row in before) == 2 * len(pairs)
    assert await second.rebuild_ratings() == len(pairs)
    assert await first.leaderboard("tictactoe") == before


async def test_pair_histories_read_the_same_on_postgresql(fresh_pg: str) -> None:
    store = await Store.open(fresh_pg)
    try:
        await check_bot_pair_histories(store)
    finally:
        await store.close()
