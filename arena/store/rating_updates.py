"""Writing ratings: a batch of results at a time, or all of them again from history.

Both paths go through ``apply_result`` so a rebuild reproduces the
incremental ratings bit for bit. Ratings are IEEE doubles in both SQLite
(REAL) and PostgreSQL (double precision), so the round trip through the
database is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, delete, func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from arena.ratings import RatingModel
from arena.store.dialect import insert_ignoring_duplicates, table_of
from arena.store.models import Bot, Match, Rating, RatingHistory
from arena.store.records import RatingChange
from protocol.games.base import winner_score


def new_rating(bot_id: int, game: str, model: RatingModel) -> Rating:
    """The rating row of a bot that has not played a rated game of ``game`` yet."""
    return Rating(
        bot_id=bot_id, game=game, rating=model.initial, games=0, wins=0, draws=0, losses=0
    )


def apply_result(
    r0: Rating, r1: Rating, winner: int | None, model: RatingModel
) -> tuple[float, float]:
    """Update both seats' rows for one result; returns their ratings before it."""
    before = (r0.rating, r1.rating)
    score0 = winner_score(winner, 0)
    r0.rating, r1.rating = model.update(before, score0)
    for row, score in ((r0, score0), (r1, 1.0 - score0)):
        row.games += 1
        if score == 1.0:
            row.wins += 1
        elif score == 0.0:
            row.losses += 1
        else:
            row.draws += 1
    return before


@dataclass(frozen=True, slots=True)
class RatedResult:
    """One just-finished rated match, as ``rate_matches`` needs it."""

    match_id: str
    game: str
    ids: tuple[int, int]
    """The bot ids of seat 0 and seat 1."""
    winner: int | None
    at: datetime
    """When the match ended: the time of its history rows."""


def rate_matches(
    session: Session, results: Sequence[RatedResult], model: RatingModel
) -> list[list[RatingChange]]:
    """Apply just-finished matches, in order, to their players' ratings and history.

    A batch costs a handful of statements whatever its size: the rows are
    read once, updated in memory in the order given (a bot in two matches of
    the batch sees the first result before the second), and written back
    with one executemany each. Returns each match's changes, seat 0 first.
    """
    if not results:
        return []
    dialect = session.get_bind().dialect.name
    keys = sorted({(bot_id, r.game) for r in results for bot_id in r.ids})
    # Create missing rows without racing another node doing the same, then
    # lock them all in (bot id, game) order so two batches sharing a bot cannot deadlock.
    session.execute(
        insert_ignoring_duplicates(Rating, dialect),
        [
            {
                "bot_id": bot_id,
                "game": game,
                "rating": model.initial,
                "games": 0,
                "wins": 0,
                "draws": 0,
                "losses": 0,
            }
            for bot_id, game in keys
        ],
    )
    ratings_table = table_of(Rating)
    rows = session.execute(
        select(ratings_table, Bot.name)
        .join(Bot, Bot.id == ratings_table.c.bot_id)
        .where(
            ratings_table.c.game.in_({game for _, game in keys}),
            ratings_table.c.bot_id.in_({bot_id for bot_id, _ in keys}),
        )
        .order_by(ratings_table.c.bot_id, ratings_table.c.game)
        .with_for_update(of=ratings_table)
    )
    # Transient (never added to the session) rows: apply_result is shared with rebuild.
    found: dict[tuple[int, str], tuple[Rating, str]] = {}
    for row in rows:
        rating = Rating(
            bot_id=row.bot_id,
            game=row.game,
            rating=row.rating,
            games=row.games,
            wins=row.wins,
            draws=row.draws,
            losses=row.losses,
        )
        found[row.bot_id, row.game] = (rating, row.name)
    changes: list[list[RatingChange]] = []
    history: list[dict[str, object]] = []
    for result in results:
        (r0, name0), (r1, name1) = (found[bot_id, result.game] for bot_id in result.ids)
        before = apply_result(r0, r1, result.winner, model)
        after = (r0.rating, r1.rating)
        history.extend(
            {
                "bot_id": result.ids[seat],
                "game": result.game,
                "match_id": result.match_id,
                "before": before[seat],
                "after": after[seat],
                "at": result.at,
            }
            for seat in (0, 1)
        )
        changes.append(
            [
                RatingChange(bot=name, before=before[seat], after=after[seat])
                for seat, name in enumerate((name0, name1))
            ]
        )
    c = ratings_table.c
    session.execute(
        update(ratings_table)
        .where(c.bot_id == bindparam("b_bot_id"), c.game == bindparam("b_game"))
        .values(
            rating=bindparam("b_rating"),
            games=bindparam("b_games"),
            wins=bindparam("b_wins"),
            draws=bindparam("b_draws"),
            losses=bindparam("b_losses"),
        ),
        [
            {
                "b_bot_id": r.bot_id,
                "b_game": r.game,
                "b_rating": r.rating,
                "b_games": r.games,
                "b_wins": r.wins,
                "b_draws": r.draws,
                "b_losses": r.losses,
            }
            for r, _ in (found[key] for key in keys)
        ],
    )
    session.execute(insert(table_of(RatingHistory)), history)
    return changes


async def rebuild(session: AsyncSession, model: RatingModel) -> int:
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
                ratings[bot_id, match.game] = new_rating(bot_id, match.game, model)
        r0, r1 = (ratings[bot_id, match.game] for bot_id in ids)
        before = apply_result(r0, r1, match.winner, model)
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
