"""Login reads in batches: the bots that log in while one read runs are read together next.

A login reads the bot's row and its ratings (``Store.authenticate``). One
transaction per login is fine for a bot that reconnects; it is not when a
server restarts and two thousand bots log in within a second. On a busy
event loop every ``aiosqlite`` call waits a turn of the loop for its answer,
so 2,000 reads of a few calls each queued for seconds (bench.load, 1,000
matches: logins answered up to 3.5 s after their hello), and every other
read queued behind them: the rated openings' pair history, which a pairing
pass waits for, took 2-3 s, and the load bench's pairing p99 was seconds.

``LoginReads.read(name)`` queues the name. One task reads: the names
queued so far in one transaction (``queries.in_chunks`` per statement),
then the names queued while it ran, until none wait. A lone login is read
at once, as before; under a storm each read takes in everything that
arrived during the last one. A read that fails fails every login it held
(each caller sees the error, as it would have from its own read); the
logins queued after it are read next.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from arena.store.models import Bot, Rating
from arena.store.queries import in_chunks

Login = tuple[Bot, dict[str, float]]
"""A bot's row and its ratings by game, as one login needs them."""


async def read_logins(session: AsyncSession, names: Sequence[str]) -> dict[str, Login]:
    """The rows and ratings of the bots named ``names`` that exist (active or not)."""
    bots: dict[int, Bot] = {}
    for chunk in in_chunks(names):
        for bot in await session.scalars(select(Bot).where(Bot.name.in_(chunk))):
            bots[bot.id] = bot
    ratings: dict[int, dict[str, float]] = {bot_id: {} for bot_id in bots}
    for ids in in_chunks(list(bots)):
        query = select(Rating.bot_id, Rating.game, Rating.rating).where(Rating.bot_id.in_(ids))
        for bot_id, game, rating in await session.execute(query):
            ratings[bot_id][game] = rating
    return {bot.name: (bot, ratings[bot_id]) for bot_id, bot in bots.items()}


class LoginReads:
    """Reads logins in batches; see the module docstring."""

    def __init__(self, transaction: Callable[[], AbstractAsyncContextManager[AsyncSession]]):
        self._transaction = transaction
        self._wanted: dict[str, list[asyncio.Future[Login | None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self.reads = 0
        """Transactions run so far (for tests and the curious)."""

    async def read(self, name: str) -> Login | None:
        """``name``'s row and ratings, None when no such bot exists; raises what the read
        raised when it failed."""
        waiter: asyncio.Future[Login | None] = asyncio.get_running_loop().create_future()
        self._wanted.setdefault(name, []).append(waiter)
        if self._task is None:
            self._task = asyncio.create_task(self._read_all(), name="login reads")
        return await waiter

    def close(self) -> None:
        """Stop reading: the logins still waiting are cancelled."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        for waiters in self._wanted.values():
            for waiter in waiters:
                waiter.cancel()
        self._wanted.clear()

    async def _read_all(self) -> None:
        try:
            while self._wanted:
                batch, self._wanted = self._wanted, {}
                try:
                    self.reads += 1
                    async with self._transaction() as session:
                        found = await read_logins(session, sorted(batch))
                except asyncio.CancelledError:
                    _settle(batch, None)
                    raise
                except Exception as error:
                    _settle(batch, error)
                else:
                    for name, waiters in batch.items():
                        for waiter in waiters:
                            if not waiter.done():
                                waiter.set_result(found.get(name))
        finally:
            if self._task is asyncio.current_task():
                self._task = None


def _settle(batch: dict[str, list[asyncio.Future[Any]]], error: BaseException | None) -> None:
    """End every waiter of ``batch`` unanswered: with ``error``, or cancelled (None)."""
    for waiters in batch.values():
        for waiter in waiters:
            if waiter.done():
                continue
            if error is None:
                waiter.cancel()
            else:
                waiter.set_exception(error)
