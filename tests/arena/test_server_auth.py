"""Hello and authentication over real sockets: refusals, the hello timeout, replacement."""

from __future__ import annotations

from typing import Any

import pytest

from arena.server import ArenaServer
from protocol.messages import PROTOCOL_VERSION, Error, MatchStart, Moved, Welcome, YourTurn


def hello(name: str, token: str, version: int = PROTOCOL_VERSION) -> dict[str, Any]:
    return {"type": "hello", "role": "bot", "version": version, "name": name, "token": token}


@pytest.mark.parametrize(
    ("name", "token_of", "version", "code", "close_code"),
    [
        ("alice", "alice", PROTOCOL_VERSION, None, None),
        ("mallory", "alice", PROTOCOL_VERSION, "auth_failed", 1008),
        ("alice", "bob", PROTOCOL_VERSION, "auth_failed", 1008),
        ("alice", "alice", PROTOCOL_VERSION + 1, "unsupported_version", 4000),
    ],
)
async def test_hello_is_checked(
    server: ArenaServer,
    connect_client: Any,
    tokens: dict[str, str],
    name: str,
    token_of: str,
    version: int,
    code: str | None,
    close_code: int | None,
) -> None:
    client = await connect_client()
    await client.send(**hello(name, tokens[token_of], version))
    reply = await client.recv()
    if code is None:
        assert isinstance(reply, Welcome) and reply.name == "alice" and reply.role == "bot"
        return
    assert isinstance(reply, Error) and reply.code == code
    assert await client.closed() == close_code


async def test_no_hello_in_time_closes(server: ArenaServer, connect_client: Any) -> None:
    client = await connect_client()
    await client.send(type="games")  # not a hello: refused, the timer keeps running
    await client.expect_error("not_authenticated")
    await client.expect_error("hello_timeout", timeout=3)
    assert await client.closed() == 1008


async def test_a_spectator_needs_no_token(server: ArenaServer, spectator: Any) -> None:
    watcher = await spectator()
    await watcher.send(type="games", id="q1")
    games = await watcher.recv()
    assert games.type == "games" and "connect4" in games.games and games.id == "q1"


async def test_second_connection_replaces_the_first_and_takes_over_the_match(
    server: ArenaServer, start_match: Any, bot: Any
) -> None:
    pair = await start_match(move_ms=5000)
    turn = await pair.x.expect(YourTurn)
    await pair.x.move(turn, 3)
    await pair.o.expect(Moved)
    x_name = pair.names[0]
    again = await bot(x_name)
    await pair.x.expect_error("replaced")
    assert await pair.x.closed() == 4001
    start = await again.expect(MatchStart)
    assert start.match_id == pair.match_id and start.moves == (3,) and start.you == 0
    turn_o = await pair.o.expect(YourTurn)
    await pair.o.move(turn_o, 3)
    turn = await again.expect(YourTurn)
    assert turn.ply == 2
    await again.move(turn, 4)
    moved = await again.expect(Moved)
    assert moved.ply == 2 and moved.move == 4
