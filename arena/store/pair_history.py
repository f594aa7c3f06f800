"""How often two bots have met in rated ladder games of one game, and how their last one began.

Rated openings (``arena.play.rated_openings``) read it to decide whether the
next game of two bots is the return game of their last one (same opening,
colours swapped) or starts a new pair. A ladder game is a rated match that no
tournament scheduled; an aborted one taught nothing and is not counted.
``ix_matches_player0_id_player1_id_game`` (revision 0008) serves the query.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from arena.store.core import StoreCore
from arena.store.models import Bot, Match


@dataclass(frozen=True, slots=True)
class PairHistory:
    """Two bots' rated ladder games in one game: how many, and the last one's start."""

    games: int
    last_opening: tuple[int, ...] = ()
    """The moves the last game started from (empty: the initial position or no game)."""
    last_first: str | None = None
    """The bot that moved first in the last game (None: they never met)."""


NEVER_MET = PairHistory(0)
"""The history of two bots without a rated ladder game together."""


async def pair_history(session: AsyncSession, game: str, a: str, b: str) -> PairHistory:
    """``a`` and ``b``'s rated ladder games of ``game`` (see the module docstring)."""
    ids = dict((await session.execute(select(Bot.name, Bot.id).where(Bot.name.in_((a, b))))).all())
    if a not in ids or b not in ids:
        return NEVER_MET
    ia, ib = ids[a], ids[b]
    where = (
        or_(
            and_(Match.player0_id == ia, Match.player1_id == ib),
            and_(Match.player0_id == ib, Match.player1_id == ia),
        ),
        Match.game == game,
        Match.rated.is_(True),
        Match.tournament_id.is_(None),
        Match.status != "aborted",
    )
    games = int(await session.scalar(select(func.count()).select_from(Match).where(*where)) or 0)
    if not games:
        return NEVER_MET
    last = (
        await session.execute(
            select(Match.opening, Match.player0_id)
            .where(*where)
            .order_by(Match.started_at.desc(), Match.id.desc())
            .limit(1)
        )
    ).one()
    opening = tuple(int(move) for move in (last.opening or "").split())
    return PairHistory(games, opening, a if last.player0_id == ia else b)


class PairHistoryStore(StoreCore):
    """The store's side of pair history; see the module docstring."""

    async def pair_history(self, game: str, a: str, b: str) -> PairHistory:
        """``a`` and ``b``'s rated ladder games of ``game``: how many, and the last one's start."""
        async with self._read() as session:
            return await pair_history(session, game, a, b)
