"""The tournament tables: insert a tournament, read it back, change its status and seats.

Everything a tournament is lives in the database: its settings and status
(``tournaments``), its bots (``tournament_participants``), its openings and
schedule (``tournament_openings``, ``tournament_pairs``) and its games, which
are ordinary ``matches`` rows carrying the tournament, pair and opening. The
results are never stored twice: a tournament's standing is read from its
matches (``StoredTournament.matches``), so a server killed at any moment
resumes from exactly what was committed. ``arena.tournaments.storage`` turns
these rows into a ``TournamentState``.

``TournamentTables`` (``Store.tournaments``) is the only way in: one method per
unit of work, each in a transaction of its own, so the tournament domain never
holds a session. The functions below it are the SQL those methods run.

On a database shared by several nodes (``Store.shared``), every node plays a
running tournament's games for the bots connected to it, and
``tournament_claims`` is how they agree: a node claims a game slot
(``claim_slot``) before it offers the game, in a transaction that holds the
tournament's row locked, so that a slot is played by one node at a time, a
slot with a finished match is never claimed again, and the live claims never
exceed the tournament's concurrency. The node running the tournament reads
what the other nodes' ended claims (and the claims of nodes that are gone)
leave to count (``collect_claims``) and finishes the tournament only when no
other node holds a live claim (``finish``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from arena.errors import TournamentError
from arena.store.models import (
    Bot,
    Match,
    Move,
    Node,
    Tournament,
    TournamentClaim,
    TournamentOpening,
    TournamentPair,
    TournamentParticipant,
)
from arena.store.queries import utc

ACTIVE = ("pending", "running")
"""Statuses of a tournament a server schedules."""

_MOVES_PER_READ = 500
"""Match ids per ``IN (...)`` list when reading moves."""


def now() -> datetime:
    """The time stamps the tournament tables use (aware UTC)."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Seat:
    """A tournament's bot in one seat."""

    seat: int
    bot_id: int
    name: str
    removed: bool
    """Marked removed: it forfeits what it has left to play."""


@dataclass(frozen=True, slots=True)
class EndedGame:
    """One ended (finished or aborted) match of the tournament, as stored."""

    match_id: str
    pair: int | None
    player0_id: int
    status: str
    """``finished`` or ``aborted``."""
    winner: int | None
    termination: str | None
    fault: str | None
    ended_at: datetime


@dataclass(frozen=True, slots=True)
class StoredTournament:
    """A tournament read back: its row, seats, openings, pairs and ended matches."""

    row: Tournament
    seats: list[Seat]
    openings: list[str]
    """Each opening's moves, space-separated, by number."""
    pairs: list[tuple[int, int, int, int]]
    """(number, seat a, seat b, opening) by number."""
    matches: list[EndedGame]
    """In the order they ended."""


@dataclass(frozen=True, slots=True)
class ClaimsRead:
    """What the node running a tournament learns from the other nodes' claims."""

    elsewhere: list[tuple[int, int]]
    """(pair, game) of the slots other live nodes are playing."""
    ended: list[EndedGame]
    """The ended matches of the pairs whose claims ended (or whose node is gone)."""


Sessions = Callable[[], AbstractAsyncContextManager[AsyncSession]]
"""Opens one transaction: a write (``BEGIN IMMEDIATE`` on SQLite) or a read."""


