"""The group commit's buffer on its own: what a failed batch keeps, retries, and hands back.

The writer is scripted (it fails when told to); the database side of a batch is
tested through the store (test_group_commit, test_writer_process).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

from arena.errors import StoreError
from arena.store.health import HealthState
from arena.store.movebuffer import Batch, Finish, MoveBuffer


class ScriptedWriter:
    """Fails the first ``failures`` batches, then settles every match end with ``[]``."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.batches: list[tuple[list[str], dict[str, list[int]]]] = []
        self.at: list[float] = []
        """When each batch was tried (loop time)."""

    async def __call__(self, batch: Batch) -> None:
        self.at.append(asyncio.get_running_loop().time())
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
            buffer.add("m1", (ply, ply % 2, 3, 1, 0, 0.0, None))
        end = finish("m1")
        buffer.add_finish(end)
        assert await asyncio.wait_for(end.done, 5) == []
        buffer.add_finish(later := finish("m2"))
        assert await asyncio.wait_for(later.done, 5) == []
    finally:
        await buffer.stop(1.0)
    # The failed batches were written again, whole; then the next end on its own.
    assert writer.batches == [(["m1"], {"m1": [0, 1, 2]})] * 3 + [(["m2"], {})]
    assert buffer.stats.failures == 2


async def test_an_end_waits_through_every_failure_with_a_capped_backoff() -> None:
    writer = ScriptedWriter(failures=7)
    buffer = MoveBuffer(writer, interval=0.01, finish_delay=0.0, backoff_cap_s=0.04)
    states: list[HealthState] = []
    buffer.monitor.subscribe(lambda health: states.append(health.state))
    buffer.start()
    try:
        buffer.add("m1", (0, 0, 3, 1, 0, 0.0, None))
        end = finish("m1")
        buffer.add_finish(end)
        assert await asyncio.wait_for(end.done, 5) == []
    finally:
        await buffer.stop(1.0)
    # Eight tries of the same batch; the end was settled only by the one that committed.
    assert len(writer.batches) == 8 and len(set(map(str, writer.batches))) == 1
    gaps = [b - a for a, b in itertools.pairwise(writer.at)]
    # The waits double from the interval and stop growing at the cap (lower bounds:
    # a loaded machine can only make them longer).
    for gap, least in zip(gaps, [0.01, 0.02, 0.04, 0.04, 0.04, 0.04, 0.04], strict=True):
        assert gap >= least * 0.9
    assert states == [HealthState.DEGRADED, HealthState.OK]


async def test_stop_hands_back_what_could_not_be_written_with_its_ends_unsettled() -> None:
    writer = ScriptedWriter(failures=1_000_000)
    buffer = MoveBuffer(writer, interval=0.01, finish_delay=0.0)
    buffer.start()
    buffer.add_match({"id": "m1"})
    for ply in range(3):
        buffer.add("m1", (ply, ply % 2, 3, 1, 0, 0.0, None))
    end = finish("m1")
    buffer.add_finish(end)
    left = await buffer.stop(0.5)
    assert list(left.matches) == ["m1"]
    assert [row[0] for row in left.moves["m1"]] == [0, 1, 2]
    assert left.finishes == [end] and not end.done.done()
    assert len(buffer) == 0 and not buffer.pending().ends


async def test_reports_past_the_cap_are_dropped_until_a_commit_makes_room(
    caplog: Any,
) -> None:
    """The moves are all kept; only reports that would take the unwritten report text past
    ``max_analysis_bytes`` are left out, and the cap counts a batch until it commits."""
    report = '{"simulations":100}'  # 19 characters
    writer = ScriptedWriter(failures=1)
    buffer = MoveBuffer(writer, interval=60.0, max_analysis_bytes=3 * len(report))
    for ply in range(5):
        buffer.add("m1", (ply, ply % 2, 3, 1, 0, 0.0, report))
    assert [row[6] for row in buffer.peek("m1")] == [report] * 3 + [None] * 2
    assert (buffer.analysis_bytes, buffer.stats.reports_dropped) == (3 * len(report), 2)
    assert "moves are stored without their report" in caplog.text

    # A failed write keeps its batch, and its reports still count.
    with contextlib.suppress(StoreError):
        await buffer.flush()
    buffer.add("m1", (5, 1, 3, 1, 0, 0.0, report))
    assert buffer.stats.reports_dropped == 3
    # The retry commits: room again, and the log says how many went without.
    await buffer.flush()
    assert writer.batches[1][1] == {"m1": [0, 1, 2, 3, 4, 5]}
    assert buffer.analysis_bytes == 0
    assert "3 moves were stored without theirs" in caplog.text
    buffer.add("m1", (6, 0, 3, 1, 0, 0.0, report))
    assert [row[6] for row in buffer.peek("m1")] == [report]
    assert buffer.analysis_bytes == len(report)
