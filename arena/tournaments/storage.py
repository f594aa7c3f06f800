"""The tournament tables: create a tournament, load it as a ``TournamentState``, change it.

Everything a tournament is lives in the database: its settings and status
(``tournaments``), its bots (``tournament_participants``), its openings and
schedule (``tournament_openings``, ``tournament_pairs``) and its games, which
are ordinary ``matches`` rows carrying the tournament, pair and opening. The
results are never stored twice: a tournament's standing is read from its
matches, so a server killed at any moment resumes from exactly what was
committed. Each function takes the session of one unit of work
(``Store.write_session`` / ``read_session``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from arena.errors import TournamentError
from arena.store.models import (
    Bot,
    Match,
    Move,
    Node,
    Tournament,
    TournamentOpening,
    TournamentPair,
    TournamentParticipant,
)
from arena.store.queries import utc
from arena.tournaments.openings import OpeningSuite, format_opening
from arena.tournaments.schedule import PairSlot, build_schedule
from arena.tournaments.settings import Format, TournamentSettings
from arena.tournaments.state import GameResult, TournamentState, games_to_show

ACTIVE = ("pending", "running")
"""Statuses of a tournament a server schedules."""


def now() -> datetime:
    """The time stamps the tournament tables use (aware UTC)."""
    return datetime.now(UTC)


def rounds_of(settings: TournamentSettings) -> int:
    """How many rounds of pairings the schedule holds (SPRT: one pair per round)."""
    if settings.format == "sprt":
        return (settings.max_games or 2) // 2
    return settings.games_per_pair // 2


async def insert_tournament(
    session: AsyncSession,
    settings: TournamentSettings,
    suite: OpeningSuite,
    *,
    status: str = "pending",
    node_id: str | None = None,
) -> int:
    """Create the tournament, its bots, openings and schedule; returns its id.

    Raises ``TournamentError`` naming bots that are not registered (or removed).
    """
    found = {
        name: (bot_id, active)
        for name, bot_id, active in await session.execute(
            select(Bot.name, Bot.id, Bot.active).where(Bot.name.in_(settings.bots))
        )
    }
    unknown = [bot for bot in settings.bots if bot not in found or not found[bot][1]]
    if unknown:
        raise TournamentError(
            f"unknown bot{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
            " (register with `arena bots add`)"
        )
    moment = now()
    row = Tournament(
        name=settings.name,
        game=settings.game,
        format=settings.format,
        status=status,
        games_per_pair=settings.games_per_pair,
        move_ms=settings.move_ms,
        bank_ms=settings.bank_ms,
        concurrency=settings.concurrency,
        rated=settings.rated,
        openings=suite.source[:255],
        seed=settings.seed,
        elo0=settings.elo0,
        elo1=settings.elo1,
        alpha=settings.alpha,
        beta=settings.beta,
        sprt_model=settings.model,
        max_games=settings.max_games,
        created_at=moment,
        started_at=moment if status == "running" else None,
        node_id=node_id,
    )
    session.add(row)
    await session.flush()
    tournament_id = row.id
    await session.execute(
        insert(TournamentParticipant),
        [
            {"tournament_id": tournament_id, "seat": seat, "bot_id": found[bot][0]}
            for seat, bot in enumerate(settings.bots)
        ],
    )
    await session.execute(
        insert(TournamentOpening),
        [
            {"tournament_id": tournament_id, "number": n, "moves": " ".join(map(str, moves))}
            for n, moves in enumerate(suite.openings)
        ],
    )
    schedule = build_schedule(
        settings.format,
        len(settings.bots),
        rounds_of(settings),
        len(suite.openings),
        settings.seed,
    )
    await session.execute(
        insert(TournamentPair),
        [
            {
                "tournament_id": tournament_id,
                "number": slot.number,
                "seat_a": slot.seat_a,
                "seat_b": slot.seat_b,
                "opening": slot.opening,
            }
            for slot in schedule
        ],
    )
    return tournament_id


async def load_state(session: AsyncSession, tournament_id: int) -> TournamentState:
    """The tournament with every counted game; ``TournamentError`` if there is none."""
    row = await session.get(Tournament, tournament_id)
    if row is None:
        raise TournamentError(f"no tournament {tournament_id}")
    seats = (
        await session.execute(
            select(TournamentParticipant.seat, Bot.id, Bot.name, TournamentParticipant.removed_at)
            .join(Bot, Bot.id == TournamentParticipant.bot_id)
            .where(TournamentParticipant.tournament_id == tournament_id)
            .order_by(TournamentParticipant.seat)
        )
    ).all()
    openings = [
        tuple(int(m) for m in moves.split())
        for moves in await session.scalars(
            select(TournamentOpening.moves)
            .where(TournamentOpening.tournament_id == tournament_id)
            .order_by(TournamentOpening.number)
        )
    ]
    pairs = [
        PairSlot(number, a, b, opening)
        for number, a, b, opening in await session.execute(
            select(
                TournamentPair.number,
                TournamentPair.seat_a,
                TournamentPair.seat_b,
                TournamentPair.opening,
            )
            .where(TournamentPair.tournament_id == tournament_id)
            .order_by(TournamentPair.number)
        )
    ]
    state = TournamentState(
        id=row.id,
        settings=settings_of(row, [name for _, _, name, _ in seats]),
        status=row.status,
        openings=tuple(openings),
        pairs=pairs,
        removed=[removed is not None for *_, removed in seats],
        created_at=utc(row.created_at),
        started_at=utc(row.started_at) if row.started_at else None,
        ended_at=utc(row.ended_at) if row.ended_at else None,
        stored_verdict=row.verdict,
    )
    seat_of_bot = {bot_id: seat for seat, bot_id, _, _ in seats}
    for match in await session.execute(
        select(
            Match.id,
            Match.tournament_pair,
            Match.player0_id,
            Match.status,
            Match.winner,
            Match.termination,
            Match.fault,
            Match.ended_at,
        )
        .where(Match.tournament_id == tournament_id, Match.status != "live")
        .order_by(Match.ended_at, Match.id)
    ):
        count_match(state, seat_of_bot, match)
    return state


def count_match(state: TournamentState, seat_of_bot: dict[int, int], match: Any) -> None:
    """Count one ended match row of the tournament into ``state`` (see ``TournamentState``)."""
    match_id, number, player0, status, winner, termination, fault, ended_at = match
    if number is None or not 0 <= number < len(state.pairs):
        return
    pair = state.pairs[number]
    first = seat_of_bot.get(player0)
    game = 0 if first == pair.seat_a else 1
    if status == "finished":
        score_first = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
        state.record(
            GameResult(
                pair=number,
                game=game,
                score_a=score_first if game == 0 else 1.0 - score_first,
                match_id=match_id,
                termination=termination or "",
                ended_at=utc(ended_at),
            )
        )
    elif fault is None:  # aborted with no fault: a bot never moved
        state.record_no_show((number, game))


def settings_of(row: Tournament, bots: list[str]) -> TournamentSettings:
    """The settings a ``tournaments`` row was created with."""
    return TournamentSettings(
        game=row.game,
        format=cast(Format, row.format),
        bots=tuple(bots),
        games_per_pair=row.games_per_pair,
        move_ms=row.move_ms,
        bank_ms=row.bank_ms,
        concurrency=row.concurrency,
        rated=row.rated,
        openings=row.openings,
        name=row.name,
        seed=row.seed,
        elo0=row.elo0,
        elo1=row.elo1,
        alpha=row.alpha,
        beta=row.beta,
        model=row.sprt_model,
        max_games=row.max_games,
    )


async def list_tournaments(session: AsyncSession) -> list[dict[str, Any]]:
    """Every tournament, newest first: id, name, game, format, status, games counted, total."""
    counted = (
        select(Match.tournament_id, func.count().label("games"))
        .where(Match.tournament_id.is_not(None), Match.status == "finished")
        .group_by(Match.tournament_id)
        .subquery()
    )
    pairs = (
        select(TournamentPair.tournament_id, func.count().label("pairs"))
        .group_by(TournamentPair.tournament_id)
        .subquery()
    )
    rows = await session.execute(
        select(Tournament, counted.c.games, pairs.c.pairs)
        .outerjoin(counted, counted.c.tournament_id == Tournament.id)
        .outerjoin(pairs, pairs.c.tournament_id == Tournament.id)
        .order_by(Tournament.id.desc())
    )
    return [
        {
            "id": t.id,
            "name": t.name,
            "game": t.game,
            "format": t.format,
            "status": t.status,
            "verdict": t.verdict,
            "games": games or 0,
            "total": games_to_show(t.status, games or 0, 2 * (total or 0)),
            "created_at": utc(t.created_at).isoformat(),
        }
        for t, games, total in rows
    ]


async def active_ids(session: AsyncSession) -> dict[int, str]:
    """Id -> status of every tournament that is pending, running or paused."""
    rows = await session.execute(
        select(Tournament.id, Tournament.status).where(
            Tournament.status.in_((*ACTIVE, "paused"))
        )
    )
    return {tournament_id: status for tournament_id, status in rows}


async def claim(session: AsyncSession, tournament_id: int, node_id: str) -> bool:
    """Make ``node_id`` the tournament's scheduler unless another live node is."""
    result = await session.execute(
        update(Tournament)
        .where(
            Tournament.id == tournament_id,
            or_(
                Tournament.node_id.is_(None),
                Tournament.node_id == node_id,
                Tournament.node_id.not_in(select(Node.id)),
            ),
        )
        .values(node_id=node_id)
        .execution_options(synchronize_session=False)
    )
    return cast(CursorResult[Any], result).rowcount == 1