class TournamentTables:
    """The tournament tables as units of work (``Store.tournaments``): each method runs
    in a transaction of its own, so a caller never holds a session."""

    def __init__(self, write: Sessions, read: Sessions) -> None:
        self._write = write
        self._read = read

    async def insert(
        self,
        columns: Mapping[str, Any],
        bots: Sequence[str],
        openings: Sequence[str],
        pairs: Sequence[tuple[int, int, int, int]],
    ) -> int:
        """Insert a ``tournaments`` row (``columns``), its ``bots`` by seat, ``openings`` and
        ``pairs`` (number, seat a, seat b, opening); returns its id.

        Raises ``TournamentError`` naming bots that are not registered (or removed).
        """
        async with self._write() as session:
            return await _insert_tournament(session, columns, bots, openings, pairs)

    async def load(self, tournament_id: int) -> StoredTournament:
        """Everything stored of the tournament; ``TournamentError`` if there is none."""
        async with self._read() as session:
            return await _load_tournament(session, tournament_id)

    async def listing(self) -> list[dict[str, Any]]:
        """Every tournament, newest first: id, name, game, format, status, verdict, games
        counted, total (twice its pairs) and creation time."""
        async with self._read() as session:
            return await _list_tournaments(session)

    async def active(self) -> dict[int, str]:
        """Id -> status of every tournament that is pending, running or paused."""
        async with self._read() as session:
            return await _active_ids(session)

    async def adopt(self, tournament_id: int, node_id: str | None) -> StoredTournament | None:
        """Take the tournament up to schedule it, in one transaction; it as stored after.

        Claims it for ``node_id`` (None when this store holds no lease: nothing is
        claimed), returning None when another live node schedules it; marks removed
        the seats whose bots were removed from the arena; and starts it when pending
        (``running``, started now).
        """
        async with self._write() as session:
            if node_id is not None and not await _claim(session, tournament_id, node_id):
                return None
            removed = await _inactive_seats(session, tournament_id)
            if removed:
                await _mark_removed(session, tournament_id, removed)
            stored = await _load_tournament(session, tournament_id)
            row = stored.row
            if row.status == "pending":
                # Changed on the loaded row: written with the commit, and returned as written.
                row.status, row.started_at = "running", now()
        return stored

    async def remove_inactive(self, tournament_id: int) -> list[int]:
        """Mark removed the seats whose bots were removed from the arena since; returns them.

        Only a read when there are none (the scheduler asks at every refresh).
        """
        async with self._read() as session:
            seats = await _inactive_seats(session, tournament_id)
        if seats:
            async with self._write() as session:
                await _mark_removed(session, tournament_id, seats)
        return seats

    async def change_status(self, tournament_id: int, action: str) -> str:
        """``pause``, ``resume`` or ``cancel`` the tournament; returns its new status.

        Raises ``TournamentError`` for an unknown tournament or an action its
        status does not allow (a finished tournament cannot be resumed).
        """
        async with self._write() as session:
            return await _change_status(session, tournament_id, action)

    async def set_status(self, tournament_id: int, status: str, **values: Any) -> None:
        """Set the tournament's status and any other columns given (``ended_at=...``)."""
        async with self._write() as session:
            await _set_status(session, tournament_id, status, **values)

    async def claim_slot(
        self, tournament_id: int, pair: int, game: int, first_seat: int, node_id: str
    ) -> int | None:
        """Claim game ``game`` of pair ``pair`` (``first_seat`` moves first) for ``node_id``;
        the claim's id, or None when the tournament is not running, another live node plays
        the slot, a finished match fills it, or the live claims reach its concurrency."""
        async with self._write() as session:
            return await _claim_slot(session, tournament_id, pair, game, first_seat, node_id)

    async def release_slot(self, claim_id: int, *, ended: bool) -> None:
        """The claimed game ended (``ended``: left for the tournament's node to count), or
        was never played (the claim is deleted)."""
        async with self._write() as session:
            if ended:
                await session.execute(
                    update(TournamentClaim)
                    .where(TournamentClaim.id == claim_id)
                    .values(ended=True)
                    .execution_options(synchronize_session=False)
                )
            else:
                await session.execute(delete(TournamentClaim).where(TournamentClaim.id == claim_id))

    async def end_claims(self, node_id: str) -> None:
        """Mark every claim of ``node_id`` ended: a node starting again plays none of them."""
        async with self._write() as session:
            await session.execute(
                update(TournamentClaim)
                .where(TournamentClaim.node_id == node_id)
                .values(ended=True)
                .execution_options(synchronize_session=False)
            )

    async def collect_claims(self, tournament_id: int, node_id: str) -> ClaimsRead:
        """For the tournament's node ``node_id``: the slots other live nodes play, and the
        ended matches of the pairs whose claims ended (played here before this node ran
        the tournament, or elsewhere) or whose node is gone; those claims are deleted, in
        the same transaction as the read."""
        async with self._write() as session:
            return await _collect_claims(session, tournament_id, node_id)

    async def finish(self, tournament_id: int, node_id: str, **values: Any) -> bool:
        """Mark the running tournament finished (with ``values``) unless a node other than
        ``node_id`` holds a live claim on it; whether it did."""
        async with self._write() as session:
            row = await _lock_tournament(session, tournament_id)
            if row is None or row[0] != "running":
                return False
            if await _live_claims(session, tournament_id, other_than=node_id):
                return False
            await _set_status(session, tournament_id, "finished", **values)
            return True

    async def moves(self, match_ids: Sequence[str]) -> dict[str, list[int]]:
        """The moves of each of ``match_ids`` that has any, in ply order."""
        async with self._read() as session:
            return await _moves_of(session, match_ids)


