"""A real full disk under a SQLite store: degraded health, waiting ends, recovery, the journal.

The database lives on a 2 MiB tmpfs mounted for the test (root only; the
tests skip, saying why, where it cannot be mounted), which the test fills
with a file until the kernel says ENOSPC, and frees again by deleting it.
Every case runs with the inline writer and with the SQLite writer process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from disk_fixture import fill
from sqlalchemy import func, select

from arena.errors import (
    DatabaseOpenError,
    EndNotCommittedError,
    RecoveryJournalError,
    StoreDegradedError,
)
from arena.store import HealthState, Store, StoreHealth
from arena.store.models import Match, Move, Rating
from protocol.games import Termination

GAME = "connect4"
PLAYERS = ("alpha", "beta")
RESERVE = 256 * 1024
"""The journal's reservation on the small disk."""


@pytest.fixture(params=["inline", "process"])
def writer_process(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "process")


class HealthLog:
    """The store's health changes, awaitable."""

    def __init__(self, store: Store) -> None:
        self.seen: list[StoreHealth] = []
        self._changed = asyncio.Event()
        store.subscribe_health(self._on_change)

    def _on_change(self, health: StoreHealth) -> None:
        self.seen.append(health)
        self._changed.set()

    async def reach(self, state: HealthState) -> StoreHealth:
        async with asyncio.timeout(30):
            while not self.seen or self.seen[-1].state is not state:
                self._changed.clear()
                await self._changed.wait()
        return self.seen[-1]


@pytest.fixture
async def stores() -> AsyncIterator[list[Store]]:
    """Stores a test opens; all closed at the end (before the disk is unmounted)."""
    opened: list[Store] = []
    yield opened
    for store in opened:
        await store.close(timeout_s=0.5)


async def scalar(store: Store, query: Any) -> Any:
    async with store.engine.connect() as connection:
        return (await connection.execute(query)).scalar_one()


async def until(condition: Any, timeout_s: float = 30) -> None:
    """Wait for a condition the store exposes no event for (a count of failed attempts)."""
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.01)


async def serving_store(url: str, **options: Any) -> tuple[Store, HealthLog]:
    """A store claimed as a node (quick heartbeat), with the two players, and its health log."""
    store = await Store.open(url, **options)
    await store.claim_node(heartbeat_s=0.1)
    for name in PLAYERS:
        await store.add_bot(name)
    return store, HealthLog(store)


def assert_told_once(health: HealthLog, caplog: pytest.LogCaptureFixture, reason: str) -> None:
    """One degraded and one recovered line, no traceback, however many attempts failed."""
    assert [h.state for h in health.seen] == [HealthState.DEGRADED, HealthState.OK]
    lines = [r.message for r in caplog.records if r.name == "arena.store"]
    assert len([m for m in lines if m.startswith(f"store degraded: {reason};")]) == 1
    assert len([m for m in lines if m.startswith("store recovered after")]) == 1
    assert not [r for r in caplog.records if r.exc_info and r.levelno >= logging.INFO]


async def test_a_full_disk_degrades_the_store_and_match_ends_wait_for_room(
    small_disk: Path,
    writer_process: bool,
    stores: list[Store],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="arena.store")
    url = f"sqlite+aiosqlite:///{small_disk / 'arena.db'}"
    store, health = await serving_store(
        url, writer_process=writer_process, journal_reserve_bytes=RESERVE
    )
    stores.append(store)
    match_id = await store.create_match(GAME, PLAYERS, 1000, 0)
    filler = fill(small_disk)
    for ply in range(2000):  # more than the write-ahead log has room for
        store.record_move(match_id, ply, ply % 2, ply % 7, 5, 1)
    end = asyncio.create_task(store.finish_match(match_id, 0, Termination.LINE, None, True))
    degraded = await health.reach(HealthState.DEGRADED)
    assert degraded.reason == "database or disk is full"
    await until(lambda: store.commit_stats.failures >= 4)
    assert not end.done()  # still waiting: no result that is not stored
    assert store.health == degraded
    with pytest.raises(StoreDegradedError, match="degraded: database or disk is full"):
        await store.open_match(GAME, PLAYERS, 1000, 0)

    filler.unlink()
    await health.reach(HealthState.OK)
    changes = await asyncio.wait_for(end, 30)
    assert [(c.bot, c.after > c.before) for c in changes] == [("alpha", True), ("beta", False)]
    assert await scalar(store, select(func.count()).select_from(Move)) == 2000
    assert await scalar(store, select(Match.status).where(Match.id == match_id)) == "finished"
    assert await scalar(store, select(func.sum(Rating.games))) == 2
    assert_told_once(health, caplog, "database or disk is full")


