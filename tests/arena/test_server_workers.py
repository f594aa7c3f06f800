"""One bot, many connections: worker logins (hello ``worker``) on a real server (port 0).

Scripted websocket clients play the workers: each brings its own seats, its
matches reach it alone, the bot keeps one name and one rating, a worker that
leaves loses only its own match, and a plain login still replaces.
"""

from __future__ import annotations

import asyncio
from typing import Any

from arena.server import ArenaServer
from arena.store import Store
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.settings import TournamentSettings
from protocol.messages import (
    ChallengeReceived,
    MatchEnd,
    MatchStart,
    Moved,
    RatingReport,
    YourTurn,
)
from tests.arena.conftest import BotFactory, Client, ServerFactory
from tests.tournament_bots import AutoBots

TC = {"move_ms": 5000, "bank_ms": 0}
MATCH_MESSAGES = (MatchStart, YourTurn, Moved, MatchEnd)


async def seek(client: Client, game: str = "tictactoe") -> None:
    """Ask to play ``game`` at ``TC``."""
    await client.send(type="seek", game=game, time_control=TC)


async def play_out(client: Client, matches: int) -> list[MatchEnd]:
    """Answer every turn with the first legal move until ``matches`` matches ended."""
    ends: list[MatchEnd] = []
    while len(ends) < matches:
        message = await client.recv(timeout=10)
        if isinstance(message, YourTurn):
            await client.move(message, message.legal_moves[0])
        elif isinstance(message, MatchEnd):
            ends.append(message)
    return ends


async def two_matches(
    bot: BotFactory, worker_ids: tuple[str | None, str | None] = (None, None), **login: Any
) -> tuple[Client, Client, Client, str, str]:
    """Two workers of alice (with ``worker_ids``, where given), each in its own match against
    bob (two seats, one login)."""
    ids = [{} if worker_id is None else {"worker_id": worker_id} for worker_id in worker_ids]
    w1 = await bot("alice", worker=True, **ids[0], **login)
    w2 = await bot("alice", worker=True, **ids[1], **login)
    bob = await bot("bob", max_matches=2, **login)
    await seek(w1)
    await seek(bob)
    first = (await w1.expect(MatchStart)).match_id
    await seek(w2)
    await seek(bob)
    second = (await w2.expect(MatchStart)).match_id
    assert first != second
    return w1, w2, bob, first, second


async def test_two_workers_play_at_once_under_one_name_and_one_rating(
    server: ArenaServer, bot: BotFactory, store: Store
) -> None:
    w1, w2, bob, first, second = await two_matches(bot)
    assert server.parts.seats.free_seats("alice") == 0  # 1 + 1 seats, both in use
    assert server.registry.playing("alice") == 2
    ends = await asyncio.gather(play_out(w1, 1), play_out(w2, 1), play_out(bob, 2))
    assert ends[0][0].match_id == first and ends[1][0].match_id == second
    # Each worker heard only of its own match, and of every rating of the bot.
    for worker, mine in ((w1, first), (w2, second)):
        played = {m.match_id for m in worker.seen if isinstance(m, MATCH_MESSAGES)}
        assert played == {mine}
        rated = {m.match_id for m in worker.seen if isinstance(m, RatingReport)}
        while rated != {first, second}:
            rated.add((await worker.expect(RatingReport)).match_id)
    # One name on the leaderboard, rated once per game.
    board = {row.bot: row for row in await store.leaderboard("tictactoe")}
    assert board["alice"].games == board["bob"].games == 2
    assert len(await store.list_matches(status="finished", game="tictactoe")) == 2


async def test_a_worker_that_leaves_loses_its_match_and_the_others_play_on(
    make_server: ServerFactory, bot: BotFactory, store: Store
) -> None:
    target = await make_server(grace_s=0.2)
    w1, w2, bob, first, second = await two_matches(bot, target=target)

    async def move_once_then_leave() -> None:
        # After its first move: leaving before it would abort the match (a no-show).
        turn = await w1.expect(YourTurn)
        await w1.move(turn, turn.legal_moves[0])
        await w1.close()

    _, w2_ends, bob_ends = await asyncio.gather(
        move_once_then_leave(), play_out(w2, 1), play_out(bob, 2)
    )
    assert w2_ends[0].match_id == second and w2_ends[0].termination != "disconnect"
    lost = next(end for end in bob_ends if end.match_id == first)
    assert lost.termination == "disconnect" and lost.fault == "bot"
    assert lost.winner == next(
        m.you for m in bob.seen if isinstance(m, MatchStart) and m.match_id == first
    )
    # The remaining worker was never handed the abandoned match.
    assert not any(m.match_id == first for m in w2.seen if isinstance(m, MATCH_MESSAGES))
    assert target.parts.presence.max_matches["alice"] == 1  # w2's seat only