async def _insert_tournament(
    session: AsyncSession,
    columns: Mapping[str, Any],
    bots: Sequence[str],
    openings: Sequence[str],
    pairs: Sequence[tuple[int, int, int, int]],
) -> int:
    """``TournamentTables.insert`` in ``session``."""
    found = {
        name: (bot_id, active)
        for name, bot_id, active in await session.execute(
            select(Bot.name, Bot.id, Bot.active).where(Bot.name.in_(bots))
        )
    }
    unknown = [bot for bot in bots if bot not in found or not found[bot][1]]
    if unknown:
        raise TournamentError(
            f"unknown bot{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
            " (register with `arena bots add`)"
        )
    row = Tournament(**columns)
    session.add(row)
    await session.flush()
    tournament_id = row.id
    await session.execute(
        insert(TournamentParticipant),
        [
            {"tournament_id": tournament_id, "seat": seat, "bot_id": found[bot][0]}
            for seat, bot in enumerate(bots)
        ],
    )
    await session.execute(
        insert(TournamentOpening),
        [
            {"tournament_id": tournament_id, "number": n, "moves": moves}
            for n, moves in enumerate(openings)
        ],
    )
    await session.execute(
        insert(TournamentPair),
        [
            {
                "tournament_id": tournament_id,
                "number": number,
                "seat_a": seat_a,
                "seat_b": seat_b,
                "opening": opening,
            }
            for number, seat_a, seat_b, opening in pairs
        ],
    )
    return tournament_id


async def _load_tournament(session: AsyncSession, tournament_id: int) -> StoredTournament:
    """``TournamentTables.load`` in ``session``."""
    row = await session.get(Tournament, tournament_id)
    if row is None:
        raise TournamentError(f"no tournament {tournament_id}")
    seats = [
        Seat(seat, bot_id, name, removed_at is not None)
        for seat, bot_id, name, removed_at in await session.execute(
            select(TournamentParticipant.seat, Bot.id, Bot.name, TournamentParticipant.removed_at)
            .join(Bot, Bot.id == TournamentParticipant.bot_id)
            .where(TournamentParticipant.tournament_id == tournament_id)
            .order_by(TournamentParticipant.seat)
        )
    ]
    openings = list(
        await session.scalars(
            select(TournamentOpening.moves)
            .where(TournamentOpening.tournament_id == tournament_id)
            .order_by(TournamentOpening.number)
        )
    )
    pairs = [
        (number, a, b, opening)
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
    matches = await _load_ended(session, tournament_id)
    return StoredTournament(row, seats, openings, pairs, matches)


async def _load_ended(
    session: AsyncSession, tournament_id: int, pairs: Sequence[int] | None = None
) -> list[EndedGame]:
    """The tournament's ended matches (of ``pairs`` only, if given), in the order they ended."""
    query = select(
        Match.id,
        Match.tournament_pair,
        Match.player0_id,
        Match.status,
        Match.winner,
        Match.termination,
        Match.fault,
        Match.ended_at,
    ).where(Match.tournament_id == tournament_id, Match.status != "live")
    if pairs is not None:
        query = query.where(Match.tournament_pair.in_(pairs))
    # An ended match always has its end time (``ended_at`` is nullable for live ones).
    return [
        EndedGame(
            match_id, pair, player0, status, winner, termination, fault, utc(cast(Any, ended_at))
        )
        for match_id, pair, player0, status, winner, termination, fault, ended_at in (
            await session.execute(query.order_by(Match.ended_at, Match.id))
        )
    ]


async def _list_tournaments(session: AsyncSession) -> list[dict[str, Any]]:
    """``TournamentTables.listing`` in ``session``."""
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
            "total": 2 * (total or 0),
            "created_at": utc(t.created_at).isoformat(),
        }
        for t, games, total in rows
    ]


async def _active_ids(session: AsyncSession) -> dict[int, str]:
    """``TournamentTables.active`` in ``session``."""
    rows = await session.execute(
        select(Tournament.id, Tournament.status).where(Tournament.status.in_((*ACTIVE, "paused")))
    )
    return {tournament_id: status for tournament_id, status in rows}


async def _claim(session: AsyncSession, tournament_id: int, node_id: str) -> bool:
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


async def _set_status(
    session: AsyncSession, tournament_id: int, status: str, **values: Any
) -> None:
    """``TournamentTables.set_status`` in ``session``."""
    await session.execute(
        update(Tournament)
        .where(Tournament.id == tournament_id)
        .values(status=status, **values)
        .execution_options(synchronize_session=False)
    )


