"""The group commit's SQLite moves insert: driver SQL with the text SQLAlchemy would bind."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import sessionmaker

from arena.store import Store
from arena.store.batch_sql import BatchSql, PlainBatch, sqlite_timestamp
from arena.store.dialect import table_of
from arena.store.engine import make_sync_engine
from arena.store.models import Move

_DIALECT = sqlite.dialect()
_BIND = table_of(Move).c.played_at.type.dialect_impl(_DIALECT).bind_processor(_DIALECT)


@settings(max_examples=500, deadline=None)
@given(st.floats(min_value=0.0, max_value=4_102_444_800.0))  # 1970 to 2100
def test_a_timestamp_is_the_text_sqlalchemys_datetime_would_store(epoch_s: float) -> None:
    assert _BIND is not None  # SQLite's DateTime binds through a formatter
    assert sqlite_timestamp(epoch_s) == _BIND(datetime.fromtimestamp(epoch_s, UTC))


def test_whole_seconds_keep_their_microseconds_field() -> None:
    # isoformat drops a zero fraction unless told otherwise; the stored text never does.
    assert sqlite_timestamp(86_400.0) == "1970-01-02 00:00:00.000000"


def test_moves_written_as_driver_sql_read_back_as_the_orm_maps_them(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"

    async def a_match() -> str:
        store = await Store.open(url)
        try:
            for name in ("alpha", "beta"):
                await store.add_bot(name)
            return await store.create_match("connect4", ("alpha", "beta"), 1000, 0)
        finally:
            await store.close()

    match_id = asyncio.run(a_match())
    played = [1_763_900_000.123456, 1_763_900_001.0, 1_763_900_002.999999]
    searches = ['{"value":0.25}', None, '{"moves":[],"tree":[{"move":3,"visits":1}]}']
    rows = [
        (ply, ply % 2, ply + 2, 10 * ply, ply, at, search)
        for ply, (at, search) in enumerate(zip(played, searches, strict=True))
    ]
    engine = make_sync_engine(url)
    try:
        sessions = sessionmaker(engine)
        sql = BatchSql("sqlite", 32.0)
        with sessions() as session, session.begin():
            # Ply 1 twice: a repeated row is ignored, as on PostgreSQL.
            sql.write(session, PlainBatch(moves=[(match_id, rows), (match_id, rows[1:2])]))
        with sessions() as session:
            stored = session.execute(select(Move).order_by(Move.ply)).scalars().all()
            got = [
                (m.ply, m.player, m.move, m.think_ms, m.rtt_ms, m.played_at, m.analysis)
                for m in stored
            ]
    finally:
        engine.dispose()
    want = [
        (ply, player, move, think, rtt, datetime.fromtimestamp(at, UTC).replace(tzinfo=None), s)
        for ply, player, move, think, rtt, at, s in rows
    ]
    assert got == want
