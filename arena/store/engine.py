"""Engine creation, SQLite connection tuning and Alembic migrations.

SQLite follows SQLAlchemy's documented recipe for taking over transaction
control from the ``sqlite3``/``aiosqlite`` driver: the ``connect`` hook sets
``isolation_level = None`` so the driver never emits its own BEGIN, and the
``begin`` hook emits ``BEGIN IMMEDIATE`` so a write transaction takes the
write lock up front instead of failing with "database is locked" when it
upgrades from a read lock halfway through. Read-only sessions run on a
view of the same engine with the ``sqlite_begin="DEFERRED"`` execution
option, so under WAL they never wait for writers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, event, make_url, text
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

DEFAULT_URL = "sqlite+aiosqlite:///arena.db"
"""The database used when none is configured: a SQLite file in the working directory."""

CONNECT_TIMEOUT_S = 5.0
"""How long asyncpg may take to connect to PostgreSQL."""

COMMAND_TIMEOUT_S = 30.0
"""How long one PostgreSQL statement may take: a server that stops answering (a network
that drops packets) fails the write, which is retried, instead of hanging the store."""

BUSY_TIMEOUT_MS = 5000
"""How long a SQLite writer waits for another process's write lock before failing."""

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

BEGIN_OPTION = "sqlite_begin"
"""Execution option naming the SQLite BEGIN mode (IMMEDIATE unless set)."""

# Any constant works; it only has to be the same in every arena process.
_PG_MIGRATION_LOCK = 0x4D435453


def make_engine(url: str | URL) -> AsyncEngine:
    """Create the async engine for ``url``, tuned for SQLite when it is one."""
    parsed = make_url(url)
    connect_args: dict[str, Any] = {}
    if parsed.get_driver_name() == "asyncpg":
        connect_args = {"timeout": CONNECT_TIMEOUT_S, "command_timeout": COMMAND_TIMEOUT_S}
    engine = create_async_engine(parsed, connect_args=connect_args)
    if engine.dialect.name == "sqlite":
        if engine.url.database in (None, "", ":memory:"):
            # An in-memory database is one shared connection: concurrent
            # sessions would interleave on it, so it cannot back a Store.
            raise ValueError("the store needs a SQLite file, not an in-memory database")
        event.listen(engine.sync_engine, "connect", _sqlite_on_connect)
        event.listen(engine.sync_engine, "begin", _sqlite_on_begin)
    return engine


def make_sync_engine(url: str | URL) -> Engine:
    """A synchronous engine on the same SQLite file as the async ``url``, tuned the same way.

    For the SQLite writer process: ``sqlite+aiosqlite:///f.db`` becomes the
    standard library driver on ``f.db``, with WAL, the busy timeout and
    ``BEGIN IMMEDIATE`` as for the async engine.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        raise ValueError(f"a synchronous writer needs a SQLite file, not {url!r}")
    engine = create_engine(parsed.set(drivername="sqlite+pysqlite"))
    event.listen(engine, "connect", _sqlite_on_connect)
    event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def read_sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions for read-only transactions on ``engine``: on SQLite they begin DEFERRED,
    so under WAL they never wait for a writer."""
    reader = engine.execution_options(**{BEGIN_OPTION: "DEFERRED"}) if is_sqlite(engine) else engine
    return async_sessionmaker(reader, expire_on_commit=False)


def is_sqlite(engine: AsyncEngine) -> bool:
    """True when ``engine`` talks to SQLite."""
    return engine.dialect.name == "sqlite"


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # WAL lets readers run during a write; synchronous=NORMAL is durable
    # against a process crash (only power loss can drop the last commits).
    for pragma in (
        "journal_mode=WAL",
        f"busy_timeout={BUSY_TIMEOUT_MS}",
        "synchronous=NORMAL",
        "foreign_keys=ON",
    ):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_on_begin(connection: Connection) -> None:
    mode = connection.get_execution_options().get(BEGIN_OPTION, "IMMEDIATE")
    if mode not in ("DEFERRED", "IMMEDIATE", "EXCLUSIVE"):
        raise ValueError(f"unknown SQLite BEGIN mode {mode!r}")
    connection.exec_driver_sql(f"BEGIN {mode}")


def alembic_config() -> Config:
    """An Alembic configuration pointing at the shipped migrations, without an ini file."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    return config


async def migrate(engine: AsyncEngine, revision: str = "head") -> None:
    """Upgrade the database behind ``engine`` to ``revision`` in one transaction."""
    async with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # Two arena processes starting together must not both migrate.
            await connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK}
            )
        await connection.run_sync(_upgrade, revision)


def _upgrade(connection: Connection, revision: str) -> None:
    config = alembic_config()
    # env.py runs on this connection instead of opening its own.
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def current_revision(engine: AsyncEngine) -> str | None:
    """The Alembic revision the database is at, or None when it has never been migrated."""
    async with engine.connect() as connection:
        return await connection.run_sync(
            lambda sync: MigrationContext.configure(sync).get_current_revision()
        )