async def _change_status(session: AsyncSession, tournament_id: int, action: str) -> str:
    """``TournamentTables.change_status`` in ``session``."""
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
    await _set_status(session, tournament_id, status, **values)
    return status


async def _inactive_seats(session: AsyncSession, tournament_id: int) -> list[int]:
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


async def _mark_removed(session: AsyncSession, tournament_id: int, seats: list[int]) -> None:
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


async def _moves_of(session: AsyncSession, match_ids: Sequence[str]) -> dict[str, list[int]]:
    """``TournamentTables.moves`` in ``session``."""
    moves: dict[str, list[int]] = {}
    for start in range(0, len(match_ids), _MOVES_PER_READ):
        for match_id, move in await session.execute(
            select(Move.match_id, Move.move)
            .where(Move.match_id.in_(match_ids[start : start + _MOVES_PER_READ]))
            .order_by(Move.match_id, Move.ply)
        ):
            moves.setdefault(match_id, []).append(move)
    return moves


async def _lock_tournament(session: AsyncSession, tournament_id: int) -> tuple[str, int] | None:
    """The tournament's status and concurrency, its row locked until the commit (PostgreSQL;
    a SQLite write transaction holds the whole database already).

    ``FOR NO KEY UPDATE``: it keeps claims and status changes one at a time without
    holding up the inserts of the tournament's matches rows (their foreign key).
    """
    row = (
        await session.execute(
            select(Tournament.status, Tournament.concurrency)
            .where(Tournament.id == tournament_id)
            .with_for_update(key_share=True)
        )
    ).first()
    return None if row is None else (row[0], row[1])


async def _live_claims(
    session: AsyncSession, tournament_id: int, *, other_than: str | None = None
) -> list[tuple[int, int]]:
    """(pair, game) of the tournament's claims not ended whose node is alive."""
    query = select(TournamentClaim.pair, TournamentClaim.game).where(
        TournamentClaim.tournament_id == tournament_id,
        TournamentClaim.ended.is_(False),
        TournamentClaim.node_id.in_(select(Node.id)),
    )
    if other_than is not None:
        query = query.where(TournamentClaim.node_id != other_than)
    return [(pair, game) for pair, game in await session.execute(query)]


async def _claim_slot(
    session: AsyncSession, tournament_id: int, pair: int, game: int, first_seat: int, node_id: str
) -> int | None:
    """``TournamentTables.claim_slot`` in ``session``."""
    row = await _lock_tournament(session, tournament_id)
    if row is None or row[0] != "running":
        return None
    live = await _live_claims(session, tournament_id)
    if len(live) >= row[1] or (pair, game) in live:
        return None
    first_bot = (
        select(TournamentParticipant.bot_id)
        .where(
            TournamentParticipant.tournament_id == tournament_id,
            TournamentParticipant.seat == first_seat,
        )
        .scalar_subquery()
    )
    finished = await session.scalar(
        select(Match.id)
        .where(
            Match.tournament_id == tournament_id,
            Match.tournament_pair == pair,
            Match.player0_id == first_bot,
            Match.status == "finished",
        )
        .limit(1)
    )
    if finished is not None:
        return None
    claim = TournamentClaim(
        tournament_id=tournament_id,
        pair=pair,
        game=game,
        node_id=node_id,
        ended=False,
        claimed_at=now(),
    )
    session.add(claim)
    await session.flush()
    return claim.id


async def _collect_claims(session: AsyncSession, tournament_id: int, node_id: str) -> ClaimsRead:
    """``TournamentTables.collect_claims`` in ``session``."""
    alive = set(await session.scalars(select(Node.id)))
    elsewhere: list[tuple[int, int]] = []
    collected: list[int] = []
    pairs: set[int] = set()
    for claim_id, pair, game, owner, ended in await session.execute(
        select(
            TournamentClaim.id,
            TournamentClaim.pair,
            TournamentClaim.game,
            TournamentClaim.node_id,
            TournamentClaim.ended,
        ).where(TournamentClaim.tournament_id == tournament_id)
    ):
        if owner == node_id and not ended:
            continue  # this node's own game under way: it counts it as it ends
        if not ended and owner in alive:
            elsewhere.append((pair, game))
        else:
            collected.append(claim_id)
            pairs.add(pair)
    if not collected:
        return ClaimsRead(elsewhere, [])
    ended_games = await _load_ended(session, tournament_id, sorted(pairs))
    await session.execute(delete(TournamentClaim).where(TournamentClaim.id.in_(collected)))
    return ClaimsRead(elsewhere, ended_games)
