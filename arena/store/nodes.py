"""Node ownership: which arena processes hold the database, and which live matches are orphans.

Every serving arena process is a node: it registers a row in ``nodes``
(``claim``) and renews its lease there every ``HEARTBEAT_S`` seconds
(``renew``); each match it opens records its node id. A node is gone when
its row is missing, when its lease has expired (``LEASE_S`` after the last
heartbeat), or at once when the process is known dead: same machine boot and
pid namespace (``scope``), and no process with that pid and start time runs
(a SIGKILLed server's successor need not wait for the lease). A process in
this scope that still runs holds its lease even if it stopped renewing it
(a stopped or hung server keeps it until it is killed).

``claim`` and ``abort_orphans`` each run in one transaction that excludes
the other claimers and cleaners (SQLite's ``BEGIN IMMEDIATE`` write lock,
PostgreSQL's transaction-scoped advisory lock), so two nodes starting at the
same instant cannot both win an exclusive claim, and an orphan is ended once.
Times come from the database's clock on PostgreSQL (nodes on several
machines compare one clock) and from this machine's clock on SQLite.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy import CursorResult, delete, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from arena.store.models import Match, Node
from arena.store.queries import utc
from protocol.games import Fault, Termination

LEASE_S = 10.0
"""How long a node's lease lasts after its last heartbeat."""

HEARTBEAT_S = 3.0
"""How often a node renews its lease: three tries before it could expire."""

HEARTBEAT_LATE_S = 2 * HEARTBEAT_S
"""A node whose last heartbeat is older than this has missed one: it may be dead (its
lease, judged on another machine, still runs for a while); no bot is sent there."""

ABORTED = "aborted"
"""The status of a match that ended without a result (``Termination.ABORTED``)."""

_PG_NODES_LOCK = 0x4D435454
"""The advisory lock that serializes claims and clean-ups on PostgreSQL."""

_held: set[str] = set()
"""Node ids whose lease a store in this process holds right now."""


@dataclass(frozen=True, slots=True)
class Identity:
    """This process as a node sees it."""

    host: str
    pid: int
    scope: str
    pid_start: int | None


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """A process's state letter and start time (clock ticks since boot), from Linux's /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ")".
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0], int(fields[19])


def process_scope() -> str:
    """The machine's boot and this process's pid namespace: where a pid names one process."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = socket.gethostname()
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return f"{boot}/{namespace}"[:128]


def identity() -> Identity:
    """This process's identity."""
    stat = _proc_stat(os.getpid())
    return Identity(
        socket.gethostname()[:255], os.getpid(), process_scope(), stat[1] if stat else None
    )


def default_node_id(me: Identity) -> str:
    """A fresh node id: host, pid and a random suffix (``host-1234-a1b2c3``)."""
    return f"{me.host[:100]}-{me.pid}-{os.urandom(3).hex()}"


def process_alive(pid: int, start: int | None) -> bool:
    """True when a process ``pid`` runs (not a zombie) and, if known, started at ``start``."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user
    stat = _proc_stat(pid)
    if stat is None:
        return start is None
    state, started = stat
    return state not in ("Z", "X") and (start is None or started == start)


def is_gone(node: Node, me: Identity, now: datetime) -> bool:
    """True when ``node`` no longer holds its lease (see the module docstring)."""
    if node.scope == me.scope:
        if node.pid == me.pid and node.id not in _held:
            return True  # a store of this very process that closed without releasing
        if not process_alive(node.pid, node.pid_start):
            return True
        if node.pid_start is not None:
            return False  # exactly that process still runs
    return utc(node.expires_at) <= now


def heartbeat_late(node: Node, now: datetime) -> bool:
    """True when ``node`` has missed a heartbeat (``HEARTBEAT_LATE_S``), by ``now``."""
    return now - utc(node.heartbeat_at) > timedelta(seconds=HEARTBEAT_LATE_S)


async def db_now(session: AsyncSession) -> datetime:
    """Now by the database's clock on PostgreSQL, by this machine's on SQLite (aware UTC)."""
    if session.get_bind().dialect.name == "postgresql":
        moment = await session.scalar(text("SELECT clock_timestamp()"))
        return utc(cast(datetime, moment))
    return datetime.now(UTC)


async def _exclude_others(session: AsyncSession) -> None:
    """Keep other claimers and cleaners out until this transaction ends."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_NODES_LOCK})
    # SQLite: the store's write transactions begin IMMEDIATE, which already excludes them.


