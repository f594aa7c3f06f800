"""Where things are in a multi-node arena: each node's public URL, and which node hosts a
bot's live match. Reads and writes of the ``nodes`` and ``matches`` tables for
``arena.cluster`` (``Store.directory``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from arena.store import nodes
from arena.store.models import Bot, Match, Node
from arena.store.queries import utc


@dataclass(frozen=True, slots=True)
class Hosted:
    """A live match of a bot and the node that hosts it."""

    match_id: str
    node_id: str
    url: str | None
    gone: bool
    """True when that node no longer holds its lease (its matches are orphans)."""
    late: bool = False
    """True when that node missed a heartbeat: perhaps dead, its lease not yet run out."""


class Directory:
    """Looks up and records placements in the shared database (see the module docstring)."""

    def __init__(self, engine: AsyncEngine, node_id: str) -> None:
        # One statement each, committed on its own: a lookup is one round trip (a bot's
        # hello waits for it).
        autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._sessions = async_sessionmaker(autocommit, expire_on_commit=False)
        self.node_id = node_id
        self._me = nodes.identity()

    async def publish_url(self, url: str) -> None:
        """Record where bots reach this node."""
        async with self._sessions() as session, session.begin():
            await session.execute(
                update(Node).where(Node.id == self.node_id).values(public_url=url)
            )

    async def hosted_elsewhere(self, bot: str) -> Hosted | None:
        """A live match of ``bot`` that another node hosts (the oldest), if there is one."""
        async with self._sessions() as session:
            found = (
                await session.execute(
                    select(Match.id, Node, func.clock_timestamp())
                    .join(Node, Node.id == Match.node_id)
                    .join(Bot, Bot.name == bot)
                    .where(
                        Match.status == "live",
                        Match.node_id != self.node_id,
                        or_(Match.player0_id == Bot.id, Match.player1_id == Bot.id),
                    )
                    .order_by(Match.started_at)
                    .limit(1)
                )
            ).first()
        if found is None:
            return None
        match_id, node, now = found
        now = utc(now)  # the database's clock, which every node's heartbeat uses
        gone = nodes.is_gone(node, self._me, now)
        return Hosted(match_id, node.id, node.public_url, gone, nodes.heartbeat_late(node, now))