async def test_closing_on_a_full_disk_journals_and_the_next_open_replays_once(
    small_disk: Path,
    writer_process: bool,
    stores: list[Store],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="arena.store")
    url = f"sqlite+aiosqlite:///{small_disk / 'arena.db'}"
    store, health = await serving_store(
        url, writer_process=writer_process, journal_reserve_bytes=RESERVE
    )
    assert store.journal.reservation.stat().st_size == RESERVE
    stored = await store.create_match(GAME, PLAYERS, 1000, 0)
    for ply in range(10):
        store.record_move(stored, ply, ply % 2, ply % 7, 5, 1)
    await store.flush()

    filler = fill(small_disk)
    pending = await store.open_match(GAME, PLAYERS, 1000, 0)
    for ply in range(10, 1500):
        store.record_move(stored, ply, ply % 2, ply % 7, 5, 1)
    for ply in range(30):
        store.record_move(pending, ply, ply % 2, ply % 7, 5, 1)
    ends = [
        asyncio.create_task(store.finish_match(stored, 0, Termination.LINE, None, True)),
        asyncio.create_task(store.finish_match(pending, None, Termination.DRAW, None, True)),
    ]
    await health.reach(HealthState.DEGRADED)
    await store.close(timeout_s=0.5)
    journal = store.journal.path
    assert journal == Path(f"{small_disk / 'arena.db'}.recovery.jsonl")
    for end in ends:
        with pytest.raises(EndNotCommittedError, match=f"saved in the recovery journal {journal}"):
            await end
    assert journal.exists() and not store.journal.reservation.exists()
    saved = journal.read_bytes()

    # Full again (the journal took the reservation's room): the start is refused, and
    # the journal kept, whether the database cannot even open or the replay fails.
    refill = fill(small_disk, "refill")
    with pytest.raises(DatabaseOpenError, match="disk I/O error"):
        await Store.open(url)
    refill.unlink()
    refill = fill(small_disk, "refill", leave=96 * 1024)  # room to open, not to replay
    with pytest.raises(RecoveryJournalError, match="database or disk is full"):
        await Store.open(url)
    assert journal.read_bytes() == saved

    filler.unlink()
    refill.unlink()
    for replays in (1, 2):  # the second time, from a copy: nothing changes
        reopened = await Store.open(url, writer_process=writer_process)
        stores.append(reopened)
        assert not journal.exists()
        moves = select(Move.match_id, func.count(), func.count(func.distinct(Move.ply)))
        async with reopened.engine.connect() as connection:
            counted = (await connection.execute(moves.group_by(Move.match_id))).all()
            ended = (await connection.execute(select(Match.id, Match.status, Match.result))).all()
        assert sorted(map(tuple, counted)) == sorted([(stored, 1500, 1500), (pending, 30, 30)])
        assert sorted(map(tuple, ended)) == sorted(
            [(stored, "finished", "1-0"), (pending, "finished", "1/2-1/2")]
        )
        assert await scalar(reopened, select(func.sum(Rating.games))) == 4
        await reopened.claim_node()
        assert await reopened.abort_orphans() == 0
        await reopened.close()
        replayed = [m for m in caplog.messages if m.startswith("replayed the recovery journal")]
        assert len(replayed) == replays
        journal.write_bytes(saved)
    journal.unlink()


async def test_the_journal_falls_back_when_its_own_disk_has_no_room(
    small_disk: Path, tmp_path: Path, stores: list[Store]
) -> None:
    url = f"sqlite+aiosqlite:///{small_disk / 'arena.db'}"
    fallback = tmp_path / "elsewhere" / "arena.recovery.jsonl"
    store, health = await serving_store(
        url, journal_reserve_bytes=0, journal_fallback_path=fallback
    )
    match_id = await store.create_match(GAME, PLAYERS, 1000, 0)
    filler = fill(small_disk)
    for ply in range(1500):
        store.record_move(match_id, ply, ply % 2, ply % 7, 5, 1)
    end = asyncio.create_task(store.finish_match(match_id, 1, Termination.LINE, None, True))
    await health.reach(HealthState.DEGRADED)
    await store.close(timeout_s=0.5)
    with pytest.raises(EndNotCommittedError, match=f"recovery journal {fallback}"):
        await end
    assert fallback.exists() and not store.journal.path.exists()

    filler.unlink()
    reopened = await Store.open(url, journal_fallback_path=fallback)
    stores.append(reopened)
    assert not fallback.exists()
    assert await scalar(reopened, select(func.count()).select_from(Move)) == 1500
    assert await scalar(reopened, select(Match.result).where(Match.id == match_id)) == "0-1"


async def test_a_journal_that_cannot_be_read_refuses_the_start(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    journal = Path(f"{tmp_path / 'arena.db'}.recovery.jsonl")
    journal.write_text('{"journal": "arena-recovery", "version": 1}\n{"moves": "m1", "rows": [[0\n')
    with pytest.raises(RecoveryJournalError) as refused:
        await Store.open(url)
    assert str(refused.value).startswith(
        f"cannot replay the recovery journal {journal}: {journal}: line 2: "
    )
    assert "\n" not in str(refused.value) and journal.exists()


async def test_no_new_match_while_too_many_moves_wait(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    store = await Store.open(url, flush_interval=60.0, max_pending_moves=5)
    try:
        for name in PLAYERS:
            await store.add_bot(name)
        match_id = await store.create_match(GAME, PLAYERS, 1000, 0)
        for ply in range(5):
            store.record_move(match_id, ply, ply % 2, ply % 7, 5, 1)
        with pytest.raises(StoreDegradedError, match="while 5 moves wait to be written"):
            await store.open_match(GAME, PLAYERS, 1000, 0)
        store.record_move(match_id, 5, 1, 3, 5, 1)  # a live match's moves are still taken
        await store.flush()
        assert store.health.ok
        await store.open_match(GAME, PLAYERS, 1000, 0)
    finally:
        await store.close()