async def _live_nodes(session: AsyncSession, me: Identity, now: datetime) -> list[Node]:
    """The nodes that hold their lease; the rows of gone ones are deleted."""
    nodes = list((await session.scalars(select(Node).order_by(Node.started_at))).all())
    gone = [node.id for node in nodes if is_gone(node, me, now)]
    if gone:
        await session.execute(delete(Node).where(Node.id.in_(gone)))
    return [node for node in nodes if node.id not in gone]


async def claim(
    session: AsyncSession, node_id: str, me: Identity, exclusive: bool, lease_s: float
) -> Node | None:
    """Register ``node_id``; returns the live node that refuses it (nothing written), else None.

    An exclusive claim needs no other live node; a shared one needs no
    exclusive live node.
    """
    await _exclude_others(session)
    now = await db_now(session)
    others = [node for node in await _live_nodes(session, me, now) if node.id != node_id]
    for node in others:
        if exclusive or node.exclusive:
            return node
    await session.execute(delete(Node).where(Node.id == node_id))
    session.add(
        Node(
            id=node_id,
            host=me.host,
            pid=me.pid,
            scope=me.scope,
            pid_start=me.pid_start,
            exclusive=exclusive,
            started_at=now,
            heartbeat_at=now,
            expires_at=now + timedelta(seconds=lease_s),
        )
    )
    return None


def hold(node_id: str) -> None:
    """A store of this process holds ``node_id``'s lease now (its claim has committed)."""
    _held.add(node_id)


def is_held(node_id: str) -> bool:
    """Whether a store of this process holds ``node_id``'s lease."""
    return node_id in _held


def forget(node_id: str) -> None:
    """This process no longer holds ``node_id``'s lease."""
    _held.discard(node_id)


async def renew(session: AsyncSession, node_id: str, lease_s: float) -> bool:
    """Extend ``node_id``'s lease; False when its row is gone (another node took over)."""
    now = await db_now(session)
    result = await session.execute(
        update(Node)
        .where(Node.id == node_id)
        .values(heartbeat_at=now, expires_at=now + timedelta(seconds=lease_s))
        .execution_options(synchronize_session=False)
    )
    return cast(CursorResult[Any], result).rowcount == 1


def aborted_values(reason: str, now: datetime) -> dict[str, Any]:
    """The ``matches`` columns of a match ended without a result by the infrastructure."""
    return {
        "status": ABORTED,
        "rated": False,
        "winner": None,
        "result": "*",
        "termination": Termination.ABORTED.value,
        "fault": Fault.INFRASTRUCTURE.value,
        "reason": reason,
        "ended_at": now,
    }


async def abort_orphans(session: AsyncSession, me: Identity) -> list[str]:
    """End every live match whose node is gone or unknown; returns the ids this call ended."""
    await _exclude_others(session)
    now = await db_now(session)
    live = [node.id for node in await _live_nodes(session, me, now)]
    result = await session.execute(
        update(Match)
        .where(Match.status == "live", or_(Match.node_id.is_(None), Match.node_id.not_in(live)))
        .values(aborted_values("the server running the match stopped", now))
        .returning(Match.id)
        .execution_options(synchronize_session=False)
    )
    return list(result.scalars())


async def release(session: AsyncSession, node_id: str, abort_matches: bool) -> int:
    """Delete ``node_id``'s row, ending its live matches first if ``abort_matches``.

    Returns how many matches were ended.
    """
    aborted = 0
    if abort_matches:
        now = await db_now(session)
        result = await session.execute(
            update(Match)
            .where(Match.status == "live", Match.node_id == node_id)
            .values(aborted_values("the server shut down while the match was live", now))
            .execution_options(synchronize_session=False)
        )
        aborted = cast(CursorResult[Any], result).rowcount
    await session.execute(delete(Node).where(Node.id == node_id))
    return aborted
