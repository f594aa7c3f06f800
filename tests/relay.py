"""A TCP relay on 127.0.0.1 standing in for the network between a bot and the server.

It can hold back what the client sends (a distant bot: its moves and pongs
arrive late) and cut every connection at once (a network failure: no
websocket close, the sockets are reset). Given a ``tls`` server context it
terminates TLS in front of a plain server, as a reverse proxy would.
"""

from __future__ import annotations

import asyncio
import ssl


class TcpRelay:
    """Relays connections to ``target_port``; each chunk the client sends arrives ``uplink_delay_s``
    after it came, in order. What the server sends goes through at once.
    """

    def __init__(
        self, target_port: int, uplink_delay_s: float = 0.0, tls: ssl.SSLContext | None = None
    ) -> None:
        self.target_port = target_port
        self.uplink_delay_s = uplink_delay_s
        self.tls = tls
        self.connections = 0
        """Connections accepted (for TLS: handshakes completed)."""
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        """Listen on a free loopback port; returns it."""
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0, ssl=self.tls)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    def cut(self) -> None:
        """Reset every relayed connection, without a websocket close."""
        for writer in self._writers:
            writer.transport.abort()
        self._writers.clear()

    async def close(self) -> None:
        """Stop listening and cut every relayed connection."""
        if self._server is not None:
            self._server.close()
        self.cut()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _relay(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        self._writers += [client_w, server_w]
        loop = asyncio.get_running_loop()
        late: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def read_up() -> None:
            try:
                while data := await client_r.read(65536):
                    late.put_nowait((loop.time() + self.uplink_delay_s, data))
            finally:  # end of file, or the connection was cut: the uplink ends too
                late.put_nowait((loop.time() + self.uplink_delay_s, b""))

        async def write_up() -> None:
            while True:
                due, data = await late.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if not data:
                    server_w.close()
                    return
                server_w.write(data)
                await server_w.drain()

        async def down() -> None:
            while data := await server_r.read(65536):
                client_w.write(data)
                await client_w.drain()
            client_w.close()

        tasks = [loop.create_task(job()) for job in (read_up, write_up, down)]
        self._tasks.update(tasks)
        try:
            # Each direction ends at its end of file, on a cut, or when ``close`` cancels it.
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            for task in tasks:
                task.cancel()
                self._tasks.discard(task)
            for writer in (client_w, server_w):
                writer.close()
