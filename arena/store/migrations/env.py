"""Alembic environment for the arena store.

``arena.store.engine.migrate`` runs it on a connection it passes in
``config.attributes["connection"]``. From the command line (``alembic -c
arena/store/alembic.ini ...``) it opens its own async engine on the URL from
``-x url=...``, else ``$ARENA_DB``, else the ini's ``sqlalchemy.url``.
"""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from arena.store.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get("ARENA_DB")
    url = url or config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database URL: pass -x url=..., or set ARENA_DB")
    return url


def _run_offline() -> None:
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_on(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(_url(), poolclass=pool.NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run_on)
    finally:
        await engine.dispose()


_shared = config.attributes.get("connection")
if context.is_offline_mode():
    _run_offline()
elif _shared is not None:
    _run_on(_shared)
else:
    asyncio.run(_run_async())
