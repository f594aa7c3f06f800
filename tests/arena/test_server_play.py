"""A whole match over real sockets: lobby pairing, turns, the result, the rating report, storage."""

from __future__ import annotations

import asyncio
from typing import Any

from arena.server import ArenaServer
from protocol.messages import MatchEnd, MatchStart, Moved, RatingReport, YourTurn


async def test_two_seekers_play_a_full_game_and_ratings_change(
    server: ArenaServer, start_match: Any
) -> None:
    pair = await start_match(game="tictactoe")
    assert pair.start.moves == () and pair.start.ply == 0
    x, o = pair.x, pair.o
    # x plays the top row (0, 1, 2) while o plays 3, 4.
    script = {x: [0, 1, 2], o: [3, 4]}
    mover = x
    while True:
        turn = await mover.expect(YourTurn)
        await mover.move(turn, script[mover].pop(0))
        moved = await mover.expect(Moved)
        assert moved.ply == turn.ply
        if moved.ply == 4:
            break
        mover = o if mover is x else x
    end_x, end_o = await x.expect(MatchEnd), await o.expect(MatchEnd)
    assert end_x == end_o
    assert (end_x.winner, end_x.result, end_x.termination) == (0, "1-0", "line")
    assert end_x.fault is None and end_x.rated
    # After the refit both are told their leaderboard rows: the very numbers the board shows.
    report_x, report_o = await x.expect(RatingReport), await o.expect(RatingReport)
    assert report_x == report_o and report_x.match_id == pair.match_id
    board = await server.api.leaderboard_entries("tictactoe")
    assert list(report_x.entries) == [e for e in board if e.bot in pair.names]
    rows = {e.bot: e for e in report_x.entries}
    assert rows[pair.names[0]].rating > rows[pair.names[1]].rating
    record = await server.store.get_match(pair.match_id)
    assert record is not None and record.status == "finished"
    assert [m.move for m in record.moves] == [0, 3, 1, 4, 2]


async def test_pace_delays_the_next_turn_without_charging_either_clock(
    make_server: Any, bot: Any, tokens: dict[str, str]
) -> None:
    # Generous times for a busy machine: a bot answers in about a millisecond, and each has
    # 400 ms, which the 600 ms pause before its turn would more than use up were it charged.
    paced = await make_server(pace_ms=600)
    x, o = await bot("alice", target=paced), await bot("bob", target=paced)
    control = {"move_ms": 400, "bank_ms": 0}  # shorter than the pause: it must not count
    for client in (x, o):
        await client.send(type="seek", game="tictactoe", time_control=control)
    starts = [await x.expect(MatchStart), await o.expect(MatchStart)]
    seats = {start.you: client for start, client in zip(starts, (x, o), strict=True)}
    loop = asyncio.get_running_loop()
    moved_at = None
    for ply, move in enumerate((4, 0, 8)):
        mover = seats[ply % 2]
        turn = await mover.expect(YourTurn)
        if moved_at is not None:
            assert loop.time() - moved_at >= 0.55  # the 600 ms pause, less timer slack
        assert turn.ply == ply and turn.time_left_ms > 300  # the pause was not on the clock
        await mover.move(turn, move)
        moved = await mover.expect(Moved)
        moved_at = loop.time()
        assert moved.think_ms < 400  # nobody lost on time although each pause > move_ms
