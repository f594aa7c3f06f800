"""The arena's one port: HTTP requests and websocket upgrades, over TCP or TLS.

Each accepted connection starts with ``_RequestReader``, which parses the
HTTP request with h11. A websocket upgrade is handed to websockets'
Sans-I/O ``ServerProtocol``, which validates the handshake and answers it
(``accept`` or, for a foreign origin, ``reject`` with 403); once open, the
connection becomes a ``WebSocketConnection`` (``transport.set_protocol``)
and goes to ``on_websocket``. Any other request is answered by the
``Router`` (a body is read up to ``MAX_BODY_BYTES``) and the connection is
closed after the response.

Origins: browsers send an ``Origin`` header with every websocket handshake,
and a page on another site could otherwise open a websocket to the arena
with the visitor's network position (cross-site websocket hijacking).
A handshake carrying ``Origin`` is accepted only from the server's own
origin (the scheme and the ``Host`` it was reached at) or one listed in
``allowed_origins``; one without ``Origin`` (bots, command-line tools) is
always accepted.

Client addresses: the TCP peer, or with ``trust_proxy`` the last address
of ``X-Forwarded-For`` (the one the reverse proxy in front of the arena
added); used for logs and the login throttle.
"""

from __future__ import annotations

import asyncio
import email.utils
import http
import logging
import ssl
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, cast

import h11
from websockets.server import ServerProtocol

from arena.net.http import MAX_BODY_BYTES, HttpRequest, HttpResponse, Router, json_error
from arena.net.websocket import WebSocketConnection

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 16 * 1024
"""Largest request head (request line and headers) accepted."""

REQUEST_TIMEOUT_S = 10.0
"""A connection must send its whole request within this long."""


class OriginPolicy:
    """Which browser origins may open a websocket; see the module docstring."""

    def __init__(self, allowed: Sequence[str] = (), *, tls: bool = False) -> None:
        self.allowed = frozenset(origin.rstrip("/").lower() for origin in allowed)
        self.scheme = "https" if tls else "http"

    def allows(self, origin: str | None, host: str | None) -> bool:
        """True for no ``Origin``, the server's own origin, or a configured one."""
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if host is not None and origin == f"{self.scheme}://{host.lower()}":
            return True
        return origin in self.allowed


Spawn = Callable[[Coroutine[Any, Any, None], str], object]


