"""Writing ratings: one result at a time, or all of them again from history.

Both paths go through ``apply_result`` so a rebuild reproduces the
incremental ratings bit for bit. Ratings are IEEE doubles in both SQLite
(REAL) and PostgreSQL (double precision), so the round trip through the
database is exact.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from arena.ratings import DEFAULT_RATING, elo_update
from arena.store.dialect import insert_ignoring_duplicates, table_of
from arena.store.models import Bot, Match, Rating, RatingHistory
from arena.store.records import RatingChange


def new_rating(bot_id: int, game: str) -> Rating:
    """The rating row of a bot that has not played a rated game of ``game`` yet."""
    return Rating(
        bot_id=bot_id, game=game, rating=DEFAULT_RATING, games=0, wins=0, draws=0, losses=0
    )


def apply_result(r0: Rating, r1: Rating, winner: int | None, k: float) -> tuple[float, float]:
    """Update both seats' rows for one result; returns their ratings before it."""
    before = (r0.rating, r1.rating)
    score0 = 0.5 if winner is None else 1.0 if winner == 0 else 0.0
    r0.rating, r1.rating = elo_update(r0.rating, r1.rating, score0, k)
    for row, score in ((r0, score0), (r1, 1.0 - score0)):
        row.games += 1
        if score == 1.0:
            row.wins += 1
        elif score == 0.0:
            row.losses += 1
        else:
            row.draws += 1
    return before


async def rate_match(
    session: AsyncSession,
    match_id: str,
    game: str,
    ids: tuple[int, int],
    winner: int | None,
    k: float,
    at: datetime,
) -> list[RatingChange]:
    """Apply a just-finished match to both seats' ratings and append their history rows."""
    # Create missing rows without racing another node doing the same, then
    # lock both in id order so two finishes sharing a bot cannot deadlock.
    await session.execute(
        insert_ignoring_duplicates(Rating, session.get_bind().dialect.name),
        [
            {
                "bot_id": bot_id,
                "game": game,
                "rating": DEFAULT_RATING,
                "games": 0,
                "wins": 0,
                "draws": 0,
                "losses": 0,
            }
            for bot_id in sorted(ids)
        ],
    )
    rows = await session.execute(
        select(Rating, Bot.name)
        .join(Bot, Bot.id == Rating.bot_id)
        .where(Rating.game == game, Rating.bot_id.in_(ids))
        .order_by(Rating.bot_id)
        .with_for_update(of=Rating)
    )
    found = {rating.bot_id: (rating, name) for rating, name in rows}
    (r0, name0), (r1, name1) = found[ids[0]], found[ids[1]]
    before = apply_result(r0, r1, winner, k)
    after = (r0.rating, r1.rating)
    await session.execute(
        insert(table_of(RatingHistory)),
        [
            {
                "bot_id": ids[seat],
                "game": game,
                "match_id": match_id,
                "before": before[seat],
                "after": after[seat],
                "at": at,
            }
            for seat in (0, 1)
        ],
    )
    return [
        RatingChange(bot=name, before=before[seat], after=after[seat])
        for seat, name in enumerate((name0, name1))
    ]


async def rebuild(session: AsyncSession, k: float) -> int:
    """Recompute every rating and history row from finished rated matches; returns their count.

    Matches are replayed in the order their rating changes were first
    committed (the smallest history id of each match), which is the order
    the incremental path applied them in; matches without history yet come
    last, by end time.
    """
    if session.get_bind().dialect.name == "postgresql":
        # Keep concurrent finishes out while the tables are rewritten.
        await session.execute(text("LOCK TABLE ratings, rating_history IN EXCLUSIVE MODE"))
    first_change = (
        select(RatingHistory.match_id, func.min(RatingHistory.id).label("first_id"))
        .group_by(RatingHistory.match_id)
        .subquery()
    )
    matches = (
        await session.scalars(
            select(Match)
            .outerjoin(first_change, first_change.c.match_id == Match.id)
            .where(Match.status == "finished", Match.rated)
            .order_by(first_change.c.first_id.asc().nulls_last(), Match.ended_at, Match.id)
        )
    ).all()
    await session.execute(delete(RatingHistory))
    await session.execute(delete(Rating))
    ratings: dict[tuple[int, str], Rating] = {}
    changes: list[dict[str, object]] = []
    for match in matches:
        ids = (match.player0_id, match.player1_id)
        for bot_id in ids:
            if (bot_id, match.game) not in ratings:
                ratings[bot_id, match.game] = new_rating(bot_id, match.game)
        r0, r1 = (ratings[bot_id, match.game] for bot_id in ids)
        before = apply_result(r0, r1, match.winner, k)
        after = (r0.rating, r1.rating)
        at = match.ended_at if match.ended_at is not None else match.started_at
        changes.extend(
            {
                "bot_id": ids[seat],
                "game": match.game,
                "match_id": match.id,
                "before": before[seat],
                "after": after[seat],
                "at": at,
            }
            for seat in (0, 1)
        )
    # A plain executemany inserts in list order, so new ids keep replay order.
    if changes:
        await session.execute(insert(table_of(RatingHistory)), changes)
    session.add_all(ratings.values())
    await session.flush()
    return len(matches)
