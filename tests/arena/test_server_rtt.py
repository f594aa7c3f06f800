"""The round-trip credit end to end: a bot on a slow link is not flagged for the network.

The distant bot reaches the server through a ``TcpRelay`` on 127.0.0.1 that
holds back everything the bot sends for a fixed time: its moves and its
pongs arrive late, exactly as over a long network path. A bot that only
answers pings late (a busy event loop, not the network) gets no more credit
than its round trip.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.frames import Opcode

from arena.server import ArenaServer
from protocol.messages import MatchEnd, MatchStart, Moved, YourTurn
from tests.arena.conftest import BotFactory, Client, ServerFactory
from tests.arena.test_websocket_frames import RawClient, client_frame, open_raw, opening, text
from tests.relay import TcpRelay


async def _play_at_once(client: Client) -> None:
    """Answer every turn at once with the lowest open column, until the match ends."""
    while True:
        message = await client.recv()
        if isinstance(message, YourTurn):
            await client.move(message, message.legal_moves[0])
        elif isinstance(message, MatchEnd):
            return


async def test_a_bot_on_a_slow_link_gets_its_round_trip_back_from_its_first_move(
    make_server: ServerFactory, bot: BotFactory
) -> None:
    delay_s, think_s, move_ms = 0.3, 0.25, 400
    # Keepalive pings a minute apart: within this test, only the ping the server sends
    # when a bot says hello can have measured the round trip.
    server: ArenaServer = await make_server(move_ms=move_ms, ping_interval_s=60.0)
    uplink = TcpRelay(server.port, uplink_delay_s=delay_s)
    uplink_port = await uplink.start()
    near_task: asyncio.Task[None] | None = None
    try:
        far = await bot("alice", target=server, port=uplink_port)
        near = await bot("bob", target=server)
        time_control: dict[str, Any] = {"move_ms": move_ms, "bank_ms": 0}
        for client in (far, near):
            await client.send(type="seek", game="connect4", time_control=time_control)
        near_task = asyncio.create_task(_play_at_once(near))
        # The far bot thinks 250 ms, well inside its 400 ms; the server sees each move
        # about 550 ms after its your_turn, and only the round-trip credit keeps it in time.
        start = await far.expect(MatchStart)
        confirmed = 0
        while confirmed < 3:
            message = await far.recv()
            assert not isinstance(message, MatchEnd), message
            if isinstance(message, YourTurn):
                await asyncio.sleep(think_s)
                await far.move(message, message.legal_moves[0])
            elif isinstance(message, Moved) and message.player == start.you:
                confirmed += 1
        match_id = start.match_id
        await far.send(type="resign", match_id=match_id)
        end = await far.expect(MatchEnd)
        assert end.termination == "resign", end
        await asyncio.wait_for(near_task, 5.0)
    finally:
        if near_task is not None:
            near_task.cancel()
        await uplink.close()

    record = await server.store.get_match(match_id)
    assert record is not None
    far_player = record.players.index("alice")
    far_moves = [m for m in record.moves if m.player == far_player]
    assert len(far_moves) == 3
    for stored in far_moves:
        # The move took longer than move_ms as the server saw it ...
        assert stored.think_ms >= (think_s + delay_s) * 1000 - 20 > move_ms, stored
        # ... and the round trip credited back was the measured one, the uplink's delay.
        assert delay_s * 1000 - 20 <= stored.rtt_ms <= delay_s * 1000 + 150, stored


class _LatePonger:
    """A scripted bot on a raw socket that answers the server's pings late.

    It answers the first ping (the one the server sends on hello) at once and
    every later one ``late_s`` afterwards: a bot whose event loop is busy
    whenever a keepalive ping comes in. Text messages are queued for the test.
    """

    def __init__(self, raw: RawClient, late_s: float) -> None:
        self.raw = raw
        self.late_s = late_s
        self.pings = 0
        self.late_pongs = 0
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            frame = await self.raw.any_frame()
            if frame.opcode is Opcode.PING:
                self.pings += 1
                delay = 0.0 if self.pings == 1 else self.late_s
                task = asyncio.create_task(self._pong(frame.data, delay))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            elif frame.opcode is Opcode.TEXT:
                self.messages.put_nowait(json.loads(frame.data))

    async def _pong(self, data: bytes, delay: float) -> None:
        await asyncio.sleep(delay)
        self.raw.writer.write(client_frame(Opcode.PONG, data))
        self.late_pongs += delay > 0

    def send(self, **message: Any) -> None:
        """Send ``message`` as one text frame."""
        self.raw.writer.write(text(message))

    async def next(self, kind: str) -> dict[str, Any]:
        """The next message of type ``kind``, skipping the others."""
        while True:
            message = await asyncio.wait_for(self.messages.get(), 10)
            if message["type"] == kind:
                return message

    def stop(self) -> None:
        self._reader.cancel()
        for task in self._tasks:
            task.cancel()
        self.raw.writer.close()


async def test_a_bot_that_answers_pings_late_is_credited_the_round_trip_not_its_lateness(
    make_server: ServerFactory, bot: BotFactory, tokens: dict[str, str]
) -> None:
    late_s, think_s, moves = 0.3, 0.2, 8
    # Keepalive pings every 100 ms: several late pongs land while alice plays.
    server: ArenaServer = await make_server(move_ms=1000, ping_interval_s=0.1)
    raw = await open_raw(server)
    raw.writer.write(opening(server, tokens))
    await raw.response()
    alice = _LatePonger(raw, late_s)
    near_task: asyncio.Task[None] | None = None
    try:
        assert (await alice.next("welcome"))["type"] == "welcome"
        bob = await bot("bob", target=server)
        time_control: dict[str, Any] = {"move_ms": 1000, "bank_ms": 0}
        alice.send(type="seek", game="connect4", time_control=time_control)
        await bob.send(type="seek", game="connect4", time_control=time_control)
        near_task = asyncio.create_task(_play_at_once(bob))
        start = await alice.next("match_start")
        for _ in range(moves):
            turn = await alice.next("your_turn")
            await asyncio.sleep(think_s)
            # Both take the lowest open column: columns fill alternately, nobody wins.
            move = turn["legal_moves"][0]
            alice.send(type="move", match_id=turn["match_id"], ply=turn["ply"], move=move)
            while (await alice.next("moved"))["ply"] != turn["ply"]:
                pass
        alice.send(type="resign", match_id=start["match_id"])
        assert (await alice.next("match_end"))["termination"] == "resign"
        await asyncio.wait_for(near_task, 5.0)
    finally:
        if near_task is not None:
            near_task.cancel()
        alice.stop()

    # The scenario happened: pongs went out late while alice played.
    assert alice.late_pongs >= 3, alice.late_pongs
    record = await server.store.get_match(start["match_id"])
    assert record is not None
    mine = [m for m in record.moves if m.player == start["you"]]
    assert len(mine) == moves
    # Loopback round trips are about a millisecond; the late pongs were 300 ms (the bound
    # is half that, generous for a busy machine).
    assert max(m.rtt_ms for m in mine) < 150, [m.rtt_ms for m in mine]
