"""Read-only queries. Each takes an open session and returns plain records."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import ColumnElement, Row, Select, and_, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from arena.errors import NoSuchBotError
from arena.store.models import Bot, Match, Move, Rating, RatingHistory
from arena.store.records import (
    BotRecord,
    LeaderboardRow,
    MatchRecord,
    MatchSummary,
    MoveRecord,
    RatingChange,
    RatingHistoryEntry,
)
from arena.store.searches import search_json
from protocol.games.base import winner_score

_T = TypeVar("_T")

VALUES_PER_STATEMENT = 500
"""Values per ``IN (...)`` list: well under SQLite's limit on bound parameters."""


def in_chunks(values: Sequence[_T]) -> Iterator[Sequence[_T]]:
    """``values`` in slices of ``VALUES_PER_STATEMENT``, one ``IN`` list each."""
    for start in range(0, len(values), VALUES_PER_STATEMENT):
        yield values[start : start + VALUES_PER_STATEMENT]


_Player0 = aliased(Bot, name="player0")
_Player1 = aliased(Bot, name="player1")


def utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (SQLite hands timestamps back naive)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def bot_record(bot: Bot) -> BotRecord:
    """The public record of an ORM bot."""
    return BotRecord(name=bot.name, created_at=utc(bot.created_at), active=bot.active)


async def list_bots(session: AsyncSession, include_inactive: bool) -> list[BotRecord]:
    """Bots ordered by name; removed ones only when asked."""
    query = select(Bot).order_by(Bot.name)
    if not include_inactive:
        query = query.where(Bot.active)
    return [bot_record(bot) for bot in await session.scalars(query)]


async def leaderboard(session: AsyncSession, game: str) -> list[LeaderboardRow]:
    """Active bots with a rating in ``game``, best first, ties broken by name."""
    query = (
        select(Bot.name, Rating)
        .join(Rating, Rating.bot_id == Bot.id)
        .where(Rating.game == game, Bot.active)
        .order_by(Rating.rating.desc(), Bot.name)
    )
    return [
        LeaderboardRow(
            rank=rank,
            bot=name,
            rating=rating.rating,
            games=rating.games,
            wins=rating.wins,
            draws=rating.draws,
            losses=rating.losses,
        )
        for rank, (name, rating) in enumerate(await session.execute(query), 1)
    ]


def _summary_query() -> Select[Match, str, str]:
    return (
        select(Match, _Player0.name, _Player1.name)
        .join(_Player0, _Player0.id == Match.player0_id)
        .join(_Player1, _Player1.id == Match.player1_id)
    )


def _summary_fields(row: Row[Match, str, str]) -> dict[str, Any]:
    match, name0, name1 = row
    return {
        "id": match.id,
        "game": match.game,
        "players": (name0, name1),
        "move_ms": match.move_ms,
        "bank_ms": match.bank_ms,
        "rated": match.rated,
        "status": match.status,
        "winner": match.winner,
        "result": match.result,
        "termination": match.termination,
        "fault": match.fault,
        "reason": match.reason,
        "started_at": utc(match.started_at),
        "ended_at": None if match.ended_at is None else utc(match.ended_at),
    }


MatchKey = tuple[datetime, str]
"""Where a match sits in the newest-first order: its start time and id (a page cursor)."""


async def list_matches(
    session: AsyncSession,
    status: str | None,
    game: str | None,
    limit: int,
    bot: str | None = None,
    before: MatchKey | None = None,
) -> list[MatchSummary]:
    """The most recently started matches first (ties: higher id first), optionally filtered.

    ``before`` keeps only matches after that key in this order (keyset paging).
    """
    query = _summary_query().order_by(Match.started_at.desc(), Match.id.desc()).limit(limit)
    if status is not None:
        query = query.where(Match.status == status)
    if game is not None:
        query = query.where(Match.game == game)
    if bot is not None:
        query = query.where(or_(_Player0.name == bot, _Player1.name == bot))
    if before is not None:
        started, match_id = before
        query = query.where(
            or_(
                Match.started_at < started,
                and_(Match.started_at == started, Match.id < match_id),
            )
        )
    return [MatchSummary(**_summary_fields(row)) for row in await session.execute(query)]


