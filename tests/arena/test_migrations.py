"""The Alembic migrations: from empty, in place from the first revision, and against the models."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from arena.store import Store
from arena.store.engine import (
    MIGRATIONS_DIR,
    alembic_config,
    current_revision,
    make_engine,
    migrate,
)
from arena.store.models import Base
from protocol.games import Termination

HEAD = "0010"
TABLES = {"bots", "matches", "moves", "ratings", "rating_history", "move_analysis"}


def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"


def test_one_linear_history_shipped_with_the_package() -> None:
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert (MIGRATIONS_DIR / "script.py.mako").is_file()
    script = ScriptDirectory.from_config(alembic_config())
    assert script.get_heads() == [HEAD]
    revisions = ["0010", "0009", "0008", "0007", "0006", "0005", "0004", "0003", "0002", "0001"]
    assert [r.revision for r in script.walk_revisions()] == revisions


async def test_upgrade_from_empty_matches_the_models(tmp_path: Path) -> None:
    engine = make_engine(sqlite_url(tmp_path))
    try:
        assert await current_revision(engine) is None
        await migrate(engine)
        assert await current_revision(engine) == HEAD
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
            diff = await connection.run_sync(
                lambda sync: compare_metadata(
                    MigrationContext.configure(sync, opts={"compare_type": True}), Base.metadata
                )
            )
        assert names >= TABLES
        assert diff == []
        await migrate(engine)  # already at head: nothing to do
        assert await current_revision(engine) == HEAD
    finally:
        await engine.dispose()


async def downgrade(engine: AsyncEngine, revision: str) -> None:
    """Downgrade the database behind ``engine`` to ``revision`` in one transaction."""

    def run(sync: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = sync
        command.downgrade(config, revision)

    async with engine.begin() as connection:
        await connection.run_sync(run)


async def test_downgrade_to_base_and_back(tmp_path: Path) -> None:
    engine = make_engine(sqlite_url(tmp_path))
    try:
        await migrate(engine)
        await downgrade(engine, "base")
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
        assert not names & TABLES
        await migrate(engine)
        assert await current_revision(engine) == HEAD
    finally:
        await engine.dispose()


async def test_database_at_first_revision_upgrades_in_place(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    engine = make_engine(url)
    token = "a-token-from-an-older-arena"
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    try:
        await migrate(engine, "0001")
        assert await current_revision(engine) == "0001"
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO bots (id, name, token_hash, created_at, active) VALUES "
                    "(1, 'old', :hash, :at, 1), (2, 'older', :hash, :at, 1)"
                ),
                {"hash": hashlib.sha256(token.encode()).hexdigest(), "at": at},
            )
            await connection.execute(
                text(
                    "INSERT INTO matches (id, game, player0_id, player1_id, move_ms, bank_ms,"
                    " rated, status, winner, result, termination, fault, reason, started_at,"
                    " ended_at) VALUES ('m1', 'connect4', 1, 2, 1000, 10000, 1, 'finished', 0,"
                    " '1-0', 'line', NULL, '', :at, :at)"
                ),
                {"at": at},
            )
            await connection.execute(
                text(
                    "INSERT INTO moves VALUES"
                    " ('m1', 0, 0, 3, 10, 1, :at), ('m1', 1, 1, 4, 10, 1, :at)"
                ),
                {"at": at},
            )
            await connection.execute(
                text(
                    "INSERT INTO ratings VALUES (1, 'connect4', 1516.0, 1, 1, 0, 0),"
                    " (2, 'connect4', 1484.0, 1, 0, 0, 1)"
                )
            )
            await connection.execute(
                text(
                    "INSERT INTO rating_history (bot_id, game, match_id, before, after, at) VALUES"
                    " (1, 'connect4', 'm1', 1500.0, 1516.0, :at),"
                    " (2, 'connect4', 'm1', 1500.0, 1484.0, :at)"
                ),
                {"at": at},
            )
    finally:
        await engine.dispose()

    store = await Store.open(url)
    try:
        assert await current_revision(store.engine) == HEAD
        async with store.engine.connect() as connection:
            indexes = await connection.run_sync(
                lambda sync: {i["name"] for i in inspect(sync).get_indexes("rating_history")}
            )
        assert indexes == {"ix_rating_history_bot_id_game", "ix_rating_history_match_id"}
        assert await store.authenticate("old", token) is not None
        match = await store.get_match("m1")
        assert match is not None
        assert (match.players, match.result, len(match.moves)) == (("old", "older"), "1-0", 2)
        assert match.started_at == at
        assert [(r.bot, r.rating) for r in await store.leaderboard("connect4")] == [
            ("old", 1516.0),
            ("older", 1484.0),
        ]
        # The upgraded database keeps working, and its history rebuilds to the same ratings.
        assert await store.rebuild_ratings() == 1
        assert [r.rating for r in await store.leaderboard("connect4")] == [1516.0, 1484.0]
        new = await store.create_match("connect4", ("older", "old"), 1000, 10_000)
        changes = await store.finish_match(new, 0, Termination.LINE, None, True)
        assert changes[0].bot == "older" and changes[0].before == 1484.0
    finally:
        await store.close()


async def test_analyses_made_before_choice_matters_are_deleted_for_a_fresh_run(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path)
    engine = make_engine(url)
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    try:
        await migrate(engine, "0007")
        async with engine.begin() as connection:
            for statement in (
                "INSERT INTO bots (id, name, token_hash, created_at, active) VALUES"
                " (1, 'a', 'h', :at, 1), (2, 'b', 'h', :at, 1)",
                "INSERT INTO matches (id, game, player0_id, player1_id, move_ms, bank_ms, rated,"
                " status, winner, result, termination, fault, reason, started_at, ended_at)"
                " VALUES ('m1', 'connect4', 1, 2, 1000, 0, 1, 'finished', 0, '1-0', 'line',"
                " NULL, '', :at, :at)",
                "INSERT INTO moves VALUES ('m1', 0, 0, 3, 10, 1, :at)",
                "INSERT INTO move_analysis VALUES ('m1', 0, 1, 1, 1, 1, 0, 100, :at)",
            ):
                await connection.execute(text(statement), {"at": at})
    finally:
        await engine.dispose()

    store = await Store.open(url)
    try:
        # The row could not say whether the choice mattered: the match is to analyse again.
        assert await store.match_analysis("m1") == []
        assert await store.analysis_todo("connect4", 100) == ["m1"]
        async with store.engine.connect() as connection:
            indexes = await connection.run_sync(
                lambda sync: {i["name"] for i in inspect(sync).get_indexes("matches")}
            )
        assert "ix_matches_player0_id_player1_id_game" in indexes
    finally:
        await store.close()
