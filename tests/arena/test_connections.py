"""A connection's outgoing side: one write per turn of the loop, and slow readers dropped."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from arena.connections import WRITE_HIGH_WATER, ClientConnection, text_frame_header
from arena.roundtrip import RoundTrip
from arena.server import ArenaServer
from protocol.messages import Error, Moved, YourTurn


class _FullTransport:
    """A neighbour fake: a socket whose peer never reads, so its write buffer stays full."""

    def get_write_buffer_size(self) -> int:
        return 10 * WRITE_HIGH_WATER

    def write(self, data: bytes) -> None:
        raise AssertionError("nothing may be written into a backed-up socket")


class StuckWebSocket:
    """A neighbour fake of the websocket: open, with a peer that stopped reading."""

    def __init__(self) -> None:
        self.round_trip = RoundTrip()
        self.protocol = SimpleNamespace(state=State.OPEN)
        self.transport = _FullTransport()
        self.closed_with: tuple[int, str] | None = None

    async def close(self, code: int, reason: str) -> None:
        self.closed_with = (code, reason)


async def test_a_reader_that_stops_reading_is_dropped_without_blocking_the_sender() -> None:
    ws = StuckWebSocket()
    conn = ClientConnection(ws, queue_size=3)  # type: ignore[arg-type]
    error = Error(code="internal", message="x")
    conn.send(error)
    await asyncio.sleep(0)  # the write waits: the socket is backed up
    assert not conn.closing and ws.closed_with is None
    for _ in range(10):
        conn.send(error)  # never blocks, never grows past the bound
    await asyncio.sleep(0)
    assert conn.closing and ws.closed_with is not None and ws.closed_with[0] == 1008
    await conn.stop()


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
    o_conn = server._bots[pair.names[1]]
    spy = _CountingTransport(o_conn.websocket.transport)
    o_conn.websocket.transport = spy
    try:
        await pair.x.move(turn, 3)
        assert (await pair.o.expect(Moved)).move == 3
        assert (await pair.o.expect(YourTurn)).ply == 1
        assert spy.writes == 1  # the moved and the your_turn together
    finally:
        o_conn.websocket.transport = spy.inner


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65_535, 65_536, 70_000])
def test_a_text_frame_header_is_what_websockets_would_write(size: int) -> None:
    payload = b"x" * size
    expected = Frame(Opcode.TEXT, payload).serialize(mask=False, extensions=[])
    assert text_frame_header(size) + payload == expected


class _RecordingTransport:
    """A neighbour fake of a socket that takes everything: the writes, as they were made."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def get_write_buffer_size(self) -> int:
        return 0

    def write(self, data: bytes) -> None:
        self.writes.append(data)


class OpenWebSocket:
    """A neighbour fake of an open websocket whose peer reads everything."""

    def __init__(self) -> None:
        self.round_trip = RoundTrip()
        self.protocol = SimpleNamespace(state=State.OPEN, data_to_send=list)
        self.transport = _RecordingTransport()


def frames_of(*messages: Error) -> bytes:
    """What websockets would write for ``messages``, one unmasked text frame each."""
    return b"".join(
        Frame(Opcode.TEXT, m.to_json().encode()).serialize(mask=False, extensions=[])
        for m in messages
    )


async def test_what_is_sent_after_a_flush_leaves_at_the_end_of_the_same_turn() -> None:
    a_ws, b_ws = OpenWebSocket(), OpenWebSocket()
    a = ClientConnection(a_ws, queue_size=8)  # type: ignore[arg-type]
    b = ClientConnection(b_ws, queue_size=8)  # type: ignore[arg-type]
    first, second, third = (Error(code="internal", message=str(n)) for n in range(3))
    a.send(first)
    a.send(second)
    b.send(first)  # one object to two connections: framed once, sent to both
    a.outbox.flush()  # what the server does after each incoming message
    assert a_ws.transport.writes == [frames_of(first, second)]
    assert b_ws.transport.writes == [frames_of(first)]
    a.outbox.flush()  # nothing new: nothing written
    a.send(third)  # later in the same turn (a task, a timer): the end of the turn writes it
    assert a_ws.transport.writes == [frames_of(first, second)]
    await asyncio.sleep(0)
    assert a_ws.transport.writes == [frames_of(first, second), frames_of(third)]
    assert b_ws.transport.writes == [frames_of(first)]
    b.send(third)  # and in the next turn, again
    await asyncio.sleep(0)
    assert b_ws.transport.writes == [frames_of(first), frames_of(third)]
    await a.stop()
    await b.stop()