async def set_status(
    session: AsyncSession, tournament_id: int, status: str, **values: Any
) -> None:
    """Set the tournament's status and any other columns given (``ended_at=...``)."""
    await session.execute(
        update(Tournament)
        .where(Tournament.id == tournament_id)
        .values(status=status, **values)
        .execution_options(synchronize_session=False)
    )


async def change_status(session: AsyncSession, tournament_id: int, action: str) -> str:
    """``pause``, ``resume`` or ``cancel`` the tournament; returns its new status.

    Raises ``TournamentError`` for an unknown tournament or an action its
    status does not allow (a finished tournament cannot be resumed).
    """
    row = await session.get(Tournament, tournament_id)
    if row is None:
        raise TournamentError(f"no tournament {tournament_id}")
    allowed = {
        "pause": ("pending", "running"),
        "resume": ("paused",),
        "cancel": ("pending", "running", "paused"),
    }
    if action not in allowed:
        raise TournamentError(f"unknown action {action!r}")
    if row.status not in allowed[action]:
        raise TournamentError(f"tournament {tournament_id} is {row.status}: cannot {action} it")
    values: dict[str, Any] = {}
    if action == "pause":
        status = "paused"
    elif action == "resume":
        status = "running" if row.started_at is not None else "pending"
    else:
        status, values["ended_at"] = "cancelled", now()
    await set_status(session, tournament_id, status, **values)
    return status