class Listener:
    """Listens on one port for HTTP and websockets; see the module docstring."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        router: Router,
        on_websocket: Callable[[WebSocketConnection], None],
        spawn: Spawn,
        max_message_bytes: int,
        queue_size: int,
        close_timeout_s: float,
        ssl_context: ssl.SSLContext | None = None,
        allowed_origins: Sequence[str] = (),
        trust_proxy: bool = False,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.router = router
        self.on_websocket = on_websocket
        self.spawn = spawn
        self.max_message_bytes = max_message_bytes
        self.queue_size = queue_size
        self.close_timeout_s = close_timeout_s
        self.ssl_context = ssl_context
        self.origins = OriginPolicy(allowed_origins, tls=ssl_context is not None)
        self.trust_proxy = trust_proxy
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        """The port actually listened on (useful with port 0)."""
        if self._server is None:
            raise RuntimeError("the listener is not started")
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def bind(self) -> None:
        """Take the port without accepting yet; raises ``OSError`` when it cannot be used.

        The server binds before it opens the database, so a port in use fails the start
        before anything is created or touched.
        """
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _RequestReader(self),
            self.host,
            self.requested_port,
            ssl=self.ssl_context,
            start_serving=False,
        )

    async def start(self) -> None:
        """Accept connections on the bound port (binding first if ``bind`` was not called)."""
        if self._server is None:
            await self.bind()
        assert self._server is not None
        await self._server.start_serving()

    def close(self) -> None:
        """Stop accepting connections (open ones are the gateway's to close)."""
        if self._server is not None:
            self._server.close()

    def client_address(self, peer: str, headers: dict[str, str]) -> str:
        """The address to log and throttle: the peer, or the proxy's ``X-Forwarded-For``."""
        if self.trust_proxy:
            forwarded = headers.get("x-forwarded-for", "")
            last = forwarded.rsplit(",", 1)[-1].strip()
            if last:
                return last
        return peer


class _RequestReader(asyncio.Protocol):
    """Reads one HTTP request; answers it or upgrades to a websocket."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        self._http = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST_BYTES)
        self._raw = bytearray()
        self._request: h11.Request | None = None
        self._body = bytearray()
        self._transport: asyncio.Transport | None = None
        self._peer = ""
        self._timer: asyncio.TimerHandle | None = None
        self._done = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self._peer = str(peer[0]) if isinstance(peer, tuple) else str(peer or "")
        self._timer = asyncio.get_running_loop().call_later(
            REQUEST_TIMEOUT_S, self._transport.abort
        )

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        if self._request is None:
            self._raw += data
        self._http.receive_data(data)
        try:
            self._read_events()
        except h11.RemoteProtocolError as exc:
            self._respond(json_error(exc.error_status_hint, f"bad request: {exc}"), head=False)

    def eof_received(self) -> bool | None:
        return None

    def _read_events(self) -> None:
        while not self._done:
            event = self._http.next_event()
            if event is h11.NEED_DATA or event is h11.PAUSED:
                if event is h11.PAUSED and self._request is not None:
                    self._respond(json_error(400, "unsupported upgrade"), head=False)
                return
            if isinstance(event, h11.Request):
                self._request = event
                if _header(event, b"upgrade").lower() == "websocket":
                    self._upgrade()
                    return
            elif isinstance(event, h11.Data):
                self._body += event.data
                if len(self._body) > MAX_BODY_BYTES:
                    self._respond(json_error(413, "request body too large"), head=False)
                    return
            elif isinstance(event, h11.EndOfMessage):
                self._dispatch()
                return
            elif isinstance(event, h11.ConnectionClosed):
                self._close()
                return

    def _headers(self) -> dict[str, str]:
        assert self._request is not None
        return {
            name.decode("latin-1"): value.decode("latin-1") for name, value in self._request.headers
        }

    def _upgrade(self) -> None:
        listener, transport = self._listener, self._transport
        assert transport is not None
        self._done = True
        self._stop_timer()
        headers = self._headers()
        protocol = ServerProtocol(max_size=listener.max_message_bytes)
        # websockets parses and validates the handshake itself, from the same bytes.
        protocol.receive_data(bytes(self._raw))
        requests = protocol.events_received()
        if not requests:
            self._write_and_maybe_close(protocol)
            return
        request = requests[0]
        if listener.origins.allows(headers.get("origin"), headers.get("host")):
            response = protocol.accept(request)  # type: ignore[arg-type]
        else:
            response = protocol.reject(http.HTTPStatus.FORBIDDEN, "origin not allowed\n")
        protocol.send_response(response)
        if response.status_code != 101:
            self._write_and_maybe_close(protocol)
            return
        conn = WebSocketConnection(
            transport,
            protocol,
            remote=listener.client_address(self._peer, headers),
            queue_size=listener.queue_size,
            close_timeout_s=listener.close_timeout_s,
        )
        transport.set_protocol(conn)
        for chunk in protocol.data_to_send():
            transport.write(chunk)
        listener.on_websocket(conn)
        # Frames a client sent right behind its request (before our 101) were parsed too.
        conn.handle_events(requests[1:])

    def _write_and_maybe_close(self, protocol: ServerProtocol) -> None:
        assert self._transport is not None
        for chunk in protocol.data_to_send():
            if chunk:
                self._transport.write(chunk)
        self._transport.close()

    def _dispatch(self) -> None:
        assert self._request is not None and self._transport is not None
        self._done = True
        self._transport.pause_reading()
        headers = self._headers()
        request = HttpRequest(
            path=self._request.target.decode("latin-1"),
            query={},
            headers=headers,
            method=self._request.method.decode("ascii", "replace").upper(),
            body=bytes(self._body),
            remote=self._listener.client_address(self._peer, headers),
        )
        self._listener.spawn(self._answer(request), "http-request")

    async def _answer(self, request: HttpRequest) -> None:
        response = await self._listener.router.dispatch(request)
        self._respond(response, head=request.method == "HEAD")

    def _respond(self, response: HttpResponse, *, head: bool) -> None:
        self._done = True
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        status = http.HTTPStatus(response.status)
        fields = {
            "date": email.utils.formatdate(usegmt=True),
            "connection": "close",
            "content-length": str(len(response.body)),
            "content-type": response.content_type,
            "cache-control": "no-store",
        }
        fields.update({k.lower(): v for k, v in response.headers.items()})
        try:
            data = self._http.send(
                h11.Response(
                    status_code=status.value,
                    reason=status.phrase.encode(),
                    headers=[(k.encode(), v.encode("latin-1")) for k, v in fields.items()],
                )
            )
            if not head and response.body and status.value != 304:
                data = (data or b"") + (self._http.send(h11.Data(data=response.body)) or b"")
            data = (data or b"") + (self._http.send(h11.EndOfMessage()) or b"")
        except h11.LocalProtocolError:
            # h11 cannot answer in this state (the request was unreadable): close.
            self._close()
            return
        transport.write(data)
        self._close()

    def _close(self) -> None:
        self._stop_timer()
        if self._transport is not None:
            self._transport.close()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _header(request: h11.Request, name: bytes) -> str:
    for key, value in request.headers:
        if key == name:
            return str(value.decode("latin-1"))
    return ""
