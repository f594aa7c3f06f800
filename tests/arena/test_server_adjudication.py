"""Every way a match can end, driven by scripted (mis)behaving bots over real sockets."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.server import ArenaServer
from protocol.messages import MatchEnd, MatchStart, Moved, YourTurn


async def stored(server: ArenaServer, match_id: str) -> Any:
    record = await server.store.get_match(match_id)
    assert record is not None
    return record


@pytest.mark.parametrize("bad_move", [99, "3", -1, 3.5, [3], None])
async def test_an_illegal_or_malformed_move_loses(
    server: ArenaServer, start_match: Any, bad_move: object
) -> None:
    pair = await start_match()
    turn = await pair.x.expect(YourTurn)
    await pair.x.move(turn, 3)
    turn = await pair.o.expect(YourTurn)
    await pair.o.send(type="move", match_id=turn.match_id, ply=turn.ply, move=bad_move)
    end = await pair.x.expect(MatchEnd)
    assert (end.winner, end.termination, end.fault, end.faulty_player) == (
        0,
        "illegal_move",
        "bot",
        1,
    )
    assert end.rated
    assert await pair.o.expect(MatchEnd) == end
    record = await stored(server, pair.match_id)
    assert (record.status, record.termination, record.winner) == ("finished", "illegal_move", 0)


async def test_a_full_column_loses(server: ArenaServer, start_match: Any) -> None:
    pair = await start_match()
    for ply in range(6):
        player = pair.seat(ply % 2)
        turn = await player.expect(YourTurn)
        await player.move(turn, 0)
    turn = await pair.x.expect(YourTurn)
    await pair.x.move(turn, 0)
    end = await pair.x.expect(MatchEnd)
    assert (end.termination, end.faulty_player) == ("illegal_move", 0)
    assert "full" in end.reason or "not legal" in end.reason


async def test_timeout_loses_and_a_late_move_is_refused(
    server: ArenaServer, start_match: Any
) -> None:
    pair = await start_match(move_ms=300)
    turn = await pair.x.expect(YourTurn)
    await pair.x.move(turn, 3)
    turn = await pair.o.expect(YourTurn)
    await pair.o.move(turn, 3)
    late_turn = await pair.x.expect(YourTurn)
    end = await pair.x.expect(MatchEnd, timeout=3)  # x never answers ply 2
    assert (end.winner, end.termination, end.fault, end.faulty_player) == (1, "timeout", "bot", 0)
    assert end.rated
    await pair.x.move(late_turn, 4)
    await pair.x.expect_error("match_over")
    await pair.x.send(type="games")  # the socket stays open
    assert (await pair.x.recv()).type == "games"
    record = await stored(server, pair.match_id)
    assert [m.think_ms >= 0 for m in record.moves] == [True, True]


@pytest.mark.parametrize("silent_seat", [0, 1])
async def test_a_missing_first_move_aborts_unrated(
    server: ArenaServer, start_match: Any, silent_seat: int
) -> None:
    pair = await start_match(move_ms=200)
    if silent_seat == 1:
        turn = await pair.x.expect(YourTurn)
        await pair.x.move(turn, 3)
    end = await pair.x.expect(MatchEnd, timeout=3)
    assert (end.winner, end.result, end.termination) == (None, "*", "aborted")
    assert (end.fault, end.faulty_player, end.rated) == (None, None, False)
    assert end.reason.startswith(f"{pair.names[silent_seat]} ran out of time")
    record = await stored(server, pair.match_id)
    assert record.status == "aborted"


async def test_resign_loses(server: ArenaServer, start_match: Any) -> None:
    pair = await start_match()
    turn = await pair.x.expect(YourTurn)
    await pair.x.move(turn, 3)
    await pair.o.send(type="resign", match_id=pair.match_id)
    end = await pair.x.expect(MatchEnd)
    assert (end.winner, end.termination, end.fault, end.rated) == (0, "resign", None, True)


async def test_wrong_moves_get_errors_and_change_nothing(
    server: ArenaServer, start_match: Any, bot: Any
) -> None:
    pair = await start_match()
    turn = await pair.x.expect(YourTurn)
    # Out of turn, stale ply, unknown match, not a player: errors, socket open, state unchanged.
    await pair.o.send(type="move", match_id=pair.match_id, ply=0, move=3, id="r1")
    error = await pair.o.expect_error("not_your_turn")
    assert error.ref == "r1"
    await pair.x.send(type="move", match_id=pair.match_id, ply=5, move=3)
    await pair.x.expect_error("stale_ply")
    await pair.x.send(type="move", match_id="nope", ply=0, move=3)
    await pair.x.expect_error("no_such_match")
    carol = await bot("carol")
    await carol.send(type="move", match_id=pair.match_id, ply=0, move=3)
    await carol.expect_error("not_a_player")
    await carol.send(type="resign", match_id=pair.match_id)
    await carol.expect_error("not_a_player")
    await pair.x.move(turn, 3)
    moved = await pair.o.expect(Moved)
    assert (moved.ply, moved.move) == (0, 3)
    await pair.x.send(type="resign", match_id=pair.match_id)
    await pair.x.expect(MatchEnd)
    await pair.x.send(type="resign", match_id=pair.match_id)
    await pair.x.expect_error("match_over")


async def test_disconnect_then_reconnect_within_grace_plays_on(
    make_server: Any, tokens: dict[str, str], start_match: Any, bot: Any
) -> None:
    pair = await start_match(move_ms=5000)
    turn = await pair.x.expect(YourTurn)
    await pair.x.move(turn, 3)
    await pair.o.expect(YourTurn)
    await pair.x.close()
    await asyncio.sleep(0.2)  # a real network gap; the opponent's turn continues meanwhile
    back = await bot(pair.names[0])
    start = await back.expect(MatchStart)
    assert start.moves == (3,) and start.ply == 1
    await pair.o.send(type="move", match_id=pair.match_id, ply=1, move=4)
    turn = await back.expect(YourTurn)
    assert turn.ply == 2
    await back.move(turn, 3)
    assert (await back.expect(Moved)).ply == 2
    assert (await pair.o.expect(YourTurn)).ply == 3


async def test_staying_away_past_grace_loses_by_disconnect(
    make_server: Any, tokens: dict[str, str], bot: Any
) -> None:
    server = await make_server(grace_s=0.3)
    alice, bob = await bot("alice", target=server), await bot("bob", target=server)
    tc = {"move_ms": 10_000}
    await alice.send(type="seek", game="connect4", time_control=tc)
    await bob.send(type="seek", game="connect4", time_control=tc)
    start = await alice.expect(MatchStart)
    await bob.expect(MatchStart)
    x, o = (alice, bob) if start.you == 0 else (bob, alice)
    for player, move in ((x, 3), (o, 3)):
        turn = await player.expect(YourTurn)
        await player.move(turn, move)
    await o.close()  # o is away while x thinks; then it is o's move and o never returns
    turn = await x.expect(YourTurn)
    await x.move(turn, 4)
    end = await x.expect(MatchEnd, timeout=3)
    assert (end.winner, end.termination, end.fault, end.faulty_player) == (
        0,
        "disconnect",
        "bot",
        1,
    )
    assert end.rated
