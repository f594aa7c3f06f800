"""The ``move_analysis`` table: solved values of stored Connect Four moves, and their sums.

``AnalysisStore`` (a base of ``Store``) reads and writes it. ``arena analyse``
is its only writer: it asks ``analysis_todo`` which finished matches still
have moves to analyse, ``analysis_targets`` for their moves, and saves each
match's rows in one transaction (``save_analysis``), so an interrupted run
leaves whole matches. ``match_analysis`` feeds ``GET /api/matches/ID``;
``accuracy_counts`` the per-bot figures of bot pages and ``arena leaderboard
--accuracy`` (``arena.analysis.figures`` adds the intervals).

A move counts as settled, and is skipped by later runs, once both its values
are exact and whether its choice mattered is known, or when it was analysed
with at least the budget now asked for.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, and_, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from arena.store.core import StoreCore
from arena.store.dialect import upsert
from arena.store.models import Bot, Match, Move, MoveAnalysis

_IDS_PER_READ = 500
"""Match ids per ``IN (...)`` list: well under SQLite's limit on bound parameters."""


@dataclass(frozen=True, slots=True)
class MoveAnalysisRecord:
    """The solved value of one move, from the mover's side (see ``models.MoveAnalysis``).

    Scores are Pons' (positive: the mover wins, the larger the sooner),
    outcomes 1 win / 0 draw / -1 loss; None when not solved within ``budget_ms``.
    """

    ply: int
    score_before: int | None
    score_after: int | None
    outcome_before: int | None
    outcome_after: int | None
    blunder: bool | None
    budget_ms: int
    choice_matters: bool | None = None
    """Whether some legal move had another outcome than the position's (None: not known)."""
    candidates: tuple[CandidateValue, ...] = ()
    """The solved value of every legal move the mover had, in move order (empty when
    analysed before candidates were)."""


@dataclass(frozen=True, slots=True)
class CandidateValue:
    """The solved value of one move the mover could have played, from the mover's side."""

    move: int
    outcome: int | None
    score: int | None


def candidates_text(candidates: Sequence[CandidateValue]) -> str | None:
    """The ``move_analysis.candidates`` JSON of ``candidates`` (None when there are none)."""
    if not candidates:
        return None
    return json.dumps(
        [{"move": c.move, "outcome": c.outcome, "score": c.score} for c in candidates],
        separators=(",", ":"),
    )


def candidates_of(text: str | None) -> tuple[CandidateValue, ...]:
    """The candidates stored as ``text`` (``candidates_text``)."""
    if text is None:
        return ()
    return tuple(CandidateValue(c["move"], c["outcome"], c["score"]) for c in json.loads(text))


@dataclass(frozen=True, slots=True)
class AnalysisTarget:
    """A finished match to analyse: its moves from ply 0, and the plies already settled."""

    match_id: str
    moves: tuple[int, ...]
    settled: frozenset[int]


@dataclass(frozen=True, slots=True)
class AccuracyCounts:
    """One bot's analysed moves in one game.

    ``decided``: moves whose value before and after are both known (win,
    draw or loss); ``judged``: of those, the ones in positions where the
    choice mattered (some legal move had another outcome), the only ones
    accuracy counts; ``kept``: of the judged, the ones that kept the value;
    ``blunders``: moves that lost value (every one is judged); ``games``:
    matches with at least one analysed move of the bot.
    """

    bot: str
    game: str
    moves: int
    decided: int
    judged: int
    kept: int
    blunders: int
    games: int


def _settled(budget_ms: int) -> ColumnElement[bool]:
    exact = and_(
        MoveAnalysis.score_before.is_not(None),
        MoveAnalysis.score_after.is_not(None),
        MoveAnalysis.choice_matters.is_not(None),
    )
    return or_(exact, MoveAnalysis.budget_ms >= budget_ms)


