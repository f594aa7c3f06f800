"""The SQLite writer process: group commits written by a separate process on the same file."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from arena.errors import (
    BotExistsError,
    MatchAlreadyFinishedError,
    NoSuchBotError,
    NoSuchMatchError,
    StoreError,
)
from arena.store import RatingChange, Store
from arena.store.batch_sql import PlainBatch
from arena.store.writer_process import WRITER_NICENESS, WriterProcess
from protocol.games import Termination

GAME = "connect4"


@pytest.fixture
async def process_store(tmp_path: Path) -> AsyncIterator[Store]:
    """A store whose group commits go through a writer process."""
    opened = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}", writer_process=True)
    try:
        yield opened
    finally:
        await opened.close()


def writer_of(store: Store) -> WriterProcess:
    writer = store._writer  # the process is the thing under test here
    assert writer is not None and store.writer == "process"
    return writer


async def play(store: Store, players: tuple[str, str], plies: int) -> str:
    match_id = await store.open_match(GAME, players, 1000, 0)
    for ply in range(plies):
        store.record_move(match_id, ply, ply % 2, ply % 7, 3, 1)
    return match_id


async def test_matches_moves_ends_and_ratings_go_through_the_process(
    process_store: Store,
) -> None:
    store = process_store
    assert writer_of(store).pid not in (None, os.getpid())
    for name in ("alpha", "beta", "gamma"):
        await store.add_bot(name)
    first = await play(store, ("alpha", "beta"), 7)
    second = await play(store, ("beta", "gamma"), 4)
    ends = await asyncio.gather(
        store.finish_match(first, 0, Termination.LINE, None, True),
        store.finish_match(second, None, Termination.DRAW, None, True),
    )
    assert ends[0] == [RatingChange("alpha", 1500.0, 1516.0), RatingChange("beta", 1500.0, 1484.0)]
    assert ends[1][0].bot == "beta" and ends[1][0].before == 1484.0
    record = await store.get_match(first)
    assert record is not None and record.status == "finished" and record.result == "1-0"
    assert [m.move for m in record.moves] == [ply % 7 for ply in range(7)]
    assert await store.rating_hint("alpha", GAME) == 1516.0
    board = {row.bot: row.rating for row in await store.leaderboard(GAME)}
    assert await store.rebuild_ratings() == 2
    assert {row.bot: row.rating for row in await store.leaderboard(GAME)} == board
    with pytest.raises(MatchAlreadyFinishedError):
        await store.finish_match(first, 1, Termination.LINE, None, True)
    stats = store.commit_stats
    assert (stats.moves, stats.finishes, stats.failures) == (11, 3, 0)


async def test_the_writer_runs_below_the_servers_priority(process_store: Store) -> None:
    pid = writer_of(process_store).pid
    assert pid is not None
    server = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, server + WRITER_NICENESS)


async def written_match(store: Store, plies: int) -> tuple[str, int]:
    """A match of alpha and beta with ``plies`` moves, all written; and the writer's pid."""
    for name in ("alpha", "beta"):
        await store.add_bot(name)
    match_id = await play(store, ("alpha", "beta"), plies)
    await store.flush()
    pid = writer_of(store).pid
    assert pid is not None
    return match_id, pid


async def test_a_killed_writer_is_replaced_and_no_move_is_lost(process_store: Store) -> None:
    store = process_store
    match_id, first_pid = await written_match(store, 3)
    os.kill(first_pid, signal.SIGKILL)
    for ply in range(3, 9):
        store.record_move(match_id, ply, ply % 2, 1, 3, 1)
    # The first flush after the kill may fail (the process died under it); the moves
    # stay queued and the next one writes them with a new process.
    try:
        await store.flush()
    except StoreError:
        await store.flush()
    assert writer_of(store).pid not in (None, first_pid)
    assert await store.finish_match(match_id, 1, Termination.LINE, None, False) == []
    record = await store.get_match(match_id)
    assert record is not None and [m.ply for m in record.moves] == list(range(9))


async def test_a_match_end_in_the_batch_a_broken_writer_fails_is_still_recorded(
    process_store: Store,
) -> None:
    store = process_store
    match_id, first_pid = await written_match(store, 7)
    # The pipe to the writer breaks: the next batch, holding the end, fails for certain.
    conn = writer_of(store)._conn
    assert conn is not None
    conn.close()
    changes = await store.finish_match(match_id, 0, Termination.LINE, None, True)
    assert changes == [RatingChange("alpha", 1500.0, 1516.0), RatingChange("beta", 1500.0, 1484.0)]
    assert store.commit_stats.failures == 1
    assert writer_of(store).pid not in (None, first_pid)
    record = await store.get_match(match_id)
    assert record is not None and record.status == "finished" and len(record.moves) == 7


async def test_a_late_answer_is_not_taken_for_the_next_batch(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    async with await Store.open(url) as store:  # the schema and two bots
        await store.add_bot("alpha")
        await store.add_bot("beta")
        match_id = await store.create_match(GAME, ("alpha", "beta"), 1000, 0)
    writer = WriterProcess(url, 32.0)
    await writer.start()
    try:
        first = PlainBatch(moves=[(match_id, [(0, 0, 3, 1, 1, time.time(), None)])])
        # A caller that gives up at once: its batch is still written, its answer arrives late.
        abandoned = asyncio.create_task(writer.write(first))
        await asyncio.sleep(0)
        abandoned.cancel()
        finish = PlainBatch(finishes=[(match_id, _end_values())])
        outcomes = await writer.write(finish)
        assert outcomes == [(GAME, [])]  # the finish's own answer, not the move batch's []
    finally:
        await writer.stop()
    assert writer.pid is None


def _now() -> datetime:
    return datetime.now(UTC)


def _end_values() -> dict[str, object]:
    return {
        "status": "finished",
        "winner": 0,
        "result": "1-0",
        "termination": "line",
        "fault": None,
        "reason": "",
        "ended_at": _now(),
        "rated": False,
    }


@pytest.mark.parametrize(
    "error",
    [
        MatchAlreadyFinishedError("m1", "aborted"),
        NoSuchMatchError("m2"),
        NoSuchBotError("zed"),
        BotExistsError("alpha"),
        StoreError("disk full"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_store_errors_cross_the_pipe_intact(error: StoreError) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error)
    assert vars(again) == vars(error)
