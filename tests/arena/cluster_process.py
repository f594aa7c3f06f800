"""Real ``arena serve`` nodes sharing one PostgreSQL database, for the multi-node tests.

``Node`` runs ``python -m arena serve --allow-multi-node --node-id ID`` on a
free port with its log in a file (what a test asserts on), and can be
stopped (SIGTERM) or killed (SIGKILL). ``query`` reads the database with
asyncpg, outside any arena process.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import urllib.request
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url
from websockets.asyncio.client import ClientConnection, connect

from protocol.messages import PROTOCOL_VERSION
from tests.bots.arena_process import ENV, prioritise, terminate


class Node:
    """One arena node process; ``async with Node(...)`` starts it and stops it at the end."""

    def __init__(self, directory: Path, db: str, node_id: str, *options: str) -> None:
        self.node_id = node_id
        self.log_path = directory / f"node-{node_id}.log"
        self.command = [
            sys.executable, "-m", "arena", "serve", "--port", "0", "--db", db,
            "--allow-multi-node", "--node-id", node_id, "--pairing-window", "0.02", *options,
        ]  # fmt: skip
        self.port = 0
        self._proc: asyncio.subprocess.Process | None = None

    async def start(self) -> Node:
        """Start and wait for the listening line."""
        with self.log_path.open("wb") as log:
            self._proc = await asyncio.create_subprocess_exec(
                *self.command, env=ENV, stdout=asyncio.subprocess.PIPE, stderr=log
            )
        prioritise(self._proc)
        assert self._proc.stdout is not None
        line = (await asyncio.wait_for(self._proc.stdout.readline(), 30)).decode()
        assert "listening on" in line, f"{line}{self.log()}"
        self.port = int(line.rsplit(":", 1)[1])
        return self

    async def __aenter__(self) -> Node:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        """The node's websocket URL."""
        return f"ws://127.0.0.1:{self.port}"

    async def health(self) -> dict[str, Any]:
        """The body of ``GET /healthz``."""

        def fetch() -> dict[str, Any]:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5) as r:
                body: dict[str, Any] = json.load(r)
                return body

        return await asyncio.to_thread(fetch)

    def log(self) -> str:
        """Everything the node logged so far."""
        return self.log_path.read_text()

    async def stop(self) -> int | None:
        """SIGTERM and wait (SIGKILL after 20 s); the exit status."""
        return None if self._proc is None else await terminate(self._proc)

    def pause(self) -> None:
        """SIGSTOP: the node stops answering and renewing its lease (as if cut off)."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after ``pause``."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGCONT)

    async def kill(self) -> None:
        """SIGKILL: the node dies without a word to anyone."""
        assert self._proc is not None
        self._proc.kill()
        await self._proc.wait()


async def query(db: str, sql: str, *args: Any) -> list[asyncpg.Record]:
    """Rows of ``sql`` on the database ``db`` (a SQLAlchemy URL)."""
    dsn = make_url(db).set(drivername="postgresql").render_as_string(hide_password=False)
    conn = await asyncpg.connect(dsn, timeout=5)
    try:
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


async def wait_for_rows(db: str, sql: str, *args: Any, timeout: float = 20.0) -> list[Any]:
    """Poll ``sql`` until it returns rows."""
    async with asyncio.timeout(timeout):
        while not (rows := await query(db, sql, *args)):
            await asyncio.sleep(0.05)
    return rows


class Spectator:
    """A spectator's websocket: hello, ``watch``, and the messages that follow."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def watch(cls, url: str, match_id: str, since: int | None = None) -> Spectator:
        ws = await connect(url)
        hello = {"type": "hello", "role": "spectator", "version": PROTOCOL_VERSION}
        await ws.send(json.dumps(hello))
        spectator = cls(ws)
        assert (await spectator.next())["type"] == "welcome"
        await ws.send(json.dumps({"type": "watch", "match_id": match_id, "since": since}))
        return spectator

    async def next(self, timeout: float = 10.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            message: dict[str, Any] = json.loads(await self.ws.recv())
        return message

    async def close(self) -> None:
        await self.ws.close()
