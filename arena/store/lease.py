"""A node's lease on the database: claimed at start, renewed by a heartbeat, released at the end.

The heartbeat reports to the health monitor. A failed renewal (the database
is failing) makes the store degraded until one succeeds; a renewal that
finds the node's row gone means another node judged this one gone and took
over its matches: the lease is lost for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from sqlalchemy.ext.asyncio import AsyncSession

from arena.errors import NodeConflictError
from arena.store import nodes
from arena.store.health import HEARTBEAT, HealthMonitor
from arena.store.queries import utc

log = logging.getLogger("arena.store")

SessionFactory = Callable[[], AbstractAsyncContextManager[AsyncSession]]
"""Opens a write transaction (the store's ``_write``)."""


class Lease:
    """Renews ``node_id``'s lease every ``heartbeat_s`` seconds in the background."""

    def __init__(
        self,
        node_id: str,
        write: SessionFactory,
        monitor: HealthMonitor,
        *,
        shared: bool = False,
        lease_s: float,
        heartbeat_s: float,
    ) -> None:
        if not 0 < heartbeat_s < lease_s:
            raise ValueError("the heartbeat must come more often than the lease expires")
        self.node_id = node_id
        self.shared = shared
        """The database is shared with other nodes (``allow_multi_node`` on PostgreSQL)."""
        self.lease_s = lease_s
        self.heartbeat_s = heartbeat_s
        self._write = write
        self._monitor = monitor
        self._task: asyncio.Task[None] | None = None
        self.lost = False
        """True once another node has taken this node's lease over."""

    def start(self) -> None:
        """Start renewing on the running loop."""
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"arena-node-heartbeat-{self.node_id}"
        )

    async def stop(self) -> None:
        """Stop renewing (the row stays until released or expired)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def renew(self) -> None:
        """One renewal, reported to the monitor."""
        try:
            # Half the lease: a renewal that waits longer could not keep it anyway.
            async with asyncio.timeout(self.lease_s / 2), self._write() as session:
                held = await nodes.renew(session, self.node_id, self.lease_s)
        except Exception as error:
            self._monitor.failed(HEARTBEAT, error)
            return
        if held:
            self._monitor.succeeded(HEARTBEAT)
            return
        self.lost = True
        nodes.forget(self.node_id)
        self._monitor.lease_lost(
            f"node {self.node_id} is no longer registered: another node judged it gone"
            " and ended its matches"
        )

    async def _run(self) -> None:
        while not self.lost:
            await asyncio.sleep(self.heartbeat_s)
            await self.renew()

    async def release(self, timeout_s: float, *, abort_matches: bool) -> None:
        """Delete this node's row (unless the lease is lost), first aborting its remaining
        live matches if ``abort_matches``.

        Best effort: a database that fails leaves the row to expire.
        """
        if not self.lost:
            try:
                async with asyncio.timeout(timeout_s), self._write() as session:
                    aborted = await nodes.release(session, self.node_id, abort_matches)
            except Exception as error:
                log.warning("cannot release node %s (%s); its lease expires", self.node_id, error)
            else:
                if aborted:
                    log.warning("aborted %d matches node %s left live", aborted, self.node_id)
        nodes.forget(self.node_id)


async def claim(
    url: str,
    node_id: str,
    me: nodes.Identity,
    write: SessionFactory,
    monitor: HealthMonitor,
    *,
    sqlite: bool,
    allow_multi_node: bool,
    lease_s: float,
    heartbeat_s: float,
) -> Lease:
    """Register ``node_id`` on the database at ``url`` and start its heartbeat.

    Raises ``NodeConflictError`` naming the holder when another live node
    holds the database: always on SQLite; on PostgreSQL unless this node and
    every live one pass ``allow_multi_node``.
    """
    if sqlite and allow_multi_node:
        log.warning("allow_multi_node is ignored: a SQLite database has one server")
    exclusive = sqlite or not allow_multi_node
    lease = Lease(
        node_id, write, monitor, shared=not exclusive, lease_s=lease_s, heartbeat_s=heartbeat_s
    )
    held_before = nodes.is_held(node_id)
    try:
        async with write() as session:
            holder = await nodes.claim(session, node_id, me, exclusive, lease_s)
            if holder is None:
                # Held from before the commit: once it commits, another store of this
                # process may read the row at once, and must not take it for one of
                # this process's closed stores (``nodes.is_gone``).
                nodes.hold(node_id)
    except BaseException:
        if not held_before:
            nodes.forget(node_id)
        raise
    if holder is not None:
        if sqlite:
            hint = "one arena server per SQLite database"
        elif holder.exclusive:
            hint = "that node holds the database alone"
        else:
            hint = "nodes share a PostgreSQL database only with --allow-multi-node"
        raise NodeConflictError(
            url,
            holder.id,
            holder.pid,
            holder.host,
            utc(holder.started_at),
            utc(holder.heartbeat_at),
            hint,
        )
    lease.start()
    log.info(
        "node %s holds the database %s (%s)",
        node_id,
        url,
        "alone" if exclusive else "shared with other nodes",
    )
    return lease
