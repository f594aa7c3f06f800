"""The group commit's buffer on its own: what a failed batch keeps, and for how long.

The writer is scripted (it fails when told to); the database side of a batch is
tested through the store (test_group_commit, test_writer_process).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.errors import StoreError
from arena.store.movebuffer import Batch, Finish, MoveBuffer


class ScriptedWriter:
    """Fails the first ``failures`` batches, then settles every match end with ``[]``."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.batches: list[tuple[list[str], dict[str, list[int]]]] = []

    async def __call__(self, batch: Batch) -> None:
        self.batches.append(
            (
                [finish.match_id for finish in batch.finishes],
                {match_id: [row[0] for row in rows] for match_id, rows in batch.moves.items()},
            )
        )
        if len(self.batches) <= self.failures:
            raise StoreError("the database writer process failed: EOFError")
        for finish in batch.finishes:
            finish.done.set_result([])


def finish(match_id: str) -> Finish:
    done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    return Finish(match_id, {"status": "finished"}, done)


async def test_a_match_end_in_a_failed_batch_is_written_by_the_next_one() -> None:
    writer = ScriptedWriter(failures=2)
    buffer = MoveBuffer(writer, interval=0.01, finish_delay=0.0)
    buffer.start()
    try:
        for ply in range(3):
            buffer.add("m1", (ply, ply % 2, 3, 1, 0, 0.0))
        end = finish("m1")
        buffer.add_finish(end)
        assert await asyncio.wait_for(end.done, 5) == []
        buffer.add_finish(later := finish("m2"))
        assert await asyncio.wait_for(later.done, 5) == []
    finally:
        await buffer.stop()
    # The failed batches were written again, whole; then the next end on its own.
    assert writer.batches == [(["m1"], {"m1": [0, 1, 2]})] * 3 + [(["m2"], {})]
    assert end.failed_at is not None and buffer.stats.failures == 2


async def test_an_end_failing_longer_than_the_retry_window_gets_the_error() -> None:
    writer = ScriptedWriter(failures=1_000_000)
    buffer = MoveBuffer(writer, interval=0.01, finish_delay=0.0, finish_retry_s=0.2)
    buffer.start()
    try:
        buffer.add("m1", (0, 0, 3, 1, 0, 0.0))
        end = finish("m1")
        buffer.add_finish(end)
        with pytest.raises(StoreError, match="writer process failed"):
            await asyncio.wait_for(end.done, 5)
        assert len(writer.batches) >= 2  # retried before giving up
        assert len(buffer) == 1  # the move itself is still kept for later
    finally:
        writer.failures = 0
        await buffer.stop()
    assert writer.batches[-1] == ([], {"m1": [0]})


async def test_without_the_flusher_a_failed_end_fails_at_once() -> None:
    writer = ScriptedWriter(failures=1)
    buffer = MoveBuffer(writer)  # never started: nobody would retry
    end = finish("m1")
    buffer.add_finish(end)
    with pytest.raises(StoreError):
        await buffer.flush()
    assert end.done.done() and isinstance(end.done.exception(), StoreError)
    await buffer.flush()  # nothing of the end is left to write
    assert writer.batches == [(["m1"], {})]