async def test_workers_join_each_other_and_a_plain_login_replaces_them_all(
    server: ArenaServer, bot: BotFactory
) -> None:
    presence = server.parts.presence
    plain = await bot("alice", max_matches=3)
    w1 = await bot("alice", max_matches=2, worker=True)
    await plain.expect_error("replaced")  # a worker replaces a plain connection
    assert await plain.closed() == 4001
    w2 = await bot("alice", max_matches=3, worker=True)
    assert presence.max_matches["alice"] == 5
    assert server.parts.seats.free_seats("alice") == 5
    again = await bot("alice")
    for worker in (w1, w2):
        await worker.expect_error("replaced")
        assert await worker.closed() == 4001
    assert presence.max_matches["alice"] == 1 and "alice" not in presence.workers
    assert presence.bots["alice"] is not None and presence.is_online("alice")
    await again.close()


async def test_a_tournament_deals_its_games_to_every_worker_s_seats(
    server: ArenaServer, tokens: dict[str, str]
) -> None:
    bots = AutoBots(server.port, tokens)
    try:
        gate = asyncio.Event()  # nobody moves before both of alice's seats are in play
        workers = [await bots("alice", {"worker": True}, gate=gate) for _ in range(2)]
        await bots("bob", {"max_matches": 2}, gate=gate)
        assert server.parts.seats.free_seats("alice") == 2
        assert server.tournaments is not None
        scheduler = server.tournaments.scheduler
        settings = TournamentSettings(
            game="tictactoe", format="round-robin", bots=("alice", "bob"), games_per_pair=4,
            move_ms=2000, concurrency=2, openings="test",
        )  # fmt: skip
        tid = await scheduler.create(settings, OpeningSuite("test", ((4,), (0,))))
        async with asyncio.timeout(30):
            while not all(w.starts for w in workers):  # one game on each worker at once
                await asyncio.sleep(0.01)
            gate.set()
            while (await scheduler.status(tid))["status"] != "finished":
                await asyncio.sleep(0.02)
        assert all(len(w.starts) == len(w.ends) >= 1 for w in workers)
        assert sum(len(w.ends) for w in workers) == 4
    finally:
        await bots.close()


async def test_a_reset_token_closes_every_worker(
    server: ArenaServer, bot: BotFactory, store: Store
) -> None:
    workers = [await bot("alice", worker=True) for _ in range(2)]
    await store.reset_token("alice")
    await server.gateway.recheck_logins()
    for worker in workers:
        await worker.expect_error("auth_failed")
        assert await worker.closed() == 1008
    async with asyncio.timeout(5):  # the server hears of the closes on its own time
        while server.parts.presence.is_online("alice"):
            await asyncio.sleep(0.01)
    assert "alice" not in server.parts.presence.workers


async def test_a_challenge_goes_to_the_worker_with_the_most_room(
    server: ArenaServer, bot: BotFactory
) -> None:
    roomy = await bot("alice", worker=True, max_matches=2)
    newest = await bot("alice", worker=True, max_matches=1)  # a plain tell would pick it
    carol = await bot("carol")
    await carol.send(type="challenge", opponent="alice", game="tictactoe", time_control=TC)
    challenge = await roomy.expect(ChallengeReceived)
    await roomy.send(type="accept", challenge_id=challenge.challenge_id)
    started = await roomy.expect(MatchStart)
    assert started.match_id == (await carol.expect(MatchStart)).match_id
    assert not any(isinstance(m, ChallengeReceived | MatchStart) for m in newest.seen)


async def test_a_worker_back_on_a_new_connection_takes_over_its_half_open_one(
    server: ArenaServer, bot: BotFactory
) -> None:
    presence = server.parts.presence
    # w-2 is another worker: it joins w-1.
    w1, w2, bob, first, second = await two_matches(bot, ("w-1", "w-2"))
    assert presence.max_matches["alice"] == 2
    # w1 comes back on a new connection while the server still holds the old one open.
    back = await bot("alice", worker=True, worker_id="w-1")
    await w1.expect_error("replaced")
    assert await w1.closed() == 4001
    resumed = await back.expect(MatchStart)
    assert resumed.match_id == first
    assert presence.max_matches["alice"] == 2  # w1's seat once, not twice
    assert server.parts.seats.free_seats("alice") == 0
    ends = await asyncio.gather(play_out(back, 1), play_out(w2, 1), play_out(bob, 2))
    assert ends[0][0].match_id == first and ends[0][0].termination != "disconnect"
    assert ends[1][0].match_id == second
    assert not any(m.match_id == second for m in back.seen if isinstance(m, MATCH_MESSAGES))
