"""The keepalive: every connection pinged once a ping interval, a slice at a time; a
connection that stops answering is closed after the ping timeout, the others stay."""

from __future__ import annotations

import asyncio
from collections import Counter

from websockets.frames import Close, Opcode

from arena.net.gateway import PING_SLICES
from arena.server import ArenaServer
from protocol.messages import PROTOCOL_VERSION
from tests.arena.conftest import ServerFactory
from tests.arena.test_websocket_frames import (
    RawClient,
    client_frame,
    open_raw,
    text,
    upgrade_request,
)

SPECTATOR_HELLO = {"type": "hello", "role": "spectator", "version": PROTOCOL_VERSION}


async def _spectator(server: ArenaServer) -> RawClient:
    client = await open_raw(server)
    client.writer.write(upgrade_request(server.port) + text(SPECTATOR_HELLO))
    await client.response()
    assert (await client.message())["type"] == "welcome"
    return client


async def _answer_pings(client: RawClient, pings: Counter[int], key: int) -> None:
    """Answer every ping with its pong, counting them; ends when the connection does."""
    while True:
        frame = await client.any_frame()
        if frame.opcode is Opcode.PING:
            pings[key] += 1
            client.writer.write(client_frame(Opcode.PONG, frame.data))


async def test_a_silent_connection_is_closed_after_the_ping_timeout_and_answering_ones_stay(
    make_server: ServerFactory,
) -> None:
    # One interval is PING_SLICES keepalive turns, which the 31 connections share.
    server = await make_server(ping_interval_s=0.2, ping_timeout_s=1.0)
    answering = [await _spectator(server) for _ in range(30)]
    pings: Counter[int] = Counter()
    readers = [asyncio.create_task(_answer_pings(c, pings, k)) for k, c in enumerate(answering)]
    silent = await _spectator(server)
    try:
        # The silent one reads its pings but never answers: the server gives up on it.
        while True:
            frame = await silent.any_frame()
            if frame.opcode is Opcode.TEXT:
                assert b"keepalive ping timeout" in frame.data
            if frame.opcode is Opcode.CLOSE:
                assert Close.parse(frame.data).code == 1011
                break
        # It does not answer the close either: the server cuts the TCP connection.
        assert await asyncio.wait_for(silent.reader.read(), 10) == b""
        # By then the timeout spanned several intervals: every answering connection was
        # pinged in each, and none was closed.
        assert len(pings) == len(answering)
        assert min(pings.values()) >= 3, pings
        assert not any(reader.done() for reader in readers)
        assert len(server.gateway.connections) == len(answering)
    finally:
        for reader in readers:
            reader.cancel()
        for client in [*answering, silent]:
            client.writer.close()


async def test_each_keepalive_turn_pings_one_slice_and_a_round_pings_everyone_once(
    make_server: ServerFactory,
) -> None:
    # An interval far longer than the test: only the turns called here ping.
    server = await make_server(ping_interval_s=1000.0)
    clients = [await _spectator(server) for _ in range(2 * PING_SLICES)]
    pings: Counter[int] = Counter()
    readers = [asyncio.create_task(_answer_pings(c, pings, k)) for k, c in enumerate(clients)]
    try:
        for turn in range(1, PING_SLICES + 1):
            server.gateway.keepalive(timeout_s=60.0)
            async with asyncio.timeout(10):
                while pings.total() < 2 * turn:
                    await asyncio.sleep(0.01)
        assert sorted(pings) == list(range(len(clients)))
        assert set(pings.values()) == {1}, pings
    finally:
        for reader in readers:
            reader.cancel()
        for client in clients:
            client.writer.close()
