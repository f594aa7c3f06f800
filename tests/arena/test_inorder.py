"""Incoming messages: handed over as they arrive, in order, with a bounded backlog."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection

from arena.net.inorder import InOrder
from arena.server import ArenaServer
from protocol.messages import PROTOCOL_VERSION, GamesReply, LeaderboardReply, Moved, YourTurn


def send_together(ws: ClientConnection, *messages: dict[str, Any]) -> None:
    """Write several frames in one TCP write, so the server receives them in one piece."""
    for message in messages:
        ws.protocol.send_text(json.dumps(message).encode())
    ws.transport.write(b"".join(ws.protocol.data_to_send()))


async def test_a_move_never_overtakes_a_message_still_being_handled(
    server: ArenaServer, start_match: Any
) -> None:
    pair = await start_match()
    turn = await pair.x.expect(YourTurn)
    # The leaderboard query waits for the database; the move arriving in the same
    # packet would be refereed on the spot, but must wait for the query's answer.
    send_together(
        pair.x.ws,
        {"type": "leaderboard", "game": "connect4", "id": "first"},
        {"type": "move", "match_id": turn.match_id, "ply": turn.ply, "move": 3},
    )
    replies = [await pair.x.recv() for _ in range(2)]
    assert isinstance(replies[0], LeaderboardReply) and replies[0].id == "first"
    assert isinstance(replies[1], Moved) and replies[1].move == 3


async def test_messages_pipelined_behind_the_hello_are_answered_in_order(
    server: ArenaServer, connect_client: Any, tokens: dict[str, str]
) -> None:
    client = await connect_client()
    frames = [
        {
            "type": "hello",
            "role": "bot",
            "version": PROTOCOL_VERSION,
            "name": "alice",
            "token": tokens["alice"],
        },
        {"type": "games", "id": "1"},
        {"type": "leaderboard", "game": "connect4", "id": "2"},
        {"type": "games", "id": "3"},
    ]
    send_together(client.ws, *frames)  # all before the welcome: the token check is slow
    assert (await client.recv()).type == "welcome"
    replies = [await client.recv() for _ in range(3)]
    assert [r.id for r in replies] == ["1", "2", "3"]
    assert [type(r) for r in replies] == [GamesReply, LeaderboardReply, GamesReply]


async def test_a_fragmented_message_is_assembled(server: ArenaServer, bot: Any) -> None:
    alice = await bot("alice")
    await alice.ws.send(['{"type": "games", ', '"id": "in-pieces"}'])
    reply = await alice.recv()
    assert isinstance(reply, GamesReply) and reply.id == "in-pieces"


async def test_a_text_frame_that_is_not_utf8_is_bad_json_and_the_socket_stays_open(
    server: ArenaServer, bot: Any
) -> None:
    alice = await bot("alice")
    await alice.ws.send(b'{"type": "games", "id": "\xff"}', text=True)
    await alice.expect_error("bad_json")
    await alice.send(type="games", id="after")
    assert (await alice.recv()).id == "after"


class _Reading:
    """A neighbour fake for the transport's pause/resume: records the reading state."""

    def __init__(self) -> None:
        self.paused = False
        self.changes: list[bool] = []

    def pause(self) -> None:
        self.paused = True
        self.changes.append(True)

    def resume(self) -> None:
        self.paused = False
        self.changes.append(False)


async def test_in_order_handles_at_once_and_holds_later_messages_behind_a_slow_one() -> None:
    handled: list[str] = []
    release = asyncio.Event()

    async def slow(message: str) -> None:
        await release.wait()
        handled.append(message)

    def handle(message: str | bytes) -> Any:
        assert isinstance(message, str)
        if message.startswith("slow"):
            return slow(message)
        handled.append(message)
        return None

    reading = _Reading()
    inbox = InOrder(handle, reading.pause, reading.resume, limit=4)
    inbox.put("a")
    assert handled == ["a"]  # no task, no waiting
    inbox.put("slow-b")
    for name in "cdefg":
        inbox.put(name)
    await asyncio.sleep(0)
    assert handled == ["a"]
    assert reading.paused  # five waiting, over the limit of four: stop reading
    release.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert handled == ["a", "slow-b", "c", "d", "e", "f", "g"]
    assert reading.changes == [True, False]


async def test_in_order_stop_cancels_the_slow_message_and_drops_the_rest() -> None:
    handled: list[str | bytes] = []
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await asyncio.Event().wait()

    def handle(message: str | bytes) -> Any:
        if message == "slow":
            return slow()
        handled.append(message)
        return None

    reading = _Reading()
    inbox = InOrder(handle, reading.pause, reading.resume)
    inbox.put("slow")
    inbox.put("later")
    await started.wait()
    inbox.stop()
    await asyncio.sleep(0)
    inbox.put("after-stop")
    await asyncio.sleep(0)
    assert handled == []