async def analysis_todo(
    session: AsyncSession,
    game: str,
    budget_ms: int,
    since: datetime | None = None,
    match_id: str | None = None,
) -> list[str]:
    """Finished (or aborted) matches of ``game`` with a move not settled at ``budget_ms``,
    oldest first; only those started at or after ``since``, or only ``match_id``."""
    moves = (
        select(Move.match_id, func.count().label("n")).group_by(Move.match_id).subquery("counted")
    )
    settled = (
        select(MoveAnalysis.match_id, func.count().label("n"))
        .where(_settled(budget_ms))
        .group_by(MoveAnalysis.match_id)
        .subquery("settled")
    )
    query = (
        select(Match.id)
        .join(moves, moves.c.match_id == Match.id)
        .outerjoin(settled, settled.c.match_id == Match.id)
        .where(Match.game == game, Match.status != "live")
        .where(func.coalesce(settled.c.n, 0) < moves.c.n)
        .order_by(Match.started_at, Match.id)
    )
    if match_id is not None:
        query = query.where(Match.id == match_id)
    else:
        query = query.where(Match.status == "finished")
    if since is not None:
        query = query.where(Match.started_at >= since)
    return list(await session.scalars(query))


async def count_moves(session: AsyncSession, game: str, since: datetime | None = None) -> int:
    """How many moves of finished matches of ``game`` are stored (since ``since``)."""
    query = (
        select(func.count())
        .select_from(Move)
        .join(Match, Match.id == Move.match_id)
        .where(Match.game == game, Match.status == "finished")
    )
    if since is not None:
        query = query.where(Match.started_at >= since)
    return int(await session.scalar(query) or 0)


async def analysis_targets(
    session: AsyncSession, match_ids: Sequence[str], budget_ms: int
) -> list[AnalysisTarget]:
    """The moves and settled plies of each match in ``match_ids``, in that order.

    Moves are taken from ply 0 up to the first missing ply.
    """
    moves: dict[str, list[int]] = {match_id: [] for match_id in match_ids}
    settled: dict[str, set[int]] = {match_id: set() for match_id in match_ids}
    for start in range(0, len(match_ids), _IDS_PER_READ):
        chunk = list(match_ids[start : start + _IDS_PER_READ])
        rows = await session.execute(
            select(Move.match_id, Move.ply, Move.move)
            .where(Move.match_id.in_(chunk))
            .order_by(Move.match_id, Move.ply)
        )
        for match_id, ply, move in rows:
            played = moves[match_id]
            if ply == len(played):
                played.append(move)
        done = await session.execute(
            select(MoveAnalysis.match_id, MoveAnalysis.ply).where(
                MoveAnalysis.match_id.in_(chunk), _settled(budget_ms)
            )
        )
        for match_id, ply in done:
            settled[match_id].add(ply)
    return [
        AnalysisTarget(match_id, tuple(moves[match_id]), frozenset(settled[match_id]))
        for match_id in match_ids
    ]


_COLUMNS = [
    "score_before",
    "score_after",
    "outcome_before",
    "outcome_after",
    "blunder",
    "budget_ms",
    "analysed_at",
    "choice_matters",
    "candidates",
]


async def save_analysis(
    session: AsyncSession, dialect: str, match_id: str, rows: Sequence[MoveAnalysisRecord]
) -> None:
    """Insert or replace the analysis of ``rows``' plies of one match (``dialect``: the
    database's SQLAlchemy dialect name)."""
    if not rows:
        return
    now = datetime.now(UTC)
    statement = upsert(MoveAnalysis, dialect, _COLUMNS)
    await session.execute(
        statement,
        [
            {
                "match_id": match_id,
                "ply": row.ply,
                "score_before": row.score_before,
                "score_after": row.score_after,
                "outcome_before": row.outcome_before,
                "outcome_after": row.outcome_after,
                "blunder": row.blunder,
                "budget_ms": row.budget_ms,
                "analysed_at": now,
                "choice_matters": row.choice_matters,
                "candidates": candidates_text(row.candidates),
            }
            for row in rows
        ],
    )