async def get_match(
    session: AsyncSession, match_id: str, pending: list[MoveRecord]
) -> MatchRecord | None:
    """One match in full; ``pending`` moves not yet written are appended in ply order."""
    row = (await session.execute(_summary_query().where(Match.id == match_id))).first()
    if row is None:
        return None
    moves = (await _moves_of(session, [match_id])).get(match_id, [])
    stored = {move.ply for move in moves}
    moves.extend(move for move in pending if move.ply not in stored)
    moves.sort(key=lambda move: move.ply)
    return MatchRecord(
        **_summary_fields(row),
        moves=moves,
        rating_changes=(await _changes_of(session, [match_id])).get(match_id, []),
        opening=tuple(int(m) for m in (row[0].opening or "").split()),
        tournament_id=row[0].tournament_id,
        tournament_pair=row[0].tournament_pair,
    )


async def finished_matches(
    session: AsyncSession,
    game: str,
    bot: str | None,
    since: datetime | None,
    after: MatchKey | None,
    limit: int,
) -> list[MatchRecord]:
    """Finished matches of ``game`` in full, oldest first, the next ``limit`` after ``after``.

    Three queries a page however long the page: the matches, their moves, their
    rating changes (for ``arena export``).
    """
    query = (
        _summary_query()
        .where(Match.game == game, Match.status == "finished")
        .order_by(Match.started_at, Match.id)
        .limit(limit)
    )
    if bot is not None:
        query = query.where(or_(_Player0.name == bot, _Player1.name == bot))
    if since is not None:
        query = query.where(Match.started_at >= since)
    if after is not None:
        started, match_id = after
        query = query.where(
            or_(Match.started_at > started, and_(Match.started_at == started, Match.id > match_id))
        )
    rows = list(await session.execute(query))
    ids = [row[0].id for row in rows]
    moves, changes = await _moves_of(session, ids), await _changes_of(session, ids)
    return [
        MatchRecord(
            **_summary_fields(row),
            moves=moves.get(row[0].id, []),
            rating_changes=changes.get(row[0].id, []),
        )
        for row in rows
    ]


async def _moves_of(session: AsyncSession, ids: list[str]) -> dict[str, list[MoveRecord]]:
    """The stored moves of each match in ``ids``, in ply order."""
    out: dict[str, list[MoveRecord]] = {}
    query = select(Move).where(Move.match_id.in_(ids)).order_by(Move.match_id, Move.ply)
    for m in await session.scalars(query):
        out.setdefault(m.match_id, []).append(
            MoveRecord(m.ply, m.player, m.move, m.think_ms, m.rtt_ms, search_json(m.analysis))
        )
    return out


async def _changes_of(session: AsyncSession, ids: list[str]) -> dict[str, list[RatingChange]]:
    """The rating changes of each match in ``ids``, in the order they committed."""
    out: dict[str, list[RatingChange]] = {}
    rows = await session.execute(
        select(RatingHistory.match_id, Bot.name, RatingHistory.before, RatingHistory.after)
        .join(Bot, Bot.id == RatingHistory.bot_id)
        .where(RatingHistory.match_id.in_(ids))
        .order_by(RatingHistory.id)
    )
    for match_id, name, before, after in rows:
        out.setdefault(match_id, []).append(RatingChange(bot=name, before=before, after=after))
    return out


async def rating_history(session: AsyncSession, bot: str, game: str) -> list[RatingHistoryEntry]:
    """A bot's rating changes in ``game``, oldest first; removed bots keep their history."""
    bot_id = await _bot_id(session, bot)
    rows = await session.scalars(
        select(RatingHistory)
        .where(RatingHistory.bot_id == bot_id, RatingHistory.game == game)
        .order_by(RatingHistory.id)
    )
    return [
        RatingHistoryEntry(match_id=h.match_id, before=h.before, after=h.after, at=utc(h.at))
        for h in rows
    ]


