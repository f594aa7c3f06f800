"""Logins read in batches (``arena.store.logins``): a storm of logins is a few reads, each
login still answered as alone, and a failed read fails only the logins it held."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from arena.store import Store
from arena.store.logins import LoginReads
from tests.arena.rating_data import seed_results

GAME = "connect4"


async def test_logins_that_arrive_together_are_read_together_and_answered_each_alone(
    store: Store,
) -> None:
    tokens = {f"bot{i}": await store.add_bot(f"bot{i}") for i in range(30)}
    await seed_results(store, GAME, [("bot1", "bot2", 1.0)])
    await store.remove_bot("bot3")
    before = store._login_reads.reads
    asked = [(name, token) for name, token in tokens.items()]
    asked += [("bot4", tokens["bot5"]), ("nobody", tokens["bot6"]), ("bot7", "")]
    answers = await asyncio.gather(*(store.authenticate(name, token) for name, token in asked))
    # One transaction for all 33: each caller queued its name before the read began.
    assert store._login_reads.reads == before + 1
    logged_in = {name for (name, _), answer in zip(asked, answers, strict=True) if answer}
    assert logged_in == set(tokens) - {"bot3"}
    for (name, _), answer in zip(asked, answers, strict=True):
        assert answer is None or answer.name == name
    # The ratings came with the logins: read into the cache, as a login alone reads them.
    rated, rating = store.cached_rating("bot1", GAME)
    assert rated and rating == await store.rating("bot1", GAME)
    assert store.cached_rating("bot9", GAME) == (True, None)


async def test_logins_that_arrive_during_a_read_wait_for_the_next_one(store: Store) -> None:
    tokens = {f"bot{i}": await store.add_bot(f"bot{i}") for i in range(12)}
    before = store._login_reads.reads
    first = asyncio.ensure_future(store.authenticate("bot0", tokens["bot0"]))
    await asyncio.sleep(0)  # the read of bot0 is under way
    rest = [store.authenticate(name, tokens[name]) for name in list(tokens)[1:]]
    answers = await asyncio.gather(first, *rest)
    assert all(answers)
    assert store._login_reads.reads == before + 2


async def test_a_failed_read_fails_its_logins_and_the_next_read_serves_the_rest(
    store: Store,
) -> None:
    for i in range(4):
        await store.add_bot(f"bot{i}")
    failures = [OSError("disk I/O error")]

    @contextlib.asynccontextmanager
    async def transaction() -> AsyncIterator[AsyncSession]:
        if failures:
            raise failures.pop()
        async with store._read() as session:
            yield session

    reads = LoginReads(transaction)
    first = asyncio.ensure_future(reads.read("bot0"))
    await asyncio.sleep(0)
    later = [asyncio.ensure_future(reads.read(name)) for name in ("bot1", "bot2", "missing")]
    with pytest.raises(OSError, match="disk I/O error"):
        await first
    found = await asyncio.gather(*later)
    assert [row[0].name if row else None for row in found] == ["bot1", "bot2", None]
    assert reads.reads == 2


async def test_closing_cancels_the_logins_still_waiting(store: Store) -> None:
    await store.add_bot("bot0")
    reads = LoginReads(store._read)
    waiting = asyncio.ensure_future(reads.read("bot0"))
    await asyncio.sleep(0)
    reads.close()
    with pytest.raises(asyncio.CancelledError):
        await waiting
