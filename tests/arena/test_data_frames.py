"""The server's own data frames are websockets' own, both ways (DESIGN.md, principle 13).

Out: byte for byte what websockets serializes. In: a ``WebSocketConnection``
fed a client's byte stream cut at random points delivers the messages, and
writes the answers (pongs, closes), that websockets alone makes of the whole
stream, including for streams that break the protocol at a random place.
"""

from __future__ import annotations

import json
import random

import pytest
from test_websocket_connection import RecordingTransport, connection
from websockets.asyncio.client import connect
from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory,
    ServerPerMessageDeflateFactory,
)
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from arena.net.data_frames import text_frame, text_payload, writes_directly
from arena.server import ArenaServer
from protocol.messages import PROTOCOL_VERSION

# Each length class of RFC 6455's header (7-bit, 16-bit, 64-bit) and its edges.
LENGTHS = (0, 1, 125, 126, 127, 1000, 65535, 65536, 70_000)


def _payloads() -> list[bytes]:
    rng = random.Random(1234)
    alphabet = 'abc{}":,é€😀 '
    return [("".join(rng.choice(alphabet) for _ in range(n))).encode()[:n] for n in LENGTHS]


@pytest.mark.parametrize("payload", _payloads(), ids=lambda p: f"{len(p)} bytes")
def test_a_frame_equals_websockets_own_serialization(payload: bytes) -> None:
    assert text_frame(payload) == Frame(Opcode.TEXT, payload).serialize(mask=False)
    assert text_payload(text_frame(payload)) == payload


def _opened(server: ServerProtocol, client: ClientProtocol) -> None:
    request = client.connect()
    client.send_request(request)
    server.receive_data(b"".join(client.data_to_send()))
    [received] = server.events_received()
    assert isinstance(received, Request)
    server.send_response(server.accept(received))
    client.receive_data(b"".join(server.data_to_send()))
    [answer] = client.events_received()
    assert isinstance(answer, Response) and answer.status_code == 101


def test_websockets_client_reads_the_frames_as_the_messages_sent() -> None:
    server, client = ServerProtocol(), ClientProtocol(parse_uri("ws://localhost/"))
    _opened(server, client)
    assert writes_directly(server)
    texts = [payload.decode(errors="ignore") for payload in _payloads()]
    client.receive_data(b"".join(text_frame(text.encode()) for text in texts))
    frames = client.events_received()
    assert [frame.data.decode() for frame in frames if isinstance(frame, Frame)] == texts


def test_no_direct_frames_with_an_extension_or_once_closing() -> None:
    deflate = ServerProtocol(extensions=[ServerPerMessageDeflateFactory()])
    client = ClientProtocol(
        parse_uri("ws://localhost/"), extensions=[ClientPerMessageDeflateFactory()]
    )
    _opened(deflate, client)
    assert deflate.extensions and not writes_directly(deflate)  # compressed frames differ

    plain = ServerProtocol()
    _opened(plain, ClientProtocol(parse_uri("ws://localhost/")))
    plain.send_text(b"part", fin=False)  # a fragmented message in progress
    assert not writes_directly(plain)
    closing = ServerProtocol()
    _opened(closing, ClientProtocol(parse_uri("ws://localhost/")))
    closing.send_close(1000, "bye")
    assert not writes_directly(closing)


async def test_the_server_negotiates_no_extension_with_a_client_that_offers_one(
    server: ArenaServer,
) -> None:
    # websockets' client offers permessage-deflate by default; the server must decline it,
    # or its directly written frames would not be what the client expects.
    async with connect(f"ws://127.0.0.1:{server.port}/", compression="deflate") as ws:
        assert ws.response is not None
        assert "Sec-WebSocket-Extensions" not in ws.response.headers
        await ws.send(
            json.dumps({"type": "hello", "role": "spectator", "version": PROTOCOL_VERSION})
        )
        reply = json.loads(await ws.recv())
        assert reply["type"] == "welcome"


MAX_SIZE = 4096  # the server's message limit in these streams


