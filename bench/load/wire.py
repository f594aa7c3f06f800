"""One bot's websocket: websockets' Sans-I/O client on a socket read with kernel receive times."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Callable

from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's value; Python has no name
_ANCILLARY_BYTES = socket.CMSG_SPACE(struct.calcsize("@ll"))


class Wire:
    """A websocket client (websockets' ``ClientProtocol``, driven as its Sans-I/O guide says)
    whose socket is read with ``recvmsg``, keeping the kernel's receive time (``SO_TIMESTAMPNS``)
    as ``received_ns``: a latency measured to it leaves out this busy process's own delay. A
    send the kernel does not take whole means the server stopped reading: the wire is lost."""

    def __init__(self, sock: socket.socket, url: str, on_text: Callable[[bytes], None]) -> None:
        self.on_text, self.received_ns, self._sock = on_text, 0, sock
        self._loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = self._loop.create_future()
        self.lost: asyncio.Future[BaseException | None] = self._loop.create_future()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        self._ws = ClientProtocol(parse_uri(url))
        self._ws.send_request(self._ws.connect())
        self._flush()
        self._loop.add_reader(sock.fileno(), self._readable)

    @classmethod
    async def open(cls, url: str, on_text: Callable[[bytes], None], timeout: float) -> Wire:
        """Connect to ``url`` and complete the websocket handshake."""
        uri, sock = parse_uri(url), socket.socket()
        sock.setblocking(False)
        async with asyncio.timeout(timeout):
            await asyncio.get_running_loop().sock_connect(sock, (uri.host, uri.port))
            wire = cls(sock, url, on_text)
            await wire.opened
        return wire

    def send(self, text: str) -> None:
        """Send one text message (dropped once the connection is closing)."""
        if self._ws.state is State.OPEN:
            self._ws.send_text(text.encode())
            self._flush()

    def close(self) -> None:
        """Send a close frame (1000), then close the socket without waiting for the echo."""
        if self._ws.state is State.OPEN:
            self._ws.send_close(1000)
            self._flush()
        self._lose(None)

    def _readable(self) -> None:
        try:
            data, ancillary, _, _ = self._sock.recvmsg(1 << 16, _ANCILLARY_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            return self._lose(exc)
        for level, kind, raw in ancillary:
            if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS:
                seconds, nanoseconds = struct.unpack_from("@ll", raw)
                self.received_ns = seconds * 1_000_000_000 + nanoseconds
        ws = self._ws
        ws.receive_data(data) if data else ws.receive_eof()
        for event in ws.events_received():
            if not isinstance(event, Frame):  # the handshake response
                if ws.handshake_exc is not None:
                    self._lose(ws.handshake_exc)
                elif not self.opened.done():
                    self.opened.set_result(None)
            elif event.opcode is Opcode.TEXT and event.fin:
                self.on_text(bytes(event.data))  # bytes already: no copy
            elif event.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
                self._lose(ConnectionError("the arena sends whole text messages only"))
        self._flush()
        if not data:
            self._lose(None)
        elif ws.close_expected():  # the server closes TCP next; give it a moment
            self._loop.call_later(5.0, self._lose, None)

    def _flush(self) -> None:
        for chunk in self._ws.data_to_send():
            try:
                if not chunk:  # end of stream: half-close, as the Sans-I/O guide says
                    self._sock.shutdown(socket.SHUT_WR)
                elif self._sock.send(chunk) < len(chunk):
                    raise BlockingIOError("the server stopped reading")
            except OSError as exc:
                return self._lose(exc)

    def _lose(self, exc: BaseException | None) -> None:
        if not self.lost.done():
            self._loop.remove_reader(self._sock.fileno())
            self._sock.close()
            self.lost.set_result(exc)
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
