"""The matchmaker with a seek queue (several nodes): when it asks the queue to read ahead,
and that it starts each batch of a pass's pairings before the pass goes on."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Coroutine
from typing import Any

from arena.play.lobby import Lobby, Pairing
from arena.play.matchmaker import Matchmaker
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


async def test_a_pass_through_a_queue_reads_ahead_and_starts_each_batch_as_it_comes() -> None:
    log: list[str] = []
    tasks: list[asyncio.Task[Any]] = []

    def spawn(coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        tasks.append(task := asyncio.get_running_loop().create_task(coro, name=name))
        return task

    matchmaker = Matchmaker(
        Lobby(has_capacity=lambda bot: True, rng=random.Random(1)),
        _Registry(log),  # type: ignore[arg-type]
        window_s=0.02,
        spawn=spawn,
        tell=lambda bot, message: None,
        queue=_Queue(log),
    )
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