def _client_stream(rng: random.Random, count: int) -> bytes:
    """A client's frames, as websockets' client writes them (masked): texts, binaries, pings,
    pongs, fragmented messages with a ping inside, and lengths across every header class."""
    client = ClientProtocol(parse_uri("ws://127.0.0.1/"), state=State.OPEN, max_size=None)
    for _ in range(count):
        kind = rng.choice(("text", "text", "binary", "ping", "pong", "fragments", "long"))
        size = rng.choice((0, 1, 60, 125, 126, 200))
        if kind == "text":
            client.send_text("é{}".format("m" * size).encode())
        elif kind == "binary":
            client.send_binary(rng.randbytes(size))
        elif kind == "ping":
            client.send_ping(rng.randbytes(rng.randrange(0, 10)))
        elif kind == "pong":
            client.send_pong(b"unsolicited")
        elif kind == "fragments":
            client.send_text(b"first ", fin=False)
            client.send_ping(b"inside")
            client.send_continuation(b"second ", fin=False)
            client.send_continuation(b"last", fin=True)
        else:
            client.send_text(b"x" * rng.choice((1000, MAX_SIZE)))
    return b"".join(client.data_to_send())


def _websockets_alone(stream: bytes) -> tuple[list[str | bytes], bytes]:
    """The messages websockets makes of the whole stream, and the bytes it answers with."""
    server = ServerProtocol(state=State.OPEN, max_size=MAX_SIZE)
    server.receive_data(stream)
    messages: list[str | bytes] = []
    parts: list[bytes] = []
    text = False
    for event in server.events_received():
        assert isinstance(event, Frame)
        if event.opcode in (Opcode.TEXT, Opcode.BINARY):
            parts, text = [bytes(event.data)], event.opcode is Opcode.TEXT
        elif event.opcode is Opcode.CONT:
            parts.append(bytes(event.data))
        else:
            continue
        if event.fin:
            data = b"".join(parts)
            messages.append(data.decode() if text else data)
    return messages, b"".join(server.data_to_send())


async def _ours(stream: bytes, rng: random.Random | None) -> tuple[list[str | bytes], bytes]:
    """What a ``WebSocketConnection`` delivers and writes, fed ``stream`` in random pieces
    (``rng``), or in one piece (None)."""
    transport = RecordingTransport()
    conn = connection(transport)
    conn.protocol.max_message_size = MAX_SIZE
    messages: list[str | bytes] = []
    conn.deliver_to(messages.append)
    at = 0
    while at < len(stream):
        step = rng.choice((1, 2, 3, 7, 50, 300, 5000)) if rng else len(stream)
        conn.data_received(stream[at : at + step])
        at += step
    return messages, b"".join(transport.writes)


@pytest.mark.parametrize("seed", range(12))
async def test_a_stream_cut_anywhere_reads_as_websockets_reads_it(seed: int) -> None:
    rng = random.Random(seed)
    stream = _client_stream(rng, 30)
    alone = _websockets_alone(stream)
    assert await _ours(stream, rng) == alone
    assert await _ours(stream, None) == alone


def _broken(kind: str) -> bytes:
    """One frame websockets must refuse, and how it is broken."""
    if kind == "unmasked":
        return text_frame(b"hello")
    if kind == "reserved bit":
        return bytes((0x81 | 0x40, 0x80 | 2)) + b"\0\0\0\0ok"
    if kind == "bad opcode":
        return bytes((0x83, 0x80 | 2)) + b"\0\0\0\0ok"
    if kind == "too big":
        client = ClientProtocol(parse_uri("ws://127.0.0.1/"), state=State.OPEN, max_size=None)
        client.send_text(b"y" * (MAX_SIZE + 1))
        return b"".join(client.data_to_send())
    if kind == "text inside a fragmented message":
        client = ClientProtocol(parse_uri("ws://127.0.0.1/"), state=State.OPEN)
        client.send_text(b"open ", fin=False)
        return b"".join(client.data_to_send()) + bytes((0x81, 0x80 | 1)) + b"\0\0\0\0x"
    assert kind == "continuation without a start"
    return bytes((0x80, 0x80 | 1)) + b"\0\0\0\0x"


@pytest.mark.parametrize(
    "kind",
    [
        "unmasked",
        "reserved bit",
        "bad opcode",
        "too big",
        "text inside a fragmented message",
        "continuation without a start",
    ],
)
async def test_a_broken_frame_fails_the_connection_as_websockets_fails_it(kind: str) -> None:
    rng = random.Random(kind)
    stream = _client_stream(rng, 10) + _broken(kind) + _client_stream(rng, 5)
    alone = _websockets_alone(stream)
    assert alone[1], "websockets answers with a close frame"
    assert await _ours(stream, rng) == alone
    assert await _ours(stream, None) == alone
