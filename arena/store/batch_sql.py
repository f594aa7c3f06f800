"""The group commit's SQL: one batch of new matches, moves and match ends, in a sync session.

Written once against SQLAlchemy's synchronous ``Session`` so it runs in two
places: inside the async store through ``AsyncSession.run_sync`` (PostgreSQL,
and SQLite when configured inline), and in the SQLite writer process
(``writer_process``), which holds its own synchronous engine.

A batch is plain data (``PlainBatch``: rows as dicts) so it can cross a
process boundary, or wait in the recovery journal. Writing a batch twice
changes nothing the second time, and answers the same: new matches and
moves are inserted only if absent, and a match end that finds its match
already ended by this very request (same termination, same end time) reports
the rating changes it made then. So a batch may be retried when its commit's
fate is unknown (a connection lost during COMMIT, a writer process killed
before it answered), and a journal replayed after a partial replay.

When a row breaks a constraint (moves of an unknown match), the batch is
written again piece by piece, each piece in its own savepoint, so one bad
caller cannot hold every other match hostage.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, bindparam, select, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.errors import MatchAlreadyFinishedError, NoSuchMatchError, StoreError
from arena.ratings import RatingModel
from arena.store.dialect import insert_ignoring_duplicates, table_of
from arena.store.models import Bot, Match, Move, RatingHistory
from arena.store.queries import utc
from arena.store.rating_updates import RatedResult, rate_matches
from arena.store.records import RatingChange

END_COLUMNS = ("status", "winner", "result", "termination", "fault", "reason", "ended_at", "rated")
"""The ``matches`` columns a match end sets."""

log = logging.getLogger(__name__)

Outcome = tuple[str | None, list[RatingChange] | Exception]
"""Per match end: its game (None when refused) and its rating changes, or why it was refused."""


MoveRow = tuple[int, int, int, int, int, float, str | None]
"""One pending move: ply, player, move, think ms, round trip ms, when it was played
(seconds since the epoch) and the mover's analysis as stored (``searches``, or None).
Its match id is the key it is grouped under. A plain tuple, because a batch crosses a
pipe to the writer process: pickling dict rows with a ``datetime`` each cost about five
times as much (``move_values`` builds the row)."""


MOVE_COLUMNS = (
    "match_id", "ply", "player", "move", "think_ms", "rtt_ms", "played_at", "analysis"
)  # fmt: skip
"""The ``moves`` columns in the order of a SQLite row (``sqlite_move_row``)."""


def sqlite_timestamp(epoch_s: float) -> str:
    """``epoch_s`` as SQLAlchemy's SQLite ``DateTime`` stores it: UTC, to the microsecond.

    The same text as the type's bind processor, built without it: that processor
    formats through a dict per value, which was the writer's largest cost per move.
    """
    # isoformat with microseconds always has 6 digits; [:26] drops the "+00:00".
    return datetime.fromtimestamp(epoch_s, UTC).isoformat(" ", "microseconds")[:26]


def sqlite_move_row(
    match_id: str, row: MoveRow
) -> tuple[str, int, int, int, int, int, str, str | None]:
    """The driver parameters of ``row``'s ``moves`` row, in ``MOVE_COLUMNS`` order."""
    ply, player, move, think_ms, rtt_ms, played_at, analysis = row
    return (match_id, ply, player, move, think_ms, rtt_ms, sqlite_timestamp(played_at), analysis)


def move_values(match_id: str, row: MoveRow) -> dict[str, Any]:
    """The column values of ``row``'s ``moves`` row."""
    ply, player, move, think_ms, rtt_ms, played_at, analysis = row
    return {
        "match_id": match_id,
        "ply": ply,
        "player": player,
        "move": move,
        "think_ms": think_ms,
        "rtt_ms": rtt_ms,
        "played_at": datetime.fromtimestamp(played_at, UTC),
        "analysis": analysis,
    }


