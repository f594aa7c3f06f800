"""The round-trip credit end to end: a bot on a slow link is not flagged for the network.

The distant bot reaches the server through a ``TcpRelay`` on 127.0.0.1 that
holds back everything the bot sends for a fixed time: its moves and its
pongs arrive late, exactly as over a long network path.
"""

from __future__ import annotations

import asyncio
from typing import Any

from arena.server import ArenaServer
from protocol.messages import MatchEnd, MatchStart, Moved, YourTurn
from tests.arena.conftest import BotFactory, ServerFactory
from tests.relay import TcpRelay


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

        async def play_near() -> None:
            while True:
                message = await near.recv()
                if isinstance(message, YourTurn):
                    await near.move(message, message.legal_moves[0])
                elif isinstance(message, MatchEnd):
                    return

        near_task = asyncio.create_task(play_near())
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
