"""A whole match over real sockets: lobby pairing, turns, the result, rating changes, storage."""

from __future__ import annotations

from typing import Any

from arena.server import ArenaServer
from protocol.messages import MatchEnd, Moved, YourTurn


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
    changes = {c.bot: c for c in end_x.rating_changes}
    assert changes[pair.names[0]].after > changes[pair.names[0]].before
    record = await server.store.get_match(pair.match_id)
    assert record is not None and record.status == "finished"
    assert [m.move for m in record.moves] == [0, 3, 1, 4, 2]
