"""One websocket connection after its handshake: messages in, messages out, pings, closing.

``WebSocketConnection`` is the ``asyncio.Protocol`` of a connection once the
listener has accepted its upgrade. Framing is websockets' Sans-I/O
``ServerProtocol`` (its public API: ``receive_data``, ``events_received``,
``send_text``, ``send_ping``, ``send_close``, ``data_to_send``), except for
the plain data frames a move is made of, which ``arena.net.data_frames``
reads and writes itself (every other frame, and every close, is websockets'
to parse and answer); this class moves bytes and decides what a message
means for the connection.

Incoming: each complete message (a text frame, or the fragments of one) is
handed to ``on_message`` as it arrives, from ``data_received``: the message
is parsed and, for a move, refereed, and the answers it caused are written,
before the event loop does anything else. Messages that must wait for the
database (``InOrder`` in ``arena.net.gateway``) can pause reading.

Outgoing: ``send`` never blocks. It queues the message as a text frame
(serialized and framed once per message object, so a broadcast does it
once) and marks the connection in its loop's ``Outbox``. The outbox writes
each marked connection's queue in one ``transport.write`` after the
incoming message being handled, or at the end of the loop's turn for
messages queued by timers and tasks: a ``moved`` and the ``your_turn``
after it cost one system call. Messages wait in the queue only while the
socket is backed up; a client that lets ``queue_size`` messages pile up is
not reading and is dropped (close 1008) instead of growing memory or
holding a match.

Round trip: ``ping`` sends a websocket ping; the pong's delay is added to
the connection's ``RoundTrip`` (whose floor is credited on the bot's clock).
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from collections.abc import Callable, Sequence

from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from arena.net.data_frames import (
    frame_span,
    plain_payload,
    text_frame,
    text_payload,
    writes_directly,
)
from arena.play.roundtrip import RoundTrip
from protocol.messages import CloseCode, Error, ErrorCode, ServerMessage

log = logging.getLogger(__name__)

Data = str | bytes
"""One complete message: text as ``str`` (invalid UTF-8 stays ``bytes``), binary as ``bytes``."""

WRITE_HIGH_WATER = 64 * 1024
"""Bytes the transport may hold unsent before further messages wait in our own queue."""

TEXT_FIN = 0x81
"""The first byte of a final text frame."""

_BACKED_UP_RETRY_S = 0.02
"""How often a connection whose socket is backed up tries to hand over what waits."""


class _LastPayload:
    """The text frame of the last message serialized, to reuse for the same object."""

    __slots__ = ("message", "payload")

    def __init__(self) -> None:
        self.message: ServerMessage | None = None
        self.payload = b""

    def of(self, message: ServerMessage) -> bytes:
        # Identity, not equality: messages are immutable, and a broadcast sends one object.
        if message is not self.message:
            self.payload = text_frame(message.to_json().encode())
            self.message = message
        return self.payload


_last_payload = _LastPayload()


class Outbox:
    """The connections of one event loop with messages queued, to write together.

    ``flush`` writes them all. It runs after each incoming message and, for
    what timers and tasks queue, once at the end of the loop's turn: one
    callback per turn however many connections wait. That callback stays
    scheduled when an earlier ``flush`` already wrote everything: cancelling
    and rescheduling it for every incoming message would cost more than the
    idle call.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._marked: list[WebSocketConnection] = []
        self._scheduled = False

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Outbox:
        """The loop's outbox (made on first use)."""
        outbox = _outboxes.get(loop)
        if outbox is None:
            outbox = _outboxes[loop] = cls(loop)
        return outbox

    def mark(self, conn: WebSocketConnection) -> None:
        """``conn`` has messages to write (each connection is marked at most once at a time)."""
        self._marked.append(conn)
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._end_of_turn)

    def flush(self) -> None:
        """Write every marked connection's queue now."""
        if not self._marked:
            return
        marked, self._marked = self._marked, []
        for conn in marked:
            conn.write_pending()

    def _end_of_turn(self) -> None:
        self._scheduled = False
        self.flush()


_outboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Outbox] = (
    weakref.WeakKeyDictionary()
)


