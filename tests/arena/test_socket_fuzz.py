"""Garbage at the socket from a logged-in bot in a live match: every frame gets an answer.

Whatever a bot sends — deep nesting, oversized frames, broken UTF-8, moves whose
fields hold anything — the server answers with an ``error`` (or judges the
move), keeps the connection unless the protocol says to close it, and never
logs a traceback. Frames come from a seeded generator, so a failure replays.
"""

from __future__ import annotations

import json
import logging
import random
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from arena.server import ArenaServer
from protocol.messages import MAX_BOT_MESSAGE_BYTES, Error, MatchEnd, YourTurn


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def garbage(rng: random.Random, match_id: str) -> str | bytes:
    """One hostile frame, from a family picked at random."""
    family = rng.randrange(8)
    if family == 0:
        return nested(rng.choice([17, 100, 1000, 4000]))  # 4000 deep: 8001 bytes
    if family == 1:  # a move whose move is deeply nested
        depth = rng.choice([17, 1000, 3000])
        return f'{{"type":"move","match_id":"{match_id}","ply":99,"move":{nested(depth)}}}'
    if family == 2:  # deep nesting in another field of a move
        depth = rng.choice([17, 1000])
        return f'{{"type":"move","match_id":"{match_id}","ply":{nested(depth)},"move":3}}'
    if family == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if family == 4:  # just under the size limit, not JSON
        return "x" * (MAX_BOT_MESSAGE_BYTES - rng.randrange(1, 10))
    if family == 5:
        text = json.dumps({"type": "move", "match_id": match_id, "ply": 99, "move": 1})
        cut = rng.randrange(1, len(text))
        return text[:cut]
    if family == 6:
        return json.dumps(
            {"type": rng.choice(["seek", "watch", "nope", "hello"]), "x": "\ud800" * 3}
        )
    return json.dumps({"type": "move", "match_id": "nosuch", "ply": 0, "move": rng.random()})


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_garbage_gets_errors_never_a_traceback(
    server: ArenaServer, start_match: Any, caplog: pytest.LogCaptureFixture, seed: int
) -> None:
    caplog.set_level(logging.WARNING)
    rng = random.Random(seed)
    pair = await start_match(move_ms=60_000)
    await pair.x.expect(YourTurn)
    sender = pair.o  # not to move: a frame that parses as a move is refused, not judged
    for _ in range(15):  # under the abuse limit (20 bad messages)
        await sender.send_raw(garbage(rng, pair.match_id))
        reply = await sender.expect(Error)
        assert reply.code in {
            "bad_json",
            "too_large",
            "bad_message",
            "unknown_type",
            "missing_field",
            "unknown_field",
            "bad_type",
            "bad_value",
            "not_your_turn",
            "stale_ply",
            "no_such_match",
            "forbidden",
        }, reply
    # The connection is unharmed, and so is the match.
    await sender.send(type="games", id="still-there")
    assert (await sender.recv()).type == "games"
    assert server.registry.get(pair.match_id).referee.state.ply == 0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_a_thousand_deep_move_from_the_mover_loses_the_game_not_the_connection(
    server: ArenaServer, start_match: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    pair = await start_match(move_ms=60_000)
    turn = await pair.x.expect(YourTurn)
    frame = f'{{"type":"move","match_id":"{pair.match_id}","ply":{turn.ply},"move":{nested(1000)}}}'
    await pair.x.send_raw(frame)
    # Too deep to decode at all: an error, and the turn stays open (no traceback, no 1006).
    error = await pair.x.expect(Error)
    assert error.code == "bad_json"
    # A move whose move is a shallow non-number still answers the turn: it loses.
    await pair.x.send(type="move", match_id=pair.match_id, ply=turn.ply, move=[[1]])
    end = await pair.x.expect(MatchEnd)
    assert (end.termination, end.faulty_player) == ("illegal_move", 0)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_a_frame_over_the_limit_closes_with_1009(server: ArenaServer, bot: Any) -> None:
    alice = await bot("alice")
    await alice.send_raw("x" * (MAX_BOT_MESSAGE_BYTES + 1))
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await alice.ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
