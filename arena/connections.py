"""One client connection as the server sees it: a bounded outgoing queue and abuse limits.

The match runner and the spectator hub never await a socket. They call
``ClientConnection.send``, which only enqueues and marks the connection in
its event loop's ``Outbox``. The outbox writes each marked connection's
queue to its socket in one write, so a ``moved`` and the ``your_turn``
after it cost one system call, not two, and no task switch. It writes as
soon as the message that caused them has been handled (``MessageSocket``
calls ``Outbox.flush`` after each incoming message), and otherwise at the
end of the loop's turn. Writing after each message rather than once per
turn matters under load: one turn of the loop may read a hundred moves,
and the first of them should not wait for the other ninety-nine to be
refereed before its answer leaves. Messages wait in the queue only while the
socket is backed up (the client reads slower than we write); when the queue
is full the client is not reading and is dropped (close 1008) instead of
letting memory grow or a match wait. ``close`` first writes what is queued,
so an ``error`` sent just before it is delivered first.

Messages are serialized in ``send``, and a message sent to several
connections in a row (a ``moved`` broadcast to both players) is serialized
only once: the JSON text of the last message is kept with it.

``TokenBucket`` limits the incoming message rate per connection, on the
injected clock. It is there against floods; the server refunds the token of
a move that answers the bot's current turn, since the server's own pace
bounds those, and scales a bot's bucket by its ``max_matches``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import weakref

from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from arena.clock import Clock
from arena.inbound import MessageSocket
from protocol.messages import CloseCode, ServerMessage

log = logging.getLogger(__name__)


class TokenBucket:
    """Allows ``rate`` events per second on average and ``burst`` at once."""

    def __init__(self, rate: float, burst: int, clock: Clock) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._last = clock.now()

    def scale(self, factor: int) -> None:
        """Multiply rate and burst by ``factor`` (a bot's ``max_matches``), keeping the tokens."""
        self._tokens += self._burst * (factor - 1)
        self._rate *= factor
        self._burst *= factor

    def refund(self) -> None:
        """Give back the token of an event that turned out not to count."""
        tokens = self._tokens + 1.0
        self._tokens = tokens if tokens < self._burst else self._burst

    def take(self) -> bool:
        """Spend one token; False when the bucket is empty (the event should be refused)."""
        now = self._clock.now()
        tokens = self._tokens + (now - self._last) * self._rate
        # A comparison, not min(): this runs for every message (the builtin costs more).
        self._tokens = tokens if tokens < self._burst else self._burst
        self._last = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True


class _LastFrame:
    """The websocket frame of the last message serialized, to reuse for the same object."""

    __slots__ = ("frame", "message")

    def __init__(self) -> None:
        self.message: ServerMessage | None = None
        self.frame = b""

    def of(self, message: ServerMessage) -> bytes:
        """``message`` as one complete text frame: header and UTF-8 JSON."""
        # Identity, not equality: messages are immutable, and a broadcast sends one object.
        if message is not self.message:
            data = message.to_json().encode()
            self.frame = text_frame_header(len(data)) + data
            self.message = message
        return self.frame


_last_frame = _LastFrame()


class Outbox:
    """The connections of one event loop that have messages queued, to write together.

    ``flush`` writes them all; it runs after each incoming message (see
    ``MessageSocket.deliver_to``) and, for what anything else queued (a
    task, a timer), once at the end of the loop's turn: one callback per
    turn, however many connections wait. That callback stays scheduled when
    an earlier ``flush`` has already written everything (it then finds
    nothing to do): cancelling it and scheduling a new one for every
    incoming message cost more than the one idle call.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._marked: list[ClientConnection] = []
        self._scheduled = False

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> Outbox:
        """The loop's outbox (made on first use)."""
        outbox = _outboxes.get(loop)
        if outbox is None:
            outbox = _outboxes[loop] = cls(loop)
        return outbox

    def mark(self, conn: ClientConnection) -> None:
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
            conn._flush()

    def _end_of_turn(self) -> None:
        self._scheduled = False
        self.flush()


_outboxes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Outbox] = (
    weakref.WeakKeyDictionary()
)


def text_frame_header(size: int) -> bytes:
    """The header of an unmasked, final text frame of ``size`` payload bytes (RFC 6455 5.2)."""
    if size < 126:
        return _SHORT_HEADERS[size]
    if size < 1 << 16:
        return _MEDIUM_HEADER.pack(0x81, 126, size)
    return _LONG_HEADER.pack(0x81, 127, size)


_SHORT_HEADERS = [bytes((0x81, size)) for size in range(126)]
_MEDIUM_HEADER = struct.Struct("!BBH")
_LONG_HEADER = struct.Struct("!BBQ")

