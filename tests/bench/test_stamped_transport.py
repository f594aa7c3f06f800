"""The load bench's client transport: every byte through, in order, with kernel receive times."""

from __future__ import annotations

import asyncio
import random
import socket
import sys
import time

from bench.server_load import LeanSocket, StampedTransport


class _Recorder(LeanSocket):
    """A LeanSocket whose raw bytes and receive times are kept (no websocket upgrade)."""

    def __init__(self) -> None:
        super().__init__("127.0.0.1", 0)
        self.data = bytearray()
        self.stamps: list[int | None] = []
        self.lost: asyncio.Future[Exception | None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.data += data
        self.stamps.append(self.received_ns)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(exc)


async def test_large_writes_queue_and_drain_and_reads_are_stamped() -> None:
    loop = asyncio.get_running_loop()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    accepted = asyncio.ensure_future(loop.sock_accept(listener))
    client = _Recorder()
    transport = await StampedTransport.connect("127.0.0.1", port, client)
    peer, _ = await accepted
    listener.close()
    peer.setblocking(False)
    # More than the socket buffers hold, so part of it waits for the peer to read.
    payload = random.Random(7).randbytes(8 << 20)
    transport.write(payload[: 4 << 20])
    transport.write(payload[4 << 20 :])
    assert transport._pending, "the socket took 8 MiB at once; the queue went untested"
    received = bytearray()
    while len(received) < len(payload):
        received += await asyncio.wait_for(loop.sock_recv(peer, 1 << 20), 10)
    assert received == payload
    # The other way: what the peer sends arrives whole, each read with its receive time.
    before = time.time_ns()
    await loop.sock_sendall(peer, b"x" * 100_000)
    while len(client.data) < 100_000:
        await asyncio.sleep(0.01)
    assert client.data == b"x" * 100_000
    if sys.platform == "linux":
        after = time.time_ns()
        assert all(stamp is not None and before <= stamp <= after for stamp in client.stamps)
    peer.close()
    assert await asyncio.wait_for(client.lost, 10) is None
    assert transport.is_closing()
    transport.write(b"after the end")  # dropped, not raised
