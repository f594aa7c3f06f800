"""The matchmaker with a seek queue (several nodes): when it asks the queue to read ahead,
and that it starts each batch of a pass's pairings before the pass goes on."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Coroutine
from typing import Any

import pytest

from arena.play.lobby import Lobby, Pairing
from arena.play.matchmaker import START_SLICE_S, Matchmaker
from protocol.messages import TimeControl

TC = TimeControl(move_ms=1000, bank_ms=0)


class _Queue:
    """Two batches; what happened, in order."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def prefetch(self) -> None:
        self.log.append("prefetch")

    async def batches(self) -> AsyncGenerator[list[Pairing], None]:
        self.log.append("pass")
        yield [Pairing("connect4", ("a", "b"), TC)]
        self.log.append("sync")  # a second round trip, after the first batch started
        yield [Pairing("connect4", ("c", "d"), TC), Pairing("connect4", ("e", "f"), TC)]

    def started(self, pairing: Pairing, match: object) -> None:
        self.log.append(f"started {pairing.players[0]}")


class _Registry:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def prepare(self, pairings: list[Pairing]) -> None:
        self.log.append(f"prepare {len(pairings)}")

    async def start(self, pairing: Pairing) -> object:
        self.log.append(f"start {pairing.players[0]}")
        return object()


def _matchmaker(
    log: list[str], queue: object, window_s: float, **options: Any
) -> tuple[Matchmaker, list[asyncio.Task[Any]]]:
    """A matchmaker over ``_Registry(log)`` and ``queue``; the tasks it spawns."""
    tasks: list[asyncio.Task[Any]] = []

    def spawn(coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        tasks.append(task := asyncio.get_running_loop().create_task(coro, name=name))
        return task

    matchmaker = Matchmaker(
        Lobby(has_capacity=lambda bot: True, rng=random.Random(1)),
        _Registry(log),  # type: ignore[arg-type]
        window_s=window_s,
        spawn=spawn,
        tell=lambda bot, message: None,
        queue=queue,  # type: ignore[arg-type]
        **options,
    )
    return matchmaker, tasks


async def test_a_pass_through_a_queue_reads_ahead_and_starts_each_batch_as_it_comes() -> None:
    log: list[str] = []
    matchmaker, tasks = _matchmaker(log, _Queue(log), 0.02)
    matchmaker.schedule()
    matchmaker.schedule()  # a pass is due already: nothing more
    await asyncio.gather(*tasks)
    assert log == [
        "prefetch",  # READ_AHEAD_S before the window ends
        "pass",
        "prepare 1",  # each batch's pairs' history is read before its first start
        "start a",
        "started a",
        "sync",
        "prepare 2",
        "start c",
        "started c",
        "start e",
        "started e",
    ]


class _OneBatch:
    """One batch of six pairings."""

    def prefetch(self) -> None:
        pass

    async def batches(self) -> AsyncGenerator[list[Pairing], None]:
        yield [Pairing("connect4", (f"a{i}", f"b{i}"), TC) for i in range(6)]

    def started(self, pairing: Pairing, match: object) -> None:
        pass


class _SteppingClock:
    """A clock that moves ``step`` seconds at every reading."""

    def __init__(self, step: float) -> None:
        self.step, self.now = step, 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _runs_of_starts(log: list[str]) -> list[int]:
    """How many matches started in each turn of the loop (between two ticks)."""
    runs, current = [], 0
    for entry in log:
        if entry.startswith("start"):
            current += 1
        elif current:
            runs.append(current)
            current = 0
    return runs + ([current] if current else [])


@pytest.mark.parametrize(("step", "runs"), [(0.0, [6]), (START_SLICE_S / 2, [2, 2, 2])])
async def test_a_pass_lets_moves_in_once_a_slice_not_after_every_start(
    step: float, runs: list[int]
) -> None:
    log: list[str] = []

    async def ticks() -> None:  # stands for the moves the loop serves between starts
        while True:
            log.append("tick")
            await asyncio.sleep(0)

    ticker = asyncio.get_running_loop().create_task(ticks())
    matchmaker, tasks = _matchmaker(log, _OneBatch(), 0.0, clock=_SteppingClock(step))
    matchmaker.schedule()
    await asyncio.gather(*tasks)
    ticker.cancel()
    # A still clock: one slice, all six in one turn; a slice per two starts: three turns.
    assert _runs_of_starts(log) == runs, log
