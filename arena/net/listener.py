"""The arena's one port: HTTP requests and websocket upgrades, over TCP or TLS.

Each accepted connection starts with ``_RequestReader``, which parses the
HTTP request with h11. A websocket upgrade is handed to websockets'
Sans-I/O ``ServerProtocol``, which validates the handshake and answers it
(``accept`` or, for a foreign origin, ``reject`` with 403); once open, the
connection becomes a ``WebSocketConnection`` (``transport.set_protocol``)
and goes to ``on_websocket``. Any other request is answered by the
``Router`` (a body is read up to ``MAX_BODY_BYTES``) and the connection is
closed after the response.

Limits at the door (``docs/operations.md``, "Limits"), each refusal counted
in ``Refusals`` rather than logged one line each:

- a client address holding ``Crowd.max_per_address`` connections gets no
  more (``429``; on the TLS port the connection is closed unanswered);
- a request head over ``MAX_REQUEST_BYTES`` gets ``431``, a ``Content-Length``
  over ``MAX_BODY_BYTES`` gets ``413`` at once, before any body is read;
- a websocket upgrade is accepted only at ``WEBSOCKET_PATH`` (``404`` elsewhere);
- with TLS, the first byte of a connection tells a TLS handshake from plain
  HTTP: plain HTTP gets a ``400`` that says to use ``https://`` or ``wss://``,
  and a handshake (or a first byte) not done within ``TLS_HANDSHAKE_TIMEOUT_S``
  closes the connection. This needs the TLS port's own accept loop
  (``loop.sock_accept``, then ``loop.connect_accepted_socket`` with the TLS
  context), since asyncio's ``create_server(ssl=...)`` reads the first bytes
  itself and drops a connection that is not TLS without a word.

Origins: browsers send an ``Origin`` header with every websocket handshake,
and a page on another site could otherwise open a websocket to the arena
with the visitor's network position (cross-site websocket hijacking, and
DNS rebinding, where the attacker's name resolves to the arena so that
``Origin`` and ``Host`` agree). A handshake carrying ``Origin`` is accepted
only from the origin of ``--public-url``, one listed in ``allowed_origins``,
or the scheme and ``Host`` it was reached at when that host is an IP address
or ``localhost`` (names no rebinding can take over); one without ``Origin``
(bots, command-line tools) is always accepted.

Client addresses: the TCP peer, or with ``trust_proxy`` the last address
of ``X-Forwarded-For`` (the one the reverse proxy in front of the arena
added); used for logs and the login throttle.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import http
import ipaddress
import json
import logging
import socket
import ssl
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import h11
from websockets.server import ServerProtocol

from arena.net.crowd import Crowd
from arena.net.http import MAX_BODY_BYTES, HttpRequest, HttpResponse, Router, json_error
from arena.net.refusals import Refusals
from arena.net.websocket import WebSocketConnection

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 16 * 1024
"""Largest request head (request line and headers) accepted."""

REQUEST_TIMEOUT_S = 10.0
"""A connection must send its whole request within this long."""

TLS_HANDSHAKE_TIMEOUT_S = 10.0
"""A TLS connection must send its first byte and finish its handshake within this long."""

WEBSOCKET_PATH = "/"
"""The one path a websocket upgrade is accepted at (``docs/protocol.md``)."""

_TLS_HANDSHAKE = 0x16
"""The first byte of every TLS connection (a handshake record)."""


def raw_response(status: int, message: str) -> bytes:
    """A complete ``Connection: close`` JSON error response, for refusals outside h11."""
    body = json.dumps({"error": message}).encode()
    phrase = http.HTTPStatus(status).phrase
    head = (
        f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class OriginPolicy:
    """Which browser origins may open a websocket; see the module docstring."""

    def __init__(
        self, allowed: Sequence[str] = (), *, tls: bool = False, public_url: str | None = None
    ) -> None:
        origins = {origin.rstrip("/").lower() for origin in allowed}
        if public_url:
            parts = urlsplit(public_url.lower())
            scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
            origins.add(f"{scheme}://{parts.netloc}")
        self.allowed = frozenset(origins)
        self.scheme = "https" if tls else "http"

    def allows(self, origin: str | None, host: str | None) -> bool:
        """True for no ``Origin``, a configured one, or the ``Host`` reached when that is an
        address or ``localhost``."""
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        if origin in self.allowed:
            return True
        return (
            host is not None
            and origin == f"{self.scheme}://{host.lower()}"
            and _cannot_be_rebound(host)
        )


def _cannot_be_rebound(host: str) -> bool:
    """True when ``host`` (a ``Host`` header) names no DNS name: an IP address or localhost."""
    try:
        name = urlsplit(f"//{host}").hostname
    except ValueError:
        return False
    if name is None:
        return False
    if name == "localhost":
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


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
        crowd: Crowd,
        refusals: Refusals,
        ssl_context: ssl.SSLContext | None = None,
        allowed_origins: Sequence[str] = (),
        public_url: str | None = None,
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
        self.origins = OriginPolicy(
            allowed_origins, tls=ssl_context is not None, public_url=public_url
        )
        self.trust_proxy = trust_proxy
        self.crowd = crowd
        self.refusals = refusals
        self._server: asyncio.Server | None = None
        self._tls_sockets: list[socket.socket] = []
        self._accepting: list[asyncio.Task[None]] = []

    @property
    def port(self) -> int:
        """The port actually listened on (useful with port 0)."""
        if self._server is not None:
            port: int = self._server.sockets[0].getsockname()[1]
            return port
        if self._tls_sockets:
            return int(self._tls_sockets[0].getsockname()[1])
        raise RuntimeError("the listener is not started")

    async def bind(self) -> None:
        """Take the port without accepting yet; raises ``OSError`` when it cannot be used.

        The server binds before it opens the database, so a port in use fails the start
        before anything is created or touched.
        """
        loop = asyncio.get_running_loop()
        if self.ssl_context is None:
            self._server = await loop.create_server(
                lambda: _RequestReader(self),
                self.host,
                self.requested_port,
                start_serving=False,
            )
            return
        # asyncio's ssl server drops a plain-HTTP connection without a reply, so the TLS
        # port runs its own accept loop (``_accept``) that answers it with a 400.
        self._tls_sockets = await _bind(self.host, self.requested_port)

    async def start(self) -> None:
        """Accept connections on the bound port (binding first if ``bind`` was not called)."""
        if self._server is None and not self._tls_sockets:
            await self.bind()
        if self._server is not None:
            await self._server.start_serving()
            return
        loop = asyncio.get_running_loop()
        self._accepting = [loop.create_task(self._accept(sock)) for sock in self._tls_sockets]

    def close(self) -> None:
        """Stop accepting connections (open ones are the gateway's to close)."""
        if self._server is not None:
            self._server.close()
        for task in self._accepting:
            task.cancel()
        self._accepting = []
        for sock in self._tls_sockets:
            sock.close()
        self._tls_sockets = []

    def admit(self, address: str) -> bool:
        """Count a connection of ``address`` against its cap; False (and counted) when over."""
        if self.crowd.admit(address):
            return True
        self.refusals.count("address_cap", address)
        return False

    async def _accept(self, sock: socket.socket) -> None:
        """The TLS port's accept loop: each connection goes through ``_tls_door``."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, address = await loop.sock_accept(sock)
            except OSError as exc:
                # Out of open files (or memory): what is open must close first.
                log.warning("cannot accept a connection: %s", exc)
                await asyncio.sleep(1.0)
                continue
            self.spawn(self._tls_door(conn, str(address[0])), "tls-door")

    async def _tls_door(self, conn: socket.socket, peer: str) -> None:
        """Start TLS on a connection whose first byte is a handshake; refuse anything else."""
        conn.setblocking(False)
        admitted = None if self.trust_proxy else peer
        if admitted is not None and not self.admit(admitted):
            conn.close()
            return
        loop = asyncio.get_running_loop()
        handed_over = False
        try:
            first = await _first_byte(loop, conn, TLS_HANDSHAKE_TIMEOUT_S)
            if first is None:
                self.refusals.count("tls_handshake", peer)
            elif first[0] != _TLS_HANDSHAKE:
                self.refusals.count("plain_http_on_tls", peer)
                await _refuse_plain(loop, conn)
            else:
                await loop.connect_accepted_socket(
                    lambda: _RequestReader(self, admitted),
                    conn,
                    ssl=self.ssl_context,
                    ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT_S,
                )
                handed_over = True
        except (OSError, TimeoutError, ssl.SSLError):
            self.refusals.count("tls_handshake", peer)
        finally:
            if not handed_over:
                conn.close()
                if admitted is not None:
                    self.crowd.release(admitted)

    def client_address(self, peer: str, headers: dict[str, str]) -> str:
        """The address to log and throttle: the peer, or the proxy's ``X-Forwarded-For``."""
        if self.trust_proxy:
            forwarded = headers.get("x-forwarded-for", "")
            last = forwarded.rsplit(",", 1)[-1].strip()
            if last:
                return last
        return peer


async def _bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host``'s addresses (port 0: the first address only)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in infos[:1] if port == 0 else infos:
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(1024)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


async def _first_byte(
    loop: asyncio.AbstractEventLoop, conn: socket.socket, timeout: float
) -> bytes | None:
    """The connection's first byte, left unread (``MSG_PEEK``); None: none in time, or EOF."""
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(conn.fileno(), readable)
    try:
        async with asyncio.timeout(timeout):
            await ready
    except TimeoutError:
        return None
    finally:
        loop.remove_reader(conn.fileno())
    return conn.recv(1, socket.MSG_PEEK) or None


async def _refuse_plain(loop: asyncio.AbstractEventLoop, conn: socket.socket) -> None:
    """Answer plain HTTP on the TLS port with a 400 naming the right schemes."""
    with contextlib.suppress(BlockingIOError):
        conn.recv(MAX_REQUEST_BYTES)  # what the client sent, so closing sends no reset
    message = "this port speaks TLS: use https:// or wss://"
    await loop.sock_sendall(conn, raw_response(400, message))
    conn.shutdown(socket.SHUT_WR)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(1.0):
            while await loop.sock_recv(conn, 4096):
                pass  # until the client closes too (at most 1 s), so that it reads the answer


class _RequestReader(asyncio.Protocol):
    """Reads one HTTP request; answers it or upgrades to a websocket.

    ``admitted`` is the address this connection counts against in the crowd
    (already admitted by the TLS door; None: admitted here, or behind a proxy
    once its forwarded address is read).
    """

    def __init__(self, listener: Listener, admitted: str | None = None) -> None:
        self._listener = listener
        self._admitted = admitted
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
        listener = self._listener
        if self._admitted is None and not listener.trust_proxy:
            if not listener.admit(self._peer):
                self._refuse(429, "too many connections from your address")
                return
            self._admitted = self._peer
        self._timer = asyncio.get_running_loop().call_later(
            REQUEST_TIMEOUT_S, self._transport.abort
        )

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        self._release()

    def _release(self) -> None:
        """This connection no longer counts against its address (closed, or handed over)."""
        if self._admitted is not None:
            self._listener.crowd.release(self._admitted)
            self._admitted = None

    def _refuse(self, status: int, message: str, reason: str | None = None) -> None:
        """Answer with ``status`` outside h11 and close (``reason``: count a refusal)."""
        self._done = True
        if reason is not None:
            self._listener.refusals.count(reason, self._peer)
        assert self._transport is not None
        self._transport.write(raw_response(status, message))
        self._close()

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        if self._request is None:
            self._raw += data
        self._http.receive_data(data)
        try:
            self._read_events()
        except h11.RemoteProtocolError as exc:
            if exc.error_status_hint == 431:
                self._refuse(431, _HEAD_TOO_LARGE, "head_too_large")
            else:
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
                if not self._admissible(event):
                    return
                if _header(event, b"upgrade").lower() == "websocket":
                    if urlsplit(event.target.decode("latin-1")).path != WEBSOCKET_PATH:
                        self._refuse(
                            404, f"websockets are served at {WEBSOCKET_PATH} only", "websocket_path"
                        )
                        return
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

    def _admissible(self, request: h11.Request) -> bool:
        """Check the head's size, the announced body and (behind a proxy) the address's cap."""
        end = self._raw.find(b"\r\n\r\n")
        if end < 0 or end + 4 > MAX_REQUEST_BYTES:
            self._refuse(431, _HEAD_TOO_LARGE, "head_too_large")
            return False
        length = _header(request, b"content-length")
        # h11 checked it is digits; a longer number than the limit's is over it anyway.
        if length and (len(length) > 12 or int(length) > MAX_BODY_BYTES):
            self._refuse(413, f"request body over {MAX_BODY_BYTES} bytes", "body_too_large")
            return False
        listener = self._listener
        if listener.trust_proxy and self._admitted is None:
            address = listener.client_address(self._peer, self._headers())
            if not listener.admit(address):
                self._refuse(429, "too many connections from your address")
                return False
            self._admitted = address
        return True

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
        admitted, self._admitted = self._admitted, None  # the websocket releases it now
        crowd = listener.crowd
        conn = WebSocketConnection(
            transport,
            protocol,
            remote=listener.client_address(self._peer, headers),
            queue_size=listener.queue_size,
            close_timeout_s=listener.close_timeout_s,
            on_lost=None if admitted is None else lambda: crowd.release(admitted),
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


_HEAD_TOO_LARGE = f"request head over {MAX_REQUEST_BYTES} bytes"


def _header(request: h11.Request, name: bytes) -> str:
    for key, value in request.headers:
        if key == name:
            return str(value.decode("latin-1"))
    return ""