class WebSocketConnection(asyncio.Protocol):
    """A websocket connection as the server sees it; see the module docstring."""

    def __init__(
        self,
        transport: asyncio.Transport,
        protocol: ServerProtocol,
        *,
        remote: str,
        queue_size: int,
        close_timeout_s: float,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        self.transport = transport
        self.protocol = protocol
        self.remote = remote
        """The client's address (after ``--trust-proxy``), for logs and the login throttle."""
        self.queue_size = queue_size
        """Messages that may wait unsent before the client counts as not reading."""
        self.role: str | None = None
        self.name: str | None = None
        self.protocol_errors = 0
        self.round_trip = RoundTrip()
        self.on_message: Callable[[Data], None] | None = None
        self.on_closed: Callable[[], None] | None = None
        self._close_timeout_s = close_timeout_s
        self._on_lost = on_lost
        """Called once when the TCP connection is gone (the listener's connection count)."""
        self._loop = asyncio.get_running_loop()
        self._outbox = Outbox.of(self._loop)
        self._pending: list[bytes] = []
        self._marked = False
        self._retry: asyncio.TimerHandle | None = None
        self._closing = False
        self._partial_head = b""
        """The start of a frame whose header has not all arrived (at most 13 bytes)."""
        self._owed = 0
        """Bytes of the frame websockets is reading that have not arrived yet."""
        self._fragments: list[bytes] = []
        self._text = False
        self._early: list[Data] = []
        self._pings: dict[bytes, float] = {}
        self._closed = self._loop.create_future()
        self._close_timer: asyncio.TimerHandle | None = None

    def __repr__(self) -> str:
        return f"<WebSocketConnection {self.role or 'anonymous'} {self.name or ''} {self.remote}>"

    # What the server calls ------------------------------------------------------

    @property
    def rtt_ms(self) -> float:
        """The network round trip in milliseconds: the floor of recent pings (``RoundTrip``)."""
        return self.round_trip.floor_s * 1000.0

    @property
    def closing(self) -> bool:
        """True once a close was requested or the socket is gone; nothing more is sent."""
        return self._closing

    def deliver_to(self, on_message: Callable[[Data], None]) -> None:
        """Hand every message to ``on_message``, starting with any that arrived before."""
        self.on_message = on_message
        early, self._early = self._early, []
        for message in early:
            self._deliver(message)

    def send(self, message: ServerMessage) -> None:
        """Queue ``message``; a client that lets the queue fill up is dropped."""
        if self._closing:
            return
        if len(self._pending) >= self.queue_size:
            log.info("dropping %r: outgoing queue full", self)
            self._pending.clear()
            self._start_close(CloseCode.POLICY_VIOLATION, "not reading: outgoing queue full")
            return
        self._pending.append(_last_payload.of(message))
        if not self._marked and self._retry is None:
            self._marked = True
            self._outbox.mark(self)

    def close(self, code: int, reason: str) -> None:
        """Close after the messages already queued have been sent."""
        if self._closing:
            return
        self.write_pending(force=True)
        self._start_close(code, reason)

    async def wait_closed(self, timeout: float | None = None) -> None:
        """Wait until the TCP connection is gone (at most ``timeout`` seconds)."""
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._closed)
        except TimeoutError:
            self.transport.abort()

    def ping(self) -> None:
        """Send a ping; its pong adds a round-trip sample."""
        if self.protocol.state is not State.OPEN:
            return
        payload = os.urandom(4)
        self._pings[payload] = self._loop.time()
        self.protocol.send_ping(payload)
        self._write_protocol_output()

    def oldest_unanswered_ping_s(self) -> float:
        """Seconds since the oldest ping still waiting for its pong (0: none waits)."""
        if not self._pings:
            return 0.0
        return self._loop.time() - min(self._pings.values())

    def write_pending(self, force: bool = False) -> None:
        """Hand every queued message to the socket in one write.

        ``force`` writes even into a backed-up socket: the last words before a close.
        """
        self._marked = False
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._closing or not self._pending:
            return
        protocol = self.protocol
        if protocol.state is not State.OPEN:
            self._pending.clear()
            return
        if not force and self.transport.get_write_buffer_size() > WRITE_HIGH_WATER:
            # The client reads slower than we write: keep the messages (bounded by
            # queue_size) and retry shortly, instead of growing the transport's buffer.
            self._retry = self._loop.call_later(_BACKED_UP_RETRY_S, self.write_pending)
            return
        if writes_directly(protocol):
            # What websockets queued (a pong) goes first, then every frame, in one write.
            frames = protocol.data_to_send()
            frames.extend(self._pending)
            self._pending.clear()
            self.transport.write(b"".join(frames))
            return
        for frame in self._pending:
            protocol.send_text(text_payload(frame))
        self._pending.clear()
        self._write_protocol_output()

    # asyncio.Protocol -----------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        """Deliver each complete message; websockets reads every frame but plain ones
        (``arena.net.data_frames``), and what it parsed is acted on in the frames' order."""
        if self._partial_head:
            data, self._partial_head = self._partial_head + data, b""
        protocol, offset, size = self.protocol, 0, len(data)
        while offset < size:
            if self._owed:  # websockets is part way through a frame: the frame's rest is its
                take = min(self._owed, size - offset)
                self._owed -= take
                self._websockets_reads(data[offset : offset + take])
                offset += take
                continue
            if protocol.state is not State.OPEN:  # closing: whatever follows is websockets'
                self._websockets_reads(data[offset:])
                return
            span = frame_span(data, offset)
            if span is None:  # a few bytes of a header: wait for the rest
                self._partial_head = data[offset:]
                return
            header, length = span
            end = offset + header + length
            if end <= size:
                payload = plain_payload(data, offset, header, end, protocol)
                if payload is not None:
                    self._message(payload, data[offset] == TEXT_FIN)
                    offset = end
                    continue
            self._owed = header + length

    def _websockets_reads(self, data: bytes) -> None:
        protocol = self.protocol
        protocol.receive_data(data)
        self.handle_events(protocol.events_received())

    def handle_events(self, events: Sequence[Request | Response | Frame]) -> None:
        """Act on what websockets parsed: deliver messages, record pongs, write its answers."""
        protocol = self.protocol
        for event in events:
            if type(event) is not Frame:
                continue  # the handshake request was read before this connection existed
            opcode = event.opcode
            if opcode is Opcode.TEXT or opcode is Opcode.BINARY:
                if event.fin:
                    self._message(bytes(event.data), opcode is Opcode.TEXT)
                else:
                    self._fragments = [bytes(event.data)]
                    self._text = opcode is Opcode.TEXT
            elif opcode is Opcode.CONT:
                self._fragments.append(bytes(event.data))
                if event.fin:
                    data, self._fragments = b"".join(self._fragments), []
                    self._message(data, self._text)
            elif opcode is Opcode.PONG:
                self._pong(event)
            # PING (answered by websockets itself) and CLOSE (likewise) need nothing more.
        self._write_protocol_output()
        if protocol.state is not State.OPEN:
            self._closing = True
            self._pending.clear()

    def eof_received(self) -> bool | None:
        """The client half-closed: let websockets conclude, then close our side."""
        if self._partial_head:
            self.protocol.receive_data(self._partial_head)
            self._partial_head = b""
        self.protocol.receive_eof()
        self._write_protocol_output()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        """The TCP connection is gone: stop everything and tell the owner."""
        self.protocol.receive_eof()
        self._closing = True
        self._pending.clear()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._close_timer is not None:
            self._close_timer.cancel()
            self._close_timer = None
        if not self._closed.done():
            self._closed.set_result(None)
        on_closed, self.on_closed = self.on_closed, None
        self.on_message = None
        on_lost, self._on_lost = self._on_lost, None
        if on_lost is not None:
            on_lost()
        if on_closed is not None:
            on_closed()

    def pause_writing(self) -> None:
        """The transport's buffer is full: ``write_pending`` already holds back (high water)."""

    def resume_writing(self) -> None:
        """The transport drained."""

    # Internals ------------------------------------------------------------------

    def _message(self, data: bytes, text: bool) -> None:
        message: Data = data
        if text:
            # Invalid UTF-8 stays bytes, which the message parser rejects as bad JSON.
            try:  # noqa: SIM105 (runs per message: no contextlib.suppress)
                message = data.decode()
            except UnicodeDecodeError:
                pass
        if self.on_message is None:
            self._early.append(message)
        else:
            self._deliver(message)

    def _deliver(self, message: Data) -> None:
        assert self.on_message is not None
        try:
            self.on_message(message)
        except Exception:
            # Never into the transport's data_received: it would lose the connection's state.
            log.exception("handling a message failed; closing %r", self)
            self.send(Error(code=ErrorCode.INTERNAL, message="internal server error"))
            self.close(CloseCode.INTERNAL_ERROR, "internal error")
            return
        self._outbox.flush()

    def _pong(self, frame: Frame) -> None:
        sent = self._pings.pop(bytes(frame.data), None)
        if sent is None:
            return  # unsolicited: RFC 6455 allows it, and it measures nothing
        now = self._loop.time()
        # An answered ping also answers every older one (pongs may be coalesced).
        for payload, at in list(self._pings.items()):
            if at <= sent:
                del self._pings[payload]
        self.round_trip.add(now, now - sent)

    def _write_protocol_output(self) -> None:
        chunks = self.protocol.data_to_send()
        if not chunks:
            return
        end = chunks[-1] == b""  # websockets says the TCP connection should end now
        data = b"".join(chunks)
        if data:
            self.transport.write(data)  # one system call for every frame queued
        if end:
            self.transport.close()  # the server closes the TCP connection first

    def _start_close(self, code: int, reason: str) -> None:
        if self._closing and self._close_timer is not None:
            return
        self._closing = True
        self._pending.clear()
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(code, reason[:100])
            self._write_protocol_output()
        # The client should answer with its close frame; one that does not is cut off.
        self._close_timer = self._loop.call_later(self._close_timeout_s, self.transport.abort)
