"""The server's hot path: matches opened and ended through the group commit, and the
rate limit that does not count the moves a bot's turns ask for."""

from __future__ import annotations

import asyncio
from typing import Any

from arena.net.limits import TokenBucket
from arena.play.clock import ManualClock
from arena.server import ArenaServer
from arena.store import RatingChange, Store
from arena.store.movebuffer import Batch
from protocol.games import Termination, new_game
from protocol.messages import Error, MatchStart, YourTurn

GAME = "connect4"


async def test_opened_matches_moves_and_ends_share_one_transaction(store: Store) -> None:
    for name in ("alpha", "beta", "gamma"):
        await store.add_bot(name)
    first = await store.open_match(GAME, ("alpha", "beta"), 1000, 0)
    second = await store.open_match(GAME, ("beta", "gamma"), 1000, 0)
    for match_id in (first, second):
        for ply in range(5):
            store.record_move(match_id, ply, ply % 2, ply, 1, 0)
    # Both ends (beta plays in both) go into one batch, applied in the order queued.
    ends = await asyncio.gather(
        store.finish_match(first, 0, Termination.LINE, None, True),
        store.finish_match(second, 0, Termination.LINE, None, True),
    )
    assert ends[0] == [RatingChange("alpha", 1500.0, 1516.0), RatingChange("beta", 1500.0, 1484.0)]
    assert ends[1][0].bot == "beta" and ends[1][0].before == 1484.0
    stats = store.commit_stats
    assert (stats.moves, stats.finishes, stats.failures) == (10, 2, 0)
    assert 1 <= stats.commits == len(stats.recent_s) and 5 <= stats.largest <= 10
    assert all(0 < seconds < 10 for seconds in stats.recent_s)
    for match_id in (first, second):
        match = await store.get_match(match_id)
        assert match is not None and match.status == "finished" and len(match.moves) == 5
    board = {row.bot: row.rating for row in await store.leaderboard(GAME)}
    assert await store.rebuild_ratings() == 2
    assert {row.bot: row.rating for row in await store.leaderboard(GAME)} == board
    assert await store.rating_hint("beta", GAME) == board["beta"]


def test_a_bucket_scales_with_max_matches_and_refunds() -> None:
    bucket = TokenBucket(1.0, 2, ManualClock())
    bucket.scale(3)
    assert [bucket.take() for _ in range(7)] == [True] * 6 + [False]
    bucket.refund()
    assert bucket.take() is True


async def test_moves_answering_a_turn_are_not_rate_limited(make_server: Any, bot: Any) -> None:
    server: ArenaServer = await make_server(rate_per_s=0.001, rate_burst=5)
    alice, bob = await bot("alice", target=server), await bot("bob", target=server)
    tc = {"move_ms": 2000, "bank_ms": 0}
    for client in (alice, bob):
        await client.send(type="seek", game=GAME, time_control=tc)
    seats = {(await c.expect(MatchStart)).you: c for c in (alice, bob)}
    state = new_game(GAME)
    for _ in range(16):  # eight moves each: more than the bucket holds
        mover = seats[state.to_move]
        turn = await mover.expect(YourTurn)
        move = next(m for m in state.legal_moves() if state.play(m).outcome() is None)
        await mover.move(turn, move)
        state = state.play(move)
    await seats[state.to_move].expect(YourTurn)
    assert not [m for c in (alice, bob) for m in c.seen if isinstance(m, Error)]


async def test_a_match_whose_row_is_on_its_way_to_the_database_is_listed(store: Store) -> None:
    """The flusher has taken the batch with the new match's row but not committed it: a
    listing waits for that batch rather than missing a match that has started."""
    await store.add_bot("alpha")
    await store.add_bot("beta")
    buffer = store._buffer
    release, writing = asyncio.Event(), asyncio.Event()
    write = buffer._write

    async def slow_write(batch: Batch) -> None:  # the database is slow to commit this batch
        writing.set()
        await release.wait()
        await write(batch)

    buffer._write = slow_write
    match_id = await store.open_match("connect4", ("alpha", "beta"), 1000, 0)
    flushing = asyncio.create_task(store.flush())
    await writing.wait()
    assert buffer.pending().matches == 0  # taken from the queue: on its way
    listing = asyncio.create_task(store.list_matches(status="live"))
    await asyncio.sleep(0.2)  # room for a listing that does not wait to read the database
    release.set()
    await flushing
    assert [m.id for m in await listing] == [match_id]