async def inactive_seats(session: AsyncSession, tournament_id: int) -> list[int]:
    """Seats not yet marked removed whose bot was removed from the arena."""
    return list(
        await session.scalars(
            select(TournamentParticipant.seat)
            .join(Bot, Bot.id == TournamentParticipant.bot_id)
            .where(
                TournamentParticipant.tournament_id == tournament_id,
                TournamentParticipant.removed_at.is_(None),
                Bot.active.is_(False),
            )
        )
    )


async def mark_removed(session: AsyncSession, tournament_id: int, seats: list[int]) -> None:
    """Mark ``seats`` removed: from now on they forfeit what they have left to play."""
    await session.execute(
        update(TournamentParticipant)
        .where(
            TournamentParticipant.tournament_id == tournament_id,
            TournamentParticipant.seat.in_(seats),
        )
        .values(removed_at=now())
        .execution_options(synchronize_session=False)
    )


async def export_games(session: AsyncSession, tournament_id: int) -> list[dict[str, Any]]:
    """Every counted game of the tournament with its moves, in the order they ended."""
    state = await load_state(session, tournament_id)
    ids = [result.match_id for result in state.order]
    moves: dict[str, list[int]] = {}
    for start in range(0, len(ids), 500):
        for match_id, move in await session.execute(
            select(Move.match_id, Move.move)
            .where(Move.match_id.in_(ids[start : start + 500]))
            .order_by(Move.match_id, Move.ply)
        ):
            moves.setdefault(match_id, []).append(move)
    rows = []
    for result in state.order:
        key = (result.pair, result.game)
        pair = state.pairs[result.pair]
        score_first = result.score_a if result.game == 0 else 1.0 - result.score_a
        rows.append(
            {
                "tournament": tournament_id,
                "match_id": result.match_id,
                "pair": result.pair,
                "game": result.game,
                "players": list(state.players(key)),
                "opening": format_opening(state.openings[pair.opening]),
                "result": {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[score_first],
                "termination": result.termination,
                "ended_at": result.ended_at.isoformat(),
                "moves": moves.get(result.match_id, []),
            }
        )
    return rows
