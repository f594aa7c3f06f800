"""The server's handling of websocket frames as a client writes them, byte for byte.

A plain TCP client writes the upgrade request and frames byte for byte as a
real client would, cut at arbitrary points, so these tests see exactly what
the server does with partial frames, control frames between data frames,
and frames it must refuse.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import struct
from typing import Any

from websockets.frames import Close, Frame, Opcode

from arena.server import ArenaServer
from protocol.messages import PROTOCOL_VERSION

_MASK = b"\x37\xfa\x21\x3d"


def upgrade_request(port: int) -> bytes:
    """A websocket upgrade request for ``/``."""
    key = base64.b64encode(b"0123456789abcdef").decode()
    return (
        f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


def client_frame(opcode: Opcode, data: bytes, *, fin: bool = True, masked: bool = True) -> bytes:
    """One frame as a client writes it (masked unless told otherwise)."""
    first = (0x80 if fin else 0) | opcode.value
    size = len(data)
    if size < 126:
        head = bytes((first, size | (0x80 if masked else 0)))
    elif size < 1 << 16:
        head = struct.pack("!BBH", first, 126 | (0x80 if masked else 0), size)
    else:
        head = struct.pack("!BBQ", first, 127 | (0x80 if masked else 0), size)
    if not masked:
        return head + data
    body = bytes(b ^ _MASK[i % 4] for i, b in enumerate(data))
    return head + _MASK + body


def text(message: dict[str, Any]) -> bytes:
    """A masked text frame carrying ``message`` as JSON."""
    return client_frame(Opcode.TEXT, json.dumps(message).encode())


class RawClient:
    """Reads the server's side of the stream: the HTTP response, then frames."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def write_in_pieces(self, data: bytes, rng: random.Random, most: int) -> None:
        """Write ``data`` in random pieces of 1..``most`` bytes, yielding between them."""
        at = 0
        while at < len(data):
            step = rng.randint(1, most)
            self.writer.write(data[at : at + step])
            await self.writer.drain()
            await asyncio.sleep(0.001)  # give the server a read between pieces
            at += step

    async def response(self) -> bytes:
        """The HTTP response head."""
        return await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 10)

    async def frame(self) -> Frame:
        """The next frame from the server (unmasked), skipping the server's own pings.

        The server pings a bot when its hello is accepted (to measure the round
        trip), at a moment of its choosing; these tests are about every other
        frame. They are left unanswered: a test ends long before the ping timeout.
        """
        while True:
            frame = await self.any_frame()
            if frame.opcode is not Opcode.PING:
                return frame

    async def any_frame(self) -> Frame:
        """The next frame from the server, pings included."""
        head = await asyncio.wait_for(self.reader.readexactly(2), 10)
        size = head[1] & 0x7F
        if size == 126:
            size = struct.unpack("!H", await self.reader.readexactly(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", await self.reader.readexactly(8))[0]
        data = await self.reader.readexactly(size)
        return Frame(Opcode(head[0] & 0x0F), data, fin=bool(head[0] & 0x80))

    async def message(self) -> dict[str, Any]:
        """The next text frame, decoded."""
        frame = await self.frame()
        assert frame.opcode is Opcode.TEXT, frame
        decoded: dict[str, Any] = json.loads(frame.data)
        return decoded

    async def close_code(self) -> int:
        """Read until the server's close frame; its code."""
        while True:
            frame = await self.frame()
            if frame.opcode is Opcode.CLOSE:
                return Close.parse(frame.data).code


async def open_raw(server: ArenaServer) -> RawClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    return RawClient(reader, writer)


async def welcomed(server: ArenaServer, tokens: dict[str, str]) -> RawClient:
    """A raw client past the upgrade and the hello, its welcome read."""
    client = await open_raw(server)
    client.writer.write(opening(server, tokens))
    await client.response()
    assert (await client.message())["type"] == "welcome"
    return client


def hello(tokens: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "hello",
        "role": "bot",
        "version": PROTOCOL_VERSION,
        "name": "alice",
        "token": tokens["alice"],
    }


def opening(server: ArenaServer, tokens: dict[str, str]) -> bytes:
    """What a client sends first: the upgrade request, then its hello frame."""
    return upgrade_request(server.port) + text(hello(tokens))


async def test_frames_cut_anywhere_arrive_whole_in_order_with_a_ping_between(
    server: ArenaServer, tokens: dict[str, str]
) -> None:
    client = await open_raw(server)
    stream = (
        opening(server, tokens)
        + text({"type": "games", "id": "one"})
        + client_frame(Opcode.PING, b"are you there")
        # 200 bytes: a 16-bit length, so the extended header can be cut too.
        + text({"type": "games", "id": "two" + "x" * 200})
        + text({"type": "games", "id": "three"})
    )
    await client.write_in_pieces(stream, random.Random(7), most=5)
    assert (await client.response()).startswith(b"HTTP/1.1 101")
    assert (await client.message())["type"] == "welcome"
    assert (await client.message())["id"] == "one"
    pong = await client.frame()
    assert (pong.opcode, pong.data) == (Opcode.PONG, b"are you there")
    second = await client.message()
    assert second["type"] == "error" and second["code"] == "bad_value"  # id too long
    assert (await client.message())["id"] == "three"
    client.writer.close()


async def test_the_upgrade_request_and_frames_in_one_packet(
    server: ArenaServer, tokens: dict[str, str]
) -> None:
    client = await open_raw(server)
    client.writer.write(
        opening(server, tokens)
        + text({"type": "games", "id": "a"})
        + text({"type": "games", "id": "b"})
    )
    assert (await client.response()).startswith(b"HTTP/1.1 101")
    assert (await client.message())["type"] == "welcome"
    assert [(await client.message())["id"] for _ in range(2)] == ["a", "b"]
    client.writer.close()


async def test_a_fragmented_message_between_whole_ones(
    server: ArenaServer, tokens: dict[str, str]
) -> None:
    client = await open_raw(server)
    stream = (
        opening(server, tokens)
        + client_frame(Opcode.TEXT, b'{"type": "games", ', fin=False)
        + client_frame(Opcode.PING, b"")
        + client_frame(Opcode.CONT, b'"id": "pieces"}')
        + text({"type": "games", "id": "whole"})
    )
    await client.write_in_pieces(stream, random.Random(11), most=9)
    await client.response()
    assert (await client.message())["type"] == "welcome"
    assert (await client.frame()).opcode is Opcode.PONG
    assert (await client.message())["id"] == "pieces"
    assert (await client.message())["id"] == "whole"
    client.writer.close()


async def test_a_frame_over_the_size_limit_closes_with_1009(
    server: ArenaServer, tokens: dict[str, str]
) -> None:
    client = await welcomed(server, tokens)
    # Only the header: the server must refuse on the announced length alone.
    client.writer.write(client_frame(Opcode.TEXT, b"x" * 100_000)[:14])
    assert await client.close_code() == 1009


async def test_an_unmasked_frame_closes_with_1002(
    server: ArenaServer, tokens: dict[str, str]
) -> None:
    client = await welcomed(server, tokens)
    client.writer.write(client_frame(Opcode.TEXT, b'{"type": "games"}', masked=False))
    assert await client.close_code() == 1002


async def test_a_frame_with_reserved_bits_closes_with_1002(
    server: ArenaServer, tokens: dict[str, str]
) -> None:
    client = await welcomed(server, tokens)
    frame = bytearray(text({"type": "games"}))
    frame[0] |= 0x40  # RSV1: compressed, but no compression was negotiated
    client.writer.write(bytes(frame))
    assert await client.close_code() == 1002


async def test_each_message_is_answered_before_the_next_one_in_the_same_read(
    server: ArenaServer, tokens: dict[str, str]
) -> None:
    client = await welcomed(server, tokens)
    conn = server.gateway.bots["alice"]
    writes: list[bytes] = []
    real = conn.transport

    class Spy:  # a neighbour spy on the server's side of the socket: counts writes
        def write(self, data: bytes) -> None:
            writes.append(data)
            real.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

    conn.transport = Spy()  # type: ignore[assignment]
    try:
        # Three malformed messages in one TCP write: one server read, three errors.
        client.writer.write(b"".join(client_frame(Opcode.TEXT, b"{not json") for _ in range(3)))
        for _ in range(3):
            assert (await client.message())["code"] == "bad_json"
        # Each error left in its own write, before the next message was handled,
        # not all three together at the end of the loop's turn.
        assert len(writes) == 3
    finally:
        conn.transport = real
    client.writer.close()
