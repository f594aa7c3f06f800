"""One client connection as the server sees it: a bounded outgoing queue and abuse limits.

The match runner and the spectator hub never await a socket. They call
``ClientConnection.send``, which only enqueues; a writer task drains the
queue onto the websocket. When the queue is full the client is not reading:
the connection is dropped (close 1008) instead of letting memory grow or a
match wait. ``close`` is queued too, so an ``error`` sent just before it is
delivered first.

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
from dataclasses import dataclass

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from arena.clock import Clock
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
        self._tokens = min(self._burst, self._tokens + 1.0)

    def take(self) -> bool:
        """Spend one token; False when the bucket is empty (the event should be refused)."""
        now = self._clock.now()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._rate)
        self._last = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True


class _LastJson:
    """The JSON text of the last message serialized, to reuse for the same object."""

    __slots__ = ("message", "text")

    def __init__(self) -> None:
        self.message: ServerMessage | None = None
        self.text = ""

    def of(self, message: ServerMessage) -> str:
        # Identity, not equality: messages are immutable, and a broadcast sends one object.
        if message is not self.message:
            self.text = message.to_json()
            self.message = message
        return self.text


_last_json = _LastJson()


@dataclass(frozen=True, slots=True)
class _CloseRequest:
    code: int
    reason: str


class ClientConnection:
    """A websocket plus its outgoing queue: a runner's ``PlayerLink``, the hub's ``Watcher``."""

    def __init__(self, websocket: ServerConnection, queue_size: int) -> None:
        self.websocket = websocket
        self.role: str | None = None
        self.name: str | None = None
        self.protocol_errors = 0
        self._queue: asyncio.Queue[str | _CloseRequest] = asyncio.Queue()
        self.queue_size = queue_size
        """Messages that may wait unsent before the client counts as not reading."""
        self._closing = False
        self._drop_task: asyncio.Task[None] | None = None
        self._writer = asyncio.create_task(self._write_all(), name=f"writer-{id(self):x}")

    def __repr__(self) -> str:
        return f"<ClientConnection {self.role or 'anonymous'} {self.name or ''}>"

    @property
    def rtt_ms(self) -> float:
        """The websocket ping round trip in milliseconds (``connection.latency``)."""
        return self.websocket.latency * 1000.0

    @property
    def closing(self) -> bool:
        """True once a close was requested; nothing more will be sent."""
        return self._closing

    def send(self, message: ServerMessage) -> None:
        """Queue ``message``; a client that lets the queue fill up is dropped."""
        if self._closing:
            return
        if self._queue.qsize() >= self.queue_size:
            log.info("dropping %r: outgoing queue full", self)
            self._drop()
            return
        self._queue.put_nowait(_last_json.of(message))

    def close(self, code: int, reason: str) -> None:
        """Close after the messages already queued have been sent."""
        if self._closing:
            return
        self._closing = True
        self._queue.put_nowait(_CloseRequest(code, reason))

    async def wait_closed(self, timeout: float | None = None) -> None:
        """Wait until the writer has flushed and closed (or the socket died)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._writer)

    async def stop(self) -> None:
        """Stop the writer; used when the handler exits and the socket is gone anyway."""
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer

    def _drop(self) -> None:
        # The client is not reading: what is queued will never go out, so skip it.
        self._closing = True
        self._writer.cancel()
        # Kept in an attribute: the loop holds tasks only weakly.
        self._drop_task = asyncio.get_running_loop().create_task(
            self.websocket.close(CloseCode.POLICY_VIOLATION, "not reading: outgoing queue full")
        )

    async def _write_all(self) -> None:
        try:
            while True:
                item = await self._queue.get()
                if isinstance(item, _CloseRequest):
                    await self.websocket.close(item.code, item.reason)
                    return
                await self.websocket.send(item)
        except ConnectionClosed:
            self._closing = True
