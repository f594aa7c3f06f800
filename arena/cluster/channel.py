"""Short messages between the nodes of one arena, over PostgreSQL's LISTEN/NOTIFY.

Each node listens on a channel of its own (``channel_of(node_id)``) on one
dedicated asyncpg connection, and sends with ``pg_notify`` on the same
connection (or, with ``notice``, in a transaction of the sender's own, so
the message leaves when that transaction commits). Messages are small JSON
objects. PostgreSQL delivers a
notification once, to the connections listening when it commits, and keeps
none for later: while a node's connection is down (the database restarted)
what was sent to it is lost. The cluster is built so that nothing depends on
one message arriving (see ``arena.cluster.node``); the connection is opened
again with backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

import asyncpg

from arena.outages import Outage
from arena.store.engine import CONNECT_TIMEOUT_S

log = logging.getLogger(__name__)

RECONNECT_MAX_S = 5.0
"""Longest wait between two attempts to open the listening connection again."""


def channel_of(node_id: str) -> str:
    """The channel a node listens on: a valid identifier whatever the node id holds."""
    return "arena_node_" + hashlib.sha1(node_id.encode()).hexdigest()[:24]


def notice(node_id: str, message: dict[str, Any]) -> tuple[str, str]:
    """The channel and payload of ``message`` to ``node_id``: the arguments of ``pg_notify``,
    for ``NodeChannel.send`` or for a notice sent in a transaction of one's own (delivered
    when, and only if, it commits)."""
    return channel_of(node_id), json.dumps(message, separators=(",", ":"))


Handler = Callable[[dict[str, Any]], None]


class NodeChannel:
    """This node's inbox and its way to write to the others' (see the module docstring)."""

    def __init__(self, dsn: str, node_id: str, handler: Handler) -> None:
        self._dsn = dsn
        self._channel = channel_of(node_id)
        self._handler = handler
        self._conn: asyncpg.Connection | None = None
        self._lock = asyncio.Lock()  # one statement at a time on the one connection
        self._lost = asyncio.Event()
        self._outage = Outage(log, "the connection listening for other nodes")
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Listen (the first connection must succeed), then keep listening in the background."""
        await self._connect()
        self._task = asyncio.get_running_loop().create_task(self._keep(), name="node-channel")

    async def close(self) -> None:
        """Stop listening and close the connection."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close(timeout=2.0)

    async def send(self, node_id: str, message: dict[str, Any]) -> bool:
        """Send ``message`` to ``node_id``; False (logged) when it could not be sent."""
        channel, payload = notice(node_id, message)
        try:
            async with self._lock:
                if self._conn is None:
                    raise ConnectionError("not connected")
                await self._conn.execute("SELECT pg_notify($1, $2)", channel, payload)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.warning("cannot notify node %s (%s): %s", node_id, message.get("kind"), exc)
            return False
        return True

    async def _connect(self) -> None:
        conn = await asyncpg.connect(self._dsn, timeout=CONNECT_TIMEOUT_S)
        await conn.add_listener(self._channel, self._notified)
        conn.add_termination_listener(lambda _conn: self._lost.set())
        self._lost.clear()
        self._conn = conn

    async def _keep(self) -> None:
        delay = 0.2
        while True:
            await self._lost.wait()
            self._conn = None
            self._outage.failed(ConnectionError("connection lost"))
            while True:
                await asyncio.sleep(delay)
                try:
                    await self._connect()
                except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
                    delay = min(delay * 2, RECONNECT_MAX_S)
                    self._outage.failed(exc)
                    continue
                self._outage.succeeded()
                delay = 0.2
                break

    def _notified(self, _conn: object, _pid: int, _channel: str, payload: object) -> None:
        try:
            message = json.loads(str(payload))
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except ValueError:
            log.warning("ignoring a malformed node message: %.200s", payload)
            return
        try:
            self._handler(message)
        except Exception:
            log.exception("handling a node message failed: %.200s", payload)