@dataclass(slots=True)
class PlainBatch:
    """A batch as plain, picklable data, in the order it is written."""

    matches: list[dict[str, Any]] = field(default_factory=list)
    moves: list[tuple[str, list[MoveRow]]] = field(default_factory=list)
    """(match id, its pending move rows in order) per match (rows as ``MoveRow``)."""
    finishes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(match id, the ``matches`` columns its end sets) per match end."""


class BatchSql:
    """Writes ``PlainBatch``es for one dialect and rating model."""

    def __init__(self, dialect_name: str, rating_model: RatingModel) -> None:
        self.rating_model = rating_model
        self._postgres = dialect_name == "postgresql"
        self._matches = table_of(Match)
        self._insert_matches = insert_ignoring_duplicates(Match, dialect_name)
        self._insert_moves = insert_ignoring_duplicates(Move, dialect_name)
        self._sqlite_moves: str | None = None
        if dialect_name == "sqlite":
            # The same statement, run as driver SQL: SQLAlchemy's per-row parameter
            # processing cost more than SQLite's insert (see ``sqlite_timestamp``).
            compiled = self._insert_moves.compile(dialect=sqlite.dialect(paramstyle="qmark"))
            if tuple(compiled.positiontup or ()) != MOVE_COLUMNS:
                raise StoreError(f"unexpected moves insert: {compiled}")
            self._sqlite_moves = str(compiled)
        columns = self._matches.c
        self._claim = (
            update(self._matches)
            .where(columns.id == bindparam("b_id"), columns.status == "live")
            .values({name: bindparam(f"b_{name}") for name in END_COLUMNS})
        )

    def write(self, session: Session, batch: PlainBatch) -> list[Outcome]:
        """Write ``batch`` in ``session``'s transaction; one outcome per match end."""
        try:
            with session.begin_nested():
                return self._write_all(session, batch)
        except IntegrityError:
            return self._write_piecewise(session, batch)

    def _write_all(self, session: Session, batch: PlainBatch) -> list[Outcome]:
        if batch.matches:
            session.execute(self._insert_matches, batch.matches)
        self._insert(session, batch.moves)
        return self._end_matches(session, batch.finishes)

    def _insert(self, session: Session, moves: list[tuple[str, list[MoveRow]]]) -> None:
        """Insert the ``moves`` rows of ``(match id, rows)`` pairs (duplicates are ignored)."""
        if self._sqlite_moves is not None:
            plain = [sqlite_move_row(match_id, row) for match_id, rows in moves for row in rows]
            if plain:
                session.connection().exec_driver_sql(self._sqlite_moves, plain)
            return
        values = [move_values(match_id, row) for match_id, rows in moves for row in rows]
        if values:
            session.execute(self._insert_moves, values)

    def _write_piecewise(self, session: Session, batch: PlainBatch) -> list[Outcome]:
        for row in batch.matches:
            try:
                with session.begin_nested():
                    session.execute(self._insert_matches, [row])
            except IntegrityError:
                log.error("dropped new match %r: %s", row["id"], row)
        for match_id, match_rows in batch.moves:
            try:
                with session.begin_nested():
                    self._insert(session, [(match_id, match_rows)])
            except IntegrityError:
                log.error("dropped %d moves of unknown match %r", len(match_rows), match_id)
        outcomes: list[Outcome] = []
        for finish in batch.finishes:
            try:
                with session.begin_nested():
                    outcomes += self._end_matches(session, [finish])
            except Exception as error:
                outcomes.append((None, error))
        return outcomes

    def _end_matches(
        self, session: Session, finishes: list[tuple[str, dict[str, Any]]]
    ) -> list[Outcome]:
        """Claim and rate a batch of match ends; one outcome per finish.

        Exactly once: the claim is ``UPDATE ... WHERE status = 'live'``, and the
        rows are read first under the write lock (SQLite's ``BEGIN IMMEDIATE``,
        PostgreSQL's ``FOR UPDATE``, which waits for and then sees another node's
        finish), so a refused end is known before anything is written.
        """
        if not finishes:
            return []
        m = self._matches.c
        query = (
            select(
                m.id,
                m.status,
                m.game,
                m.player0_id,
                m.player1_id,
                m.rated,
                m.termination,
                m.ended_at,
            )
            .where(m.id.in_({match_id for match_id, _ in finishes}))
            .order_by(m.id)
        )
        if self._postgres:
            query = query.with_for_update()
        found = {row.id: row for row in session.execute(query)}
        status = {match_id: row.status for match_id, row in found.items()}
        outcomes: list[Outcome] = []
        claims: list[dict[str, Any]] = []
        rated: list[tuple[int, RatedResult]] = []
        for match_id, asked in finishes:
            row = found.get(match_id)
            if row is None:
                outcomes.append((None, NoSuchMatchError(match_id)))
                continue
            if status[match_id] != "live":
                if row.status != "live" and _same_end(row, asked):
                    outcomes.append((row.game, _stored_changes(session, match_id)))
                else:
                    outcomes.append((None, MatchAlreadyFinishedError(match_id, status[match_id])))
                continue
            # Only the store knows whether the match itself was rated.
            values = {**asked, "rated": asked["rated"] and row.rated}
            status[match_id] = values["status"]
            claims.append({"b_id": match_id, **{f"b_{k}": values[k] for k in END_COLUMNS}})
            if values["status"] == "finished" and values["rated"]:
                ids = (row.player0_id, row.player1_id)
                ended = RatedResult(match_id, row.game, ids, values["winner"], values["ended_at"])
                rated.append((len(outcomes), ended))
            outcomes.append((row.game, []))
        if claims:
            result = cast(CursorResult[Any], session.execute(self._claim, claims))
            # Drivers that count executemany rows let us double-check the claim.
            if result.rowcount >= 0 and result.rowcount != len(claims):
                raise StoreError(f"claimed {result.rowcount} of {len(claims)} live matches")
        if rated:
            changes = rate_matches(session, [r for _, r in rated], self.rating_model)
            for (index, r), match_changes in zip(rated, changes, strict=True):
                outcomes[index] = (r.game, match_changes)
        return outcomes


def _same_end(row: Any, asked: dict[str, Any]) -> bool:
    """True when the stored end of ``row`` is the one ``asked`` describes (an earlier commit)."""
    ended = row.ended_at
    return (
        ended is not None
        and row.termination == asked["termination"]
        and utc(ended) == utc(asked["ended_at"])
    )


def _stored_changes(session: Session, match_id: str) -> list[RatingChange]:
    """The rating changes a match made when it ended, seat 0 first."""
    rows = session.execute(
        select(Bot.name, RatingHistory.before, RatingHistory.after)
        .join(Bot, Bot.id == RatingHistory.bot_id)
        .where(RatingHistory.match_id == match_id)
        .order_by(RatingHistory.id)
    )
    return [RatingChange(bot=name, before=before, after=after) for name, before, after in rows]
