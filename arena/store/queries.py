"""Read-only queries. Each takes an open session and returns plain records."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, Select, select
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


async def list_matches(
    session: AsyncSession, status: str | None, game: str | None, limit: int
) -> list[MatchSummary]:
    """The most recently started matches first, optionally filtered."""
    query = _summary_query().order_by(Match.started_at.desc(), Match.id).limit(limit)
    if status is not None:
        query = query.where(Match.status == status)
    if game is not None:
        query = query.where(Match.game == game)
    return [MatchSummary(**_summary_fields(row)) for row in await session.execute(query)]


async def get_match(
    session: AsyncSession, match_id: str, pending: list[MoveRecord]
) -> MatchRecord | None:
    """One match in full; ``pending`` moves not yet written are appended in ply order."""
    row = (await session.execute(_summary_query().where(Match.id == match_id))).first()
    if row is None:
        return None
    moves = [
        MoveRecord(ply=m.ply, player=m.player, move=m.move, think_ms=m.think_ms, rtt_ms=m.rtt_ms)
        for m in await session.scalars(
            select(Move).where(Move.match_id == match_id).order_by(Move.ply)
        )
    ]
    stored = {move.ply for move in moves}
    moves.extend(move for move in pending if move.ply not in stored)
    moves.sort(key=lambda move: move.ply)
    changes = await session.execute(
        select(Bot.name, RatingHistory.before, RatingHistory.after)
        .join(Bot, Bot.id == RatingHistory.bot_id)
        .where(RatingHistory.match_id == match_id)
        .order_by(RatingHistory.id)
    )
    return MatchRecord(
        **_summary_fields(row),
        moves=moves,
        rating_changes=[RatingChange(bot=n, before=b, after=a) for n, b, a in changes],
        opening=tuple(int(m) for m in (row[0].opening or "").split()),
        tournament_id=row[0].tournament_id,
        tournament_pair=row[0].tournament_pair,
    )


async def rating_history(session: AsyncSession, bot: str, game: str) -> list[RatingHistoryEntry]:
    """A bot's rating changes in ``game``, oldest first; removed bots keep their history."""
    bot_id = await session.scalar(select(Bot.id).where(Bot.name == bot))
    if bot_id is None:
        raise NoSuchBotError(bot)
    rows = await session.scalars(
        select(RatingHistory)
        .where(RatingHistory.bot_id == bot_id, RatingHistory.game == game)
        .order_by(RatingHistory.id)
    )
    return [
        RatingHistoryEntry(match_id=h.match_id, before=h.before, after=h.after, at=utc(h.at))
        for h in rows
    ]
