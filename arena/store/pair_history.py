"""How often two bots have met in rated ladder games of one game, and how their last one began.

Rated openings (``arena.play.rated_openings``) read it to decide whether the
next game of two bots is the return game of their last one (same opening,
colours swapped) or starts a new pair. A ladder game is a rated match that no
tournament scheduled; an aborted one taught nothing and is not counted.
It is read by bot (``bot_pair_histories``): every pair a bot has met, in one
statement for a whole pairing pass's new bots, served by the indexes
``ix_matches_player0_id_player1_id_game`` and
``ix_matches_player1_id_player0_id_game`` (revision 0008).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from arena.store.core import StoreCore
from arena.store.models import Bot, Match

BOTS_PER_READ = 500
"""Bots per statement: well under SQLite's limit on bound parameters."""

PairKey = tuple[str, str, str]
"""``(game, a, b)`` with ``a < b``: two bots in one game."""


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


def pair_key(game: str, a: str, b: str) -> PairKey:
    """The key of ``a`` and ``b`` in ``game``, whatever their order."""
    return (game, a, b) if a < b else (game, b, a)


async def bot_pair_histories(
    session: AsyncSession, bots: Iterable[str]
) -> dict[PairKey, PairHistory]:
    """Every pair with a rated ladder game in which one of ``bots`` played, and its history;
    a pair of one of ``bots`` that is not there never met."""
    names = sorted(set(bots))
    found: dict[PairKey, PairHistory] = {}
    p0, p1 = Match.player0_id, Match.player1_id
    low = case((p0 < p1, p0), else_=p1)
    high = case((p0 < p1, p1), else_=p0)
    pair = (Match.game, low, high)
    first, second = aliased(Bot), aliased(Bot)
    for start in range(0, len(names), BOTS_PER_READ):
        ids = select(Bot.id).where(Bot.name.in_(names[start : start + BOTS_PER_READ]))
        ranked = (
            select(
                Match.game,
                Match.opening,
                first.name.label("first"),
                second.name.label("second"),
                func.count().over(partition_by=pair).label("games"),
                func.row_number()
                .over(partition_by=pair, order_by=(Match.started_at.desc(), Match.id.desc()))
                .label("latest"),
            )
            .join(first, first.id == p0)
            .join(second, second.id == p1)
            .where(
                or_(p0.in_(ids.scalar_subquery()), p1.in_(ids.scalar_subquery())),
                Match.rated.is_(True),
                Match.tournament_id.is_(None),
                Match.status != "aborted",
            )
            .subquery()
        )
        for row in await session.execute(select(ranked).where(ranked.c.latest == 1)):
            opening = tuple(int(move) for move in (row.opening or "").split())
            key = pair_key(row.game, row.first, row.second)
            found[key] = PairHistory(int(row.games), opening, row.first)
    return found


class PairHistoryStore(StoreCore):
    """The store's side of pair history; see the module docstring."""

    async def bot_pair_histories(self, bots: Iterable[str]) -> dict[PairKey, PairHistory]:
        """The history of every pair of ``bots`` that met in rated ladder games (by pair)."""
        async with self._read() as session:
            return await bot_pair_histories(session, bots)