WRITE_HIGH_WATER = 64 * 1024
"""Bytes the transport may hold unsent before further messages wait in our own queue."""

_BACKED_UP_RETRY_S = 0.02
"""How often a connection whose socket is backed up tries to hand over what waits."""


class ClientConnection:
    """A websocket plus its outgoing queue: a runner's ``PlayerLink``, the hub's ``Watcher``."""

    def __init__(self, websocket: MessageSocket, queue_size: int) -> None:
        self.websocket = websocket
        self.role: str | None = None
        self.name: str | None = None
        self.protocol_errors = 0
        self._pending: list[bytes] = []
        self.queue_size = queue_size
        """Messages that may wait unsent before the client counts as not reading."""
        self._closing = False
        self._marked = False
        """In the outbox's list: a write is due."""
        self._retry: asyncio.TimerHandle | None = None
        """Set while the socket is backed up: the next attempt to write."""
        self._closer: asyncio.Task[None] | None = None
        self._loop = asyncio.get_running_loop()
        self.outbox = Outbox.of(self._loop)

    def __repr__(self) -> str:
        return f"<ClientConnection {self.role or 'anonymous'} {self.name or ''}>"

    @property
    def rtt_ms(self) -> float:
        """The network round trip in milliseconds: the floor of recent pings (``RoundTrip``)."""
        return self.websocket.round_trip.floor_s * 1000.0

    async def measure_rtt(self) -> None:
        """Ping the client now, so ``rtt_ms`` is measured before its first move.

        websockets' keepalive sends its first ping one ``ping_interval`` after
        the connection opens; until a pong comes back the round trip is 0, and a
        bot that plays at once would get no round-trip credit at all. Any pong
        records a sample; this returns once the ping is sent.
        """
        with contextlib.suppress(ConnectionClosed):
            await self.websocket.ping()

    @property
    def closing(self) -> bool:
        """True once a close was requested; nothing more will be sent."""
        return self._closing

    def send(self, message: ServerMessage) -> None:
        """Queue ``message``; a client that lets the queue fill up is dropped.

        The message goes out at the outbox's next flush (after the incoming
        message being handled, or at the end of this turn of the event loop),
        in one socket write with everything else queued for this connection
        meanwhile.
        """
        if self._closing:
            return
        if len(self._pending) >= self.queue_size:
            log.info("dropping %r: outgoing queue full", self)
            self._drop()
            return
        self._pending.append(_last_frame.of(message))
        if not self._marked and self._retry is None:
            self._marked = True
            self.outbox.mark(self)

    def close(self, code: int, reason: str) -> None:
        """Close after the messages already queued have been sent."""
        if self._closing:
            return
        self._flush(force=True)
        self._closing = True
        self._closer = self._loop.create_task(self._close(code, reason))

    async def wait_closed(self, timeout: float | None = None) -> None:
        """Wait until a requested close has completed (or the socket died)."""
        closer = self._closer
        if closer is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await asyncio.shield(closer)

    async def stop(self) -> None:
        """Forget what is still queued; used when the handler exits and the socket is gone."""
        self._closing = True
        self._pending.clear()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None

    async def _close(self, code: int, reason: str) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.websocket.close(code, reason)

    def _drop(self) -> None:
        # The client is not reading: what is queued will never go out, so skip it.
        self._pending.clear()
        self._closing = True
        # Kept in an attribute: the loop holds tasks only weakly.
        self._closer = self._loop.create_task(
            self._close(CloseCode.POLICY_VIOLATION, "not reading: outgoing queue full")
        )

    def _flush(self, force: bool = False) -> None:
        """Hand every queued message to the socket in one write (one system call).

        ``force`` writes even into a backed-up socket: the last words before a close.
        """
        self._marked = False
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._closing or not self._pending:
            return
        ws = self.websocket
        protocol, transport = ws.protocol, ws.transport
        if protocol.state is not State.OPEN:
            # Closing from the other side or by websockets itself: nothing more goes out.
            self._closing = True
            self._pending.clear()
            return
        if not force and transport.get_write_buffer_size() > WRITE_HIGH_WATER:
            # The client reads slower than we write: keep the messages (bounded by
            # queue_size) and try again shortly, instead of growing the transport's buffer.
            self._retry = self._loop.call_later(_BACKED_UP_RETRY_S, self._flush)
            return
        # websockets' own send_data() writes frame by frame, a system call each; and
        # building frames through its Protocol costs more than the frame itself.
        # Server frames are unmasked and no extension is ever negotiated (compression
        # is off), so a text frame is a 2- or 4-byte header and the payload (framed
        # once per message, in ``send``). Anything websockets queued itself (a pong)
        # goes first.
        chunks = protocol.data_to_send()
        chunks += self._pending
        self._pending.clear()
        transport.write(b"".join(chunks))