class PairCell(NamedTuple):
    """Rated games between two bots, counted from ``bot``'s side (``arena.stats.PairResult``).

    Its own type so the store need not import the statistics (numpy, scipy).
    """

    bot: str
    opponent: str
    wins: int
    draws: int
    losses: int


class BotResult(NamedTuple):
    """One rated game of a bot, from its side: ``score`` is 1, 0.5 or 0."""

    game: str
    match_id: str
    ended_at: datetime
    opponent: str
    score: float


def _rated_finished(game: str | None = None) -> ColumnElement[bool]:
    """Matches that count for ratings: finished (not aborted) and rated."""
    condition = and_(Match.status == "finished", Match.rated)
    return condition if game is None else and_(condition, Match.game == game)


async def pair_results(session: AsyncSession, game: str) -> list[PairCell]:
    """Rated finished games of ``game`` per ordered pair of seats: one ``GROUP BY``, all bots.

    Cells count from player 0's side (``bot`` played first); removed bots'
    games are included, since they still inform their opponents' ratings.
    """
    cells = (
        select(
            Match.player0_id,
            Match.player1_id,
            func.sum(case((Match.winner == 0, 1), else_=0)).label("wins"),
            func.sum(case((Match.winner.is_(None), 1), else_=0)).label("draws"),
            func.sum(case((Match.winner == 1, 1), else_=0)).label("losses"),
        )
        .where(_rated_finished(game))
        .group_by(Match.player0_id, Match.player1_id)
        .subquery()
    )
    query = (
        select(_Player0.name, _Player1.name, cells.c.wins, cells.c.draws, cells.c.losses)
        .join(_Player0, _Player0.id == cells.c.player0_id)
        .join(_Player1, _Player1.id == cells.c.player1_id)
    )
    return [
        PairCell(bot, opponent, int(wins), int(draws), int(losses))
        for bot, opponent, wins, draws, losses in await session.execute(query)
    ]


async def leaderboard_inputs(
    session: AsyncSession, game: str
) -> tuple[list[LeaderboardRow], list[PairCell]]:
    """``leaderboard(game)`` and ``pair_results(game)``, in the caller's one transaction."""
    return await leaderboard(session, game), await pair_results(session, game)


async def get_bot(session: AsyncSession, name: str) -> BotRecord | None:
    """The bot called ``name`` (active or removed), or None."""
    bot = await session.scalar(select(Bot).where(Bot.name == name))
    return None if bot is None else bot_record(bot)


async def _bot_id(session: AsyncSession, name: str) -> int:
    bot_id = await session.scalar(select(Bot.id).where(Bot.name == name))
    if bot_id is None:
        raise NoSuchBotError(name)
    return bot_id


async def bot_results(session: AsyncSession, name: str) -> list[BotResult]:
    """A bot's rated finished games in every game, in the order they ended."""
    bot_id = await _bot_id(session, name)
    query = (
        select(Match.game, Match.id, Match.ended_at, Match.player0_id, Match.winner)
        .add_columns(_Player0.name, _Player1.name)
        .join(_Player0, _Player0.id == Match.player0_id)
        .join(_Player1, _Player1.id == Match.player1_id)
        .where(_rated_finished(), or_(Match.player0_id == bot_id, Match.player1_id == bot_id))
        .order_by(Match.ended_at, Match.id)
    )
    results = []
    for game, match_id, ended_at, player0_id, winner, name0, name1 in await session.execute(query):
        seat = 0 if player0_id == bot_id else 1
        score = winner_score(winner, seat)
        opponent = name1 if seat == 0 else name0
        results.append(BotResult(game, match_id, utc(ended_at), opponent, score))
    return results


async def bot_matches(session: AsyncSession, name: str, limit: int) -> list[MatchSummary]:
    """A bot's most recently started matches (any game, any status), newest first."""
    bot_id = await _bot_id(session, name)
    query = (
        _summary_query()
        .where(or_(Match.player0_id == bot_id, Match.player1_id == bot_id))
        .order_by(Match.started_at.desc(), Match.id)
        .limit(limit)
    )
    return [MatchSummary(**_summary_fields(row)) for row in await session.execute(query)]
