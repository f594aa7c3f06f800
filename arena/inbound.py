"""How a connection's incoming messages reach the server: as they arrive, in order.

websockets' own receive path queues each frame in an assembler and wakes a
task blocked in ``recv()``, once per message. At thousands of moves a second
that task switch is a large share of the server's work, so ``MessageSocket``
(a ``ServerConnection`` made by ``serve(create_connection=...)``) hands each
complete message straight to a callback from ``data_received`` instead:
the message is parsed and, for a move, applied, and the answers it
caused are written (``deliver_to``'s ``after_each``), before the event
loop does anything else.

It also reads the common frame itself: a complete, masked, unfragmented
text or binary frame on an open connection is unmasked and delivered
without going through websockets' generator-based parser. Every other
frame (control frames, fragments, anything malformed or too large) is
handed to websockets whole, so its parser always starts at a frame
boundary and handles them exactly as it would have; the HTTP upgrade
request is handed over whole in the same way. Once anything looks wrong
(a frame over the size limit, an unmasked or reserved-bit frame, an
over-long request), websockets gets the rest of the byte stream for good.

``InOrder`` is that callback's other half. Most messages are handled on the
spot; a message whose handling must wait (a ``hello`` that checks a token in
the database, a ``seek`` that looks up a rating) becomes a coroutine, and
the messages that arrive meanwhile wait behind it, so each connection's
messages still take effect in the order they were sent. While too many
wait, the socket stops being read (TCP pushes back on the client) instead of
the backlog growing.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import Event, State

from arena.roundtrip import RoundTrip

try:
    from websockets.speedups import apply_mask
except ImportError:  # websockets built without its C extension
    from websockets.utils import apply_mask

log = logging.getLogger(__name__)

Data = str | bytes
"""One complete message: text frames as ``str``, binary frames (or bad UTF-8) as ``bytes``."""

MAX_WAITING = 32
"""Messages that may wait behind a slow one before the socket stops being read."""

_DATA_OPCODES = (Opcode.TEXT, Opcode.BINARY, Opcode.CONT)

MAX_REQUEST_BYTES = 64 * 1024
"""An upgrade request longer than this goes to websockets unread (it refuses it)."""

_END_OF_REQUEST = b"\r\n\r\n"
_FIN_TEXT, _FIN_BINARY = 0x81, 0x82


def payload_extent(data: bytearray, start: int, size: int) -> tuple[int, int] | None:
    """The payload length of the frame at ``start``, and where its length field ends.

    None while ``data[:size]`` does not hold the whole length field yet. What
    follows it is the mask (4 bytes, when the mask bit of ``data[start + 1]``
    is set), then the payload (RFC 6455 5.2).
    """
    length, head = data[start + 1] & 0x7F, start + 2
    if length == 126:
        if size < head + 2:
            return None
        return int.from_bytes(data[head : head + 2], "big"), head + 2
    if length == 127:
        if size < head + 8:
            return None
        return int.from_bytes(data[head : head + 8], "big"), head + 8
    return length, head


class MessageSocket(ServerConnection):
    """A websockets server connection that passes each message to a callback as it arrives.

    Messages that arrive before ``deliver_to`` is called (between the
    handshake and the handler's start) are kept and delivered then, so
    none is lost or reordered. ``recv()`` is not used on these connections.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_message: Callable[[Data], None] | None = None
        self._after_each: Callable[[], None] | None = None
        self._early: list[Data] = []
        self._fragments: list[bytes] = []
        self._text = False
        self._unread = bytearray()
        """Bytes not handed on yet: the upgrade request so far, or a frame's first part."""
        self._request_read = False
        self._websockets_reads = False
        """True once websockets' own parser gets every byte (after anything unusual)."""
        self.round_trip = RoundTrip()
        """Every answered ping's round trip; its floor is what a bot's clock credits."""

    def data_received(self, data: bytes) -> None:
        """Deliver complete data frames directly; give websockets everything else, whole."""
        if self._websockets_reads:
            super().data_received(data)
            return
        unread = self._unread
        unread += data
        if not self._request_read:
            end = unread.find(_END_OF_REQUEST)
            if end < 0:
                if len(unread) > MAX_REQUEST_BYTES:
                    self._hand_over_the_rest(0)
                return
            end += len(_END_OF_REQUEST)
            request = bytes(unread[:end])
            del unread[:end]
            self._request_read = True
            super().data_received(request)
        self._read_frames()

    def _read_frames(self) -> None:
        unread, start, size = self._unread, 0, len(self._unread)
        while size - start >= 2:
            first, second = unread[start], unread[start + 1]
            length = second & 0x7F
            if length < 126:  # a move's frame: no extended length to read (no call)
                head = start + 2
            else:
                extent = payload_extent(unread, start, size)
                if extent is None:
                    break
                length, head = extent
            limit = self.protocol.max_message_size
            if (
                not second & 0x80  # unmasked: a protocol error
                or first & 0x70  # reserved bits, but no extension is negotiated
                or (limit is not None and length > limit)
            ):
                self._hand_over_the_rest(start)
                return
            end = head + 4 + length  # the 4 bytes after the header are the mask
            if end > size:
                break
            if (
                first in (_FIN_TEXT, _FIN_BINARY)
                and not self._fragments
                and self.protocol.state is State.OPEN
            ):
                data = apply_mask(unread[head + 4 : end], unread[head : head + 4])
                self._message(data, first == _FIN_TEXT)
            else:
                super().data_received(bytes(unread[start:end]))
            start = end
        del unread[:start]

    def _hand_over_the_rest(self, start: int) -> None:
        self._websockets_reads = True
        rest = bytes(self._unread[start:])
        self._unread.clear()
        if rest:
            super().data_received(rest)

    def deliver_to(
        self, on_message: Callable[[Data], None], after_each: Callable[[], None] | None = None
    ) -> None:
        """Send every message, starting with those already received, to ``on_message``.

        ``after_each`` runs after each message has been handled: the server
        writes the answers it queued (``Outbox.flush``) there, before the
        next message is read.
        """
        self._on_message = on_message
        self._after_each = after_each
        early, self._early = self._early, []
        if len(early) > MAX_WAITING:
            self.transport.resume_reading()
        for message in early:
            self._deliver(message)

    def process_event(self, event: Event) -> None:
        """Assemble data frames into messages; everything else is websockets' business."""
        if not (isinstance(event, Frame) and event.opcode in _DATA_OPCODES):
            super().process_event(event)
            return
        if event.opcode is Opcode.CONT:
            self._fragments.append(bytes(event.data))
        else:
            self._fragments = [bytes(event.data)]
            self._text = event.opcode is Opcode.TEXT
        if not event.fin:
            return  # websockets' parser already bounds the whole message by max_size
        data = b"".join(self._fragments)
        self._fragments = []
        self._message(data, self._text)

    def acknowledge_pings(self, data: bytes) -> None:
        """websockets' pong handling, plus recording the round trip it measured."""
        solicited = data in self.pending_pings
        super().acknowledge_pings(data)
        if solicited:
            self.round_trip.add(self.loop.time(), self.latency)

    def _message(self, data: bytes, text: bool) -> None:
        message: Data = data
        if text:
            # Invalid UTF-8 stays bytes, which the message parser rejects as bad JSON.
            # Not contextlib.suppress: this runs for every message.
            try:  # noqa: SIM105
                message = data.decode()
            except UnicodeDecodeError:
                pass
        if self._on_message is None:
            self._early.append(message)
            if len(self._early) == MAX_WAITING + 1:
                self.transport.pause_reading()
        else:
            self._deliver(message)

    def _deliver(self, message: Data) -> None:
        assert self._on_message is not None
        try:
            self._on_message(message)
            if self._after_each is not None:
                self._after_each()
        except Exception:
            # Never into websockets' data_received: it would lose the connection's state.
            log.exception("handling a message failed; closing %r", self)
            self.transport.abort()


Handler = Callable[[Data], Coroutine[Any, Any, None] | None]
"""Handles one message now (returns None) or returns the coroutine that will."""


class InOrder:
    """Runs one connection's messages in arrival order, synchronously whenever possible."""

    def __init__(
        self,
        handle: Handler,
        pause: Callable[[], None],
        resume: Callable[[], None],
        limit: int = MAX_WAITING,
    ) -> None:
        self._handle = handle
        self._pause = pause
        self._resume = resume
        self._limit = limit
        self._waiting: deque[Data] = deque()
        self._busy: asyncio.Task[None] | None = None
        self._paused = False
        self._stopped = False

    def put(self, message: Data) -> None:
        """Handle ``message`` now, or after the messages ahead of it."""
        if self._stopped:
            return
        if self._busy is not None:
            self._waiting.append(message)
            if len(self._waiting) > self._limit and not self._paused:
                self._paused = True
                self._pause()
            return
        self._run(message)

    def stop(self) -> None:
        """Drop what waits and cancel the message being handled (the connection is gone)."""
        self._stopped = True
        self._waiting.clear()
        if self._busy is not None:
            self._busy.cancel()

    def _run(self, message: Data) -> None:
        coro = self._handle(message)
        if coro is not None:
            self._busy = asyncio.get_running_loop().create_task(self._finish(coro))

    async def _finish(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            await coro
        finally:
            self._busy = None
            if not self._stopped:
                while self._waiting and self._busy is None:
                    self._run(self._waiting.popleft())
                if self._paused and len(self._waiting) <= self._limit // 2:
                    self._paused = False
                    self._resume()
