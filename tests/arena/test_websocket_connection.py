"""A websocket connection's outgoing side: one write per turn of the loop, slow readers dropped.

The framing is websockets' own (``ServerProtocol`` on the server side); a
``ClientProtocol`` reads back what the server wrote, so these tests check the
bytes on the wire, not our idea of them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.client import ClientProtocol
from websockets.frames import Close, Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from arena.net.websocket import WRITE_HIGH_WATER, Outbox, WebSocketConnection
from arena.server import ArenaServer
from protocol.messages import Error, Moved, YourTurn


class RecordingTransport:
    """A neighbour fake of a socket: takes every write, as it was made; maybe backed up."""

    def __init__(self, backed_up: bool = False) -> None:
        self.writes: list[bytes] = []
        self.backed_up = backed_up
        self.closed = False

    def get_write_buffer_size(self) -> int:
        return 10 * WRITE_HIGH_WATER if self.backed_up else 0

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    abort = close


def connection(transport: RecordingTransport, queue_size: int = 8) -> WebSocketConnection:
    return WebSocketConnection(
        transport,  # type: ignore[arg-type]
        ServerProtocol(state=State.OPEN),
        remote="127.0.0.1",
        queue_size=queue_size,
        close_timeout_s=5.0,
    )


def frames(writes: list[bytes]) -> list[Frame]:
    """What a websockets client parses out of the bytes the server wrote."""
    client = ClientProtocol(parse_uri("ws://127.0.0.1/"), state=State.OPEN)
    client.receive_data(b"".join(writes))
    return [e for e in client.events_received() if isinstance(e, Frame)]


def texts(writes: list[bytes]) -> list[str]:
    return [bytes(f.data).decode() for f in frames(writes) if f.opcode is Opcode.TEXT]


async def test_a_reader_that_stops_reading_is_dropped_without_blocking_the_sender() -> None:
    transport = RecordingTransport(backed_up=True)
    conn = connection(transport, queue_size=3)
    error = Error(code="internal", message="x")
    conn.send(error)
    await asyncio.sleep(0)  # the write waits: the socket is backed up
    assert not conn.closing and transport.writes == []
    for _ in range(10):
        conn.send(error)  # never blocks, never grows past the bound
    assert conn.closing
    (close,) = frames(transport.writes)  # only the close frame went out, no message
    assert close.opcode is Opcode.CLOSE and Close.parse(close.data).code == 1008


async def test_what_is_sent_after_a_flush_leaves_at_the_end_of_the_same_turn() -> None:
    a_transport, b_transport = RecordingTransport(), RecordingTransport()
    a, b = connection(a_transport), connection(b_transport)
    outbox = Outbox.of(asyncio.get_running_loop())
    first, second, third = (Error(code="internal", message=str(n)) for n in range(3))
    a.send(first)
    a.send(second)
    b.send(first)  # one object to two connections: serialized once, sent to both
    outbox.flush()  # what the server does after each incoming message
    assert len(a_transport.writes) == 1 and len(b_transport.writes) == 1
    assert texts(a_transport.writes) == [first.to_json(), second.to_json()]
    outbox.flush()  # nothing new: nothing written
    a.send(third)  # later in the same turn (a task, a timer): the end of the turn writes it
    assert len(a_transport.writes) == 1
    await asyncio.sleep(0)
    assert len(a_transport.writes) == 2
    assert texts(a_transport.writes)[-1] == third.to_json()
    b.send(third)  # and in the next turn, again
    await asyncio.sleep(0)
    assert texts(b_transport.writes) == [first.to_json(), third.to_json()]


class _CountingTransport:
    """Wraps the real transport of a live connection to count its writes (a spy)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.inner.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_messages_sent_in_one_turn_leave_in_one_write(
    server: ArenaServer, start_match: Any
) -> None:
    pair = await start_match()
    turn = await pair.x.expect(YourTurn)
    o_conn = server.gateway.bots[pair.names[1]]
    spy = _CountingTransport(o_conn.transport)
    o_conn.transport = spy
    try:
        await pair.x.move(turn, 3)
        assert (await pair.o.expect(Moved)).move == 3
        assert (await pair.o.expect(YourTurn)).ply == 1
        assert spy.writes == 1  # the moved and the your_turn together
    finally:
        o_conn.transport = spy.inner
