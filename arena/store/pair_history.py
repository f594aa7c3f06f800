"""How often two bots have met in rated ladder games of one game, and how their last one began.

Rated openings (``arena.play.rated_openings``) read it to decide whether the
next game of two bots is the return game of their last one (same opening,
colours swapped) or starts a new pair. A ladder game is a rated match that no
tournament scheduled; an aborted one taught nothing and is not counted.
A pairing pass asks for all its pairs at once (``pair_histories``): one
statement per ``PAIRS_PER_READ`` pairs, served by the index
``ix_matches_player0_id_player1_id_game`` (revision 0008).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import and_, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from arena.store.core import StoreCore
from arena.store.models import Bot, Match

PAIRS_PER_READ = 100
"""Pairs per statement: four bound parameters each, well under SQLite's limit."""

_NAMES_PER_READ = 500

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


async def pair_histories(
    session: AsyncSession, keys: Iterable[PairKey]
) -> dict[PairKey, PairHistory]:
    """The rated ladder games of each pair of ``keys`` (see the module docstring)."""
    wanted = sorted(set(keys))
    found = dict.fromkeys(wanted, NEVER_MET)
    names = sorted({name for _, a, b in wanted for name in (a, b)})
    ids: dict[str, int] = {}
    for start in range(0, len(names), _NAMES_PER_READ):
        some = names[start : start + _NAMES_PER_READ]
        ids.update(
            (await session.execute(select(Bot.name, Bot.id).where(Bot.name.in_(some)))).all()
        )
    names_of = {bot_id: name for name, bot_id in ids.items()}
    known = [key for key in wanted if key[1] in ids and key[2] in ids]
    p0, p1 = Match.player0_id, Match.player1_id
    low = case((p0 < p1, p0), else_=p1)
    high = case((p0 < p1, p1), else_=p0)
    pair = (Match.game, low, high)
    for start in range(0, len(known), PAIRS_PER_READ):
        chunk = known[start : start + PAIRS_PER_READ]
        ranked = (
            select(
                Match.opening,
                p0.label("first"),
                low.label("low"),
                high.label("high"),
                Match.game,
                func.count().over(partition_by=pair).label("games"),
                func.row_number()
                .over(partition_by=pair, order_by=(Match.started_at.desc(), Match.id.desc()))
                .label("latest"),
            )
            .where(
                or_(
                    *(
                        and_(
                            Match.game == game, or_(and_(p0 == x, p1 == y), and_(p0 == y, p1 == x))
                        )
                        for game, a, b in chunk
                        for x, y in [(ids[a], ids[b])]
                    )
                ),
                Match.rated.is_(True),
                Match.tournament_id.is_(None),
                Match.status != "aborted",
            )
            .subquery()
        )
        rows = await session.execute(select(ranked).where(ranked.c.latest == 1))
        for row in rows:
            key = pair_key(row.game, names_of[row.low], names_of[row.high])
            opening = tuple(int(move) for move in (row.opening or "").split())
            found[key] = PairHistory(int(row.games), opening, names_of[row.first])
    return found


class PairHistoryStore(StoreCore):
    """The store's side of pair history; see the module docstring."""

    async def pair_histories(self, keys: Iterable[PairKey]) -> dict[PairKey, PairHistory]:
        """Each pair's rated ladder games: how many, and the last one's start; one transaction."""
        async with self._read() as session:
            return await pair_histories(session, keys)