async def match_analysis(session: AsyncSession, match_id: str) -> list[MoveAnalysisRecord]:
    """The analysed moves of one match, in ply order (empty when none is)."""
    rows = await session.scalars(
        select(MoveAnalysis).where(MoveAnalysis.match_id == match_id).order_by(MoveAnalysis.ply)
    )
    return [
        MoveAnalysisRecord(
            ply=row.ply,
            score_before=row.score_before,
            score_after=row.score_after,
            outcome_before=row.outcome_before,
            outcome_after=row.outcome_after,
            blunder=row.blunder,
            budget_ms=row.budget_ms,
            choice_matters=row.choice_matters,
            candidates=candidates_of(row.candidates),
        )
        for row in rows
    ]


async def accuracy_counts(
    session: AsyncSession, game: str | None = None, bot: str | None = None
) -> list[AccuracyCounts]:
    """Per bot and game, its analysed moves, decided, judged and kept, blunders and games.

    Optionally one game or one bot (removed bots included); by bot, then game.
    """
    mover = case((Move.player == 0, Match.player0_id), else_=Match.player1_id)
    before, after = MoveAnalysis.outcome_before, MoveAnalysis.outcome_after
    decided = and_(before.is_not(None), after.is_not(None))
    judged = and_(decided, MoveAnalysis.choice_matters.is_(True))
    query = (
        select(
            Bot.name,
            Match.game,
            func.count(),
            func.sum(case((decided, 1), else_=0)),
            func.sum(case((judged, 1), else_=0)),
            func.sum(case((and_(judged, after == before), 1), else_=0)),
            func.sum(case((MoveAnalysis.blunder.is_(True), 1), else_=0)),
            func.count(func.distinct(Match.id)),
        )
        .select_from(MoveAnalysis)
        .join(Move, and_(Move.match_id == MoveAnalysis.match_id, Move.ply == MoveAnalysis.ply))
        .join(Match, Match.id == MoveAnalysis.match_id)
        .join(Bot, Bot.id == mover)
        .group_by(Bot.name, Match.game)
        .order_by(Bot.name, Match.game)
    )
    if game is not None:
        query = query.where(Match.game == game)
    if bot is not None:
        # Through the bot's matches first, not through every analysed move.
        bot_id = select(Bot.id).where(Bot.name == bot).scalar_subquery()
        query = query.where(or_(Match.player0_id == bot_id, Match.player1_id == bot_id))
        query = query.where(Bot.name == bot)
    return [
        AccuracyCounts(name, played, int(n), int(d), int(j), int(k), int(b), int(g))
        for name, played, n, d, j, k, b, g in await session.execute(query)
    ]


class AnalysisStore(StoreCore):
    """The store's side of move analysis; see the module docstring."""

    async def analysis_todo(
        self,
        game: str,
        budget_ms: int,
        *,
        since: datetime | None = None,
        match_id: str | None = None,
    ) -> list[str]:
        """Ids of the matches with moves left to analyse at ``budget_ms``, oldest first."""
        async with self._read() as session:
            return await analysis_todo(session, game, budget_ms, since, match_id)

    async def count_moves(self, game: str, since: datetime | None = None) -> int:
        """How many moves of finished matches of ``game`` are stored (since ``since``)."""
        async with self._read() as session:
            return await count_moves(session, game, since)

    async def analysis_targets(
        self, match_ids: Sequence[str], budget_ms: int
    ) -> list[AnalysisTarget]:
        """The moves and settled plies of each of ``match_ids``, read in one transaction."""
        async with self._read() as session:
            return await analysis_targets(session, match_ids, budget_ms)

    async def save_analysis(self, match_id: str, rows: Sequence[MoveAnalysisRecord]) -> None:
        """Write (or overwrite) the analysis of some moves of one match, in one transaction."""
        async with self._write() as session:
            await save_analysis(session, self.engine.dialect.name, match_id, rows)

    async def match_analysis(self, match_id: str) -> list[MoveAnalysisRecord]:
        """The analysed moves of one match in ply order."""
        async with self._read() as session:
            return await match_analysis(session, match_id)

    async def accuracy_counts(
        self, game: str | None = None, bot: str | None = None
    ) -> list[AccuracyCounts]:
        """Per bot and game: analysed moves, decided, judged, kept, blunders, games."""
        async with self._read() as session:
            return await accuracy_counts(session, game, bot)
