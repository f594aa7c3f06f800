"""A tournament in the database: create it from its settings, read it back as a
``TournamentState``, export its games.

The SQL is the store's (``Store.tournaments``, ``arena.store.tournaments``):
this module turns settings, schedules and openings into rows and rows back
into a ``TournamentState`` (``state_of``), counting each ended match with the
one tally the scheduler uses live (``TournamentState.tally``). Each function
takes the store's ``TournamentTables`` and never a session: every unit of work
is one of its methods.
"""

from __future__ import annotations

from typing import Any, cast

from arena.store.models import Tournament
from arena.store.queries import utc
from arena.store.tournaments import ACTIVE, EndedGame, StoredTournament, TournamentTables, now
from arena.tournaments.openings import OpeningSuite, format_opening
from arena.tournaments.schedule import PairSlot, build_schedule
from arena.tournaments.settings import Format, TournamentSettings
from arena.tournaments.state import TournamentState, games_to_show
from protocol.games import Termination

__all__ = [
    "ACTIVE",
    "export_games",
    "insert_tournament",
    "list_tournaments",
    "load_state",
    "now",
    "rounds_of",
    "settings_of",
    "state_of",
]


async def list_tournaments(tables: TournamentTables) -> list[dict[str, Any]]:
    """Every tournament, newest first, as the store lists them, with ``total`` the games its
    progress counts up to (the games played, once finished)."""
    rows = await tables.listing()
    for row in rows:
        row["total"] = games_to_show(row["status"], row["games"], row["total"])
    return rows


def rounds_of(settings: TournamentSettings) -> int:
    """How many rounds of pairings the schedule holds (SPRT: one pair per round)."""
    if settings.format == "sprt":
        return (settings.max_games or 2) // 2
    return settings.games_per_pair // 2


async def insert_tournament(
    tables: TournamentTables,
    settings: TournamentSettings,
    suite: OpeningSuite,
    *,
    status: str = "pending",
    node_id: str | None = None,
) -> int:
    """Create the tournament, its bots, openings and schedule; returns its id.

    Raises ``TournamentError`` naming bots that are not registered (or removed).
    """
    moment = now()
    columns = {
        "name": settings.name,
        "game": settings.game,
        "format": settings.format,
        "status": status,
        "games_per_pair": settings.games_per_pair,
        "move_ms": settings.move_ms,
        "bank_ms": settings.bank_ms,
        "concurrency": settings.concurrency,
        "rated": settings.rated,
        "openings": suite.source[:255],
        "seed": settings.seed,
        "elo0": settings.elo0,
        "elo1": settings.elo1,
        "alpha": settings.alpha,
        "beta": settings.beta,
        "sprt_model": settings.model,
        "max_games": settings.max_games,
        "created_at": moment,
        "started_at": moment if status == "running" else None,
        "node_id": node_id,
    }
    schedule = build_schedule(
        settings.format,
        len(settings.bots),
        rounds_of(settings),
        len(suite.openings),
        settings.seed,
    )
    return await tables.insert(
        columns,
        settings.bots,
        [" ".join(map(str, moves)) for moves in suite.openings],
        [(slot.number, slot.seat_a, slot.seat_b, slot.opening) for slot in schedule],
    )


async def load_state(tables: TournamentTables, tournament_id: int) -> TournamentState:
    """The tournament with every counted game; ``TournamentError`` if there is none."""
    return state_of(await tables.load(tournament_id))


def state_of(stored: StoredTournament) -> TournamentState:
    """The tournament as stored, with every counted game."""
    row = stored.row
    state = TournamentState(
        id=row.id,
        settings=settings_of(row, [seat.name for seat in stored.seats]),
        status=row.status,
        openings=tuple(tuple(int(m) for m in moves.split()) for moves in stored.openings),
        pairs=[PairSlot(*pair) for pair in stored.pairs],
        removed=[seat.removed for seat in stored.seats],
        created_at=utc(row.created_at),
        started_at=utc(row.started_at) if row.started_at else None,
        ended_at=utc(row.ended_at) if row.ended_at else None,
        stored_verdict=row.verdict,
    )
    seat_of_bot = {seat.bot_id: seat.seat for seat in stored.seats}
    for match in stored.matches:
        count_match(state, seat_of_bot, match)
    return state


def count_match(state: TournamentState, seat_of_bot: dict[int, int], match: EndedGame) -> bool:
    """Count one ended match of the tournament into ``state`` (``TournamentState.tally``);
    True when it completed its pair."""
    number = match.pair
    if number is None or not 0 <= number < len(state.pairs):
        return False
    pair = state.pairs[number]
    game = 0 if seat_of_bot.get(match.player0_id) == pair.seat_a else 1
    aborted = match.status != "finished"
    return state.tally(
        (number, game),
        winner=match.winner,
        termination=Termination.ABORTED.value if aborted else match.termination or "",
        fault=match.fault,
        match_id=match.match_id,
        ended_at=match.ended_at,
    )


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


async def export_games(tables: TournamentTables, tournament_id: int) -> list[dict[str, Any]]:
    """Every counted game of the tournament with its moves, in the order they ended."""
    state = await load_state(tables, tournament_id)
    # A second read: an ended match's moves never change.
    moves = await tables.moves([result.match_id for result in state.order])
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
