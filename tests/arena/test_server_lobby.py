"""Seeks, challenges and pairing over real sockets (and the pure lobby for rating preference)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from sqlalchemy import event

from arena.play.lobby import Lobby
from arena.server import ArenaServer
from protocol.errors import ProtocolError
from protocol.messages import (
    ChallengeDeclined,
    ChallengeReceived,
    MatchEnd,
    MatchStart,
    TimeControl,
    YourTurn,
)

TC = {"move_ms": 2000, "bank_ms": 0}


def test_pairing_prefers_the_closest_rating() -> None:
    lobby = Lobby(has_capacity=lambda bot: True, rng=random.Random(1))
    tc = TimeControl(1000)
    lobby.seek("weak", "connect4", tc, 1200.0)
    lobby.seek("strong", "connect4", tc, 1800.0)
    lobby.seek("other-game", "tictactoe", tc, 1750.0)
    lobby.seek("other-tc", "connect4", TimeControl(500), 1750.0)
    lobby.seek("newcomer", "connect4", tc, 1700.0)
    [pairing] = lobby.pair()
    assert set(pairing.players) == {"newcomer", "strong"}
    assert [s.bot for s in lobby.seeks] == ["weak", "other-game", "other-tc"]
    lobby.seek("weaker", "connect4", tc, 1100.0)
    [pairing] = lobby.pair()
    assert set(pairing.players) == {"weak", "weaker"}


def test_a_bot_pairs_once_per_pass_and_waits_without_capacity() -> None:
    busy = {"full"}
    lobby = Lobby(has_capacity=lambda bot: bot not in busy, rng=random.Random(1))
    tc = TimeControl(1000)
    for bot, game in [
        ("a", "connect4"),
        ("a", "tictactoe"),
        ("b", "connect4"),
        ("c", "tictactoe"),
        ("full", "uttt"),
    ]:
        if bot != "full":
            lobby.seek(bot, game, tc, 1500.0)
    assert [p.game for p in lobby.pair()] == ["connect4"]
    assert [p.game for p in lobby.pair()] == ["tictactoe"]


def test_a_bot_never_pairs_with_itself_and_cannot_seek_twice() -> None:
    lobby = Lobby(has_capacity=lambda bot: True, rng=random.Random(1))
    tc = TimeControl(1000)
    lobby.seek("solo", "connect4", tc, 1500.0)
    lobby.seek("solo", "tictactoe", tc, 1500.0)
    assert lobby.pair() == []
    with pytest.raises(ProtocolError) as again:
        lobby.seek("solo", "connect4", tc, 1500.0)
    assert again.value.code == "already_seeking"
    with pytest.raises(ProtocolError) as unknown:
        lobby.seek("solo", "chess", tc, 1500.0)
    assert unknown.value.code == "no_such_game"


async def test_challenge_accept_starts_a_match(server: ArenaServer, bot: Any) -> None:
    alice, bob = await bot("alice"), await bot("bob")
    await alice.send(type="challenge", opponent="bob", game="tictactoe", time_control=TC)
    challenge = await bob.expect(ChallengeReceived)
    assert (challenge.challenger, challenge.game) == ("alice", "tictactoe")
    await bob.send(type="accept", challenge_id=challenge.challenge_id)
    start_a, start_b = await alice.expect(MatchStart), await bob.expect(MatchStart)
    assert start_a.match_id == start_b.match_id and start_a.game == "tictactoe"
    await bob.send(type="accept", challenge_id=challenge.challenge_id)
    await bob.expect_error("no_such_challenge")


async def test_challenge_decline_tells_the_challenger(server: ArenaServer, bot: Any) -> None:
    alice, bob = await bot("alice"), await bot("bob")
    await alice.send(type="challenge", opponent="bob", game="connect4", time_control=TC)
    challenge = await bob.expect(ChallengeReceived)
    await alice.send(type="accept", challenge_id=challenge.challenge_id)  # not addressed to her
    await alice.expect_error("no_such_challenge")
    await bob.send(type="decline", challenge_id=challenge.challenge_id)
    declined = await alice.expect(ChallengeDeclined)
    assert (declined.challenge_id, declined.by) == (challenge.challenge_id, "bob")


async def test_challenges_need_an_online_bot_and_a_known_game(
    server: ArenaServer, bot: Any
) -> None:
    alice = await bot("alice")
    await alice.send(type="challenge", opponent="carol", game="connect4", time_control=TC)
    await alice.expect_error("no_such_bot")
    await bot("carol")
    await alice.send(type="challenge", opponent="carol", game="chess", time_control=TC)
    await alice.expect_error("no_such_game")
    await alice.send(type="seek", game="connect4", time_control={"move_ms": 1})
    await alice.expect_error("bad_value")


async def test_cancel_seek_withdraws(server: ArenaServer, bot: Any) -> None:
    alice, bob = await bot("alice"), await bot("bob")
    await alice.send(type="seek", game="connect4", time_control=TC)
    await alice.send(type="cancel_seek", game="connect4")
    await alice.send(type="games")
    assert (await alice.recv()).type == "games"  # round trip: the cancel is processed
    await bob.send(type="seek", game="connect4", time_control=TC)
    await bob.send(type="games")
    assert (await bob.recv()).type == "games"
    assert [s.bot for s in server.lobby.seeks] == ["bob"]


async def test_seeks_read_the_boards_built_at_start_not_the_database(
    server: ArenaServer, bot: Any
) -> None:
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(server.store.engine.sync_engine, "before_cursor_execute", count)
    try:
        alice = await bot("alice")
        # The server built every game's board before it listened: not rated yet, 1500.
        assert server.leaderboards.rating_now("alice", "connect4") == 1500.0
        assert server.leaderboards.rating_now("alice", "uttt") == 1500.0
        after_hello = len(statements)
        # Every seek, the first included, takes the synchronous path; errors are answered
        # the same way.
        await alice.send(type="seek", game="connect4", time_control={"move_ms": 1}, id="bad-tc")
        assert (await alice.expect_error("bad_value")).ref == "bad-tc"
        await alice.send(type="seek", game="connect4", time_control=TC)
        await alice.send(type="seek", game="connect4", time_control=TC, id="twice")
        assert (await alice.expect_error("already_seeking")).ref == "twice"
        assert [(s.bot, s.rating) for s in server.lobby.seeks] == [("alice", 1500.0)]
        assert after_hello > 0 and statements[after_hello:] == []
    finally:
        event.remove(server.store.engine.sync_engine, "before_cursor_execute", count)


async def test_max_matches_allows_simultaneous_matches(server: ArenaServer, bot: Any) -> None:
    alice = await bot("alice", max_matches=2)
    bob, carol = await bot("bob"), await bot("carol")
    await alice.send(type="seek", game="connect4", time_control=TC)
    await bob.send(type="seek", game="connect4", time_control=TC)
    first = await alice.expect(MatchStart)
    await alice.send(type="seek", game="connect4", time_control=TC)
    await carol.send(type="seek", game="connect4", time_control=TC)
    second = await alice.expect(MatchStart)
    assert first.match_id != second.match_id
    assert {first.players, second.players} != set()
    await bob.send(type="seek", game="tictactoe", time_control=TC)  # bob is at its limit
    await bob.expect_error("already_seeking")


async def test_a_finished_match_frees_the_seat_for_the_next_pairing(
    server: ArenaServer, bot: Any
) -> None:
    alice, bob = await bot("alice"), await bot("bob")
    for _ in range(2):
        await alice.send(type="seek", game="tictactoe", time_control=TC)
        await bob.send(type="seek", game="tictactoe", time_control=TC)
        start = await alice.expect(MatchStart)
        await alice.send(type="resign", match_id=start.match_id)
        end = await bob.expect(MatchEnd)
        assert end.termination == "resign"
        await alice.expect(MatchEnd)
    assert not [m for m in alice.seen if isinstance(m, YourTurn) and m.match_id == "x"]
