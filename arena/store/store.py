"""``Store``: the one async facade the arena server uses for persistence.

Units of work each get their own session from one ``async_sessionmaker``.
On SQLite, writers inside this process queue on an ``asyncio.Lock`` before
opening their ``BEGIN IMMEDIATE`` transaction: SQLite allows one writer
at a time anyway, and waiting on the lock is cheaper and fairer than
polling the file lock through ``busy_timeout`` (which still covers writers
in other processes). PostgreSQL needs no such gate.

Removing a bot only disables its account: it can no longer log in, is
hidden from ``list_bots`` and leaderboards, and keeps its name, matches and
rating history.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, cast

from sqlalchemy import CursorResult, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from arena.errors import (
    BotExistsError,
    MatchAlreadyFinishedError,
    NoSuchBotError,
    NoSuchMatchError,
    StoreError,
)
from arena.ratings import DEFAULT_K
from arena.store import queries
from arena.store.dialect import insert_ignoring_duplicates
from arena.store.engine import BEGIN_OPTION, DEFAULT_URL, is_sqlite, make_engine, migrate
from arena.store.models import Bot, Match, Move, Rating
from arena.store.movebuffer import Batch, MoveBuffer
from arena.store.rating_updates import rate_match, rebuild
from arena.store.records import (
    BotRecord,
    LeaderboardRow,
    MatchRecord,
    MatchSummary,
    MoveRecord,
    RatingChange,
    RatingHistoryEntry,
)

ABORTED = "aborted"
"""The termination that makes a match ``aborted`` rather than ``finished``."""

_RESULTS = {0: "1-0", 1: "0-1", None: "1/2-1/2"}
_MAX_NAME = 64
log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


def hash_token(token: str) -> str:
    """The stored form of a bot token: its SHA-256 hex digest.

    Tokens carry 256 random bits, so a fast hash is enough: there is no
    dictionary to guess from.
    """
    return hashlib.sha256(token.encode()).hexdigest()


class Store:
    """Bots, matches, moves and ratings in one SQL database. Create it with ``Store.open``.

    A store belongs to the event loop that opened it. Several stores (in one
    process or many) may share a database; each buffers only its own moves.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        k_factor: float = DEFAULT_K,
        flush_interval: float = 0.05,
        flush_batch: int = 512,
    ) -> None:
        self.engine = engine
        self.k_factor = k_factor
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        sqlite = is_sqlite(engine)
        reader = engine.execution_options(**{BEGIN_OPTION: "DEFERRED"}) if sqlite else engine
        self._read_sessions = async_sessionmaker(reader, expire_on_commit=False)
        self._write_gate: AbstractAsyncContextManager[Any] = (
            asyncio.Lock() if sqlite else contextlib.nullcontext()
        )
        self._insert_moves = insert_ignoring_duplicates(Move, engine.dialect.name)
        self._buffer = MoveBuffer(
            self._write_moves, interval=flush_interval, batch_size=flush_batch
        )
        # Past this many pending moves, record_move waits for a flush.
        self._max_pending = 50 * flush_batch
        self._closed = False

    @classmethod
    async def open(
        cls,
        url: str = DEFAULT_URL,
        *,
        k_factor: float = DEFAULT_K,
        flush_interval: float = 0.05,
        flush_batch: int = 512,
    ) -> Store:
        """Connect to ``url``, migrate the schema to the newest revision and start the flusher."""
        engine = make_engine(url)
        try:
            await migrate(engine)
        except BaseException:
            await engine.dispose()
            raise
        store = cls(
            engine, k_factor=k_factor, flush_interval=flush_interval, flush_batch=flush_batch
        )
        store._buffer.start()
        return store

    async def close(self) -> None:
        """Write the pending moves, stop the flusher and release the connections."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._buffer.stop()
        finally:
            await self.engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncSession]:
        async with self._write_gate, self._sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
        async with self._read_sessions() as session, session.begin():
            yield session

    # Bots ------------------------------------------------------------------

    async def add_bot(self, name: str) -> str:
        """Register a bot and return its fresh token; only a hash of the token is kept."""
        if not name or len(name) > _MAX_NAME or name != name.strip():
            raise ValueError(f"a bot name is 1-{_MAX_NAME} characters without outer spaces")
        token = secrets.token_urlsafe(32)
        try:
            async with self._write() as session:
                if await session.scalar(select(Bot.id).where(Bot.name == name)) is not None:
                    raise BotExistsError(name)
                session.add(
                    Bot(name=name, token_hash=hash_token(token), created_at=_now(), active=True)
                )
        except IntegrityError as error:
            # Another process registered the same name between our check and insert.
            raise BotExistsError(name) from error
        return token

    async def list_bots(self, *, include_inactive: bool = False) -> list[BotRecord]:
        """Registered bots by name; removed ones only with ``include_inactive``."""
        async with self._read() as session:
            return await queries.list_bots(session, include_inactive)

    async def remove_bot(self, name: str) -> bool:
        """Disable a bot's account (history is kept); False when no active bot had that name."""
        async with self._write() as session:
            result = await session.execute(
                update(Bot)
                .where(Bot.name == name, Bot.active)
                .values(active=False)
                .execution_options(synchronize_session=False)
            )
            return cast(CursorResult[Any], result).rowcount == 1

    async def authenticate(self, name: str, token: str) -> BotRecord | None:
        """The bot when ``token`` is its token and it is active, else None."""
        async with self._read() as session:
            bot = await session.scalar(select(Bot).where(Bot.name == name))
        # Compare even for unknown names so timing says as little as possible.
        stored = bot.token_hash if bot is not None else "0" * 64
        matches = hmac.compare_digest(stored, hash_token(token))
        if bot is None or not bot.active or not matches:
            return None
        return queries.bot_record(bot)

    # Matches ---------------------------------------------------------------

    async def create_match(
        self,
        game: str,
        players: tuple[str, str],
        move_ms: int,
        bank_ms: int,
        rated: bool = True,
    ) -> str:
        """Start a live match between two active bots; returns its id.

        A bot playing itself is allowed but never rated.
        """
        if move_ms <= 0 or bank_ms < 0:
            raise ValueError("move_ms must be positive and bank_ms not negative")
        match_id = secrets.token_urlsafe(8)
        async with self._write() as session:
            found = dict(
                (
                    await session.execute(
                        select(Bot.name, Bot.id).where(Bot.name.in_(players), Bot.active)
                    )
                ).all()
            )
            for name in players:
                if name not in found:
                    raise NoSuchBotError(name)
            session.add(
                Match(
                    id=match_id,
                    game=game,
                    player0_id=found[players[0]],
                    player1_id=found[players[1]],
                    move_ms=move_ms,
                    bank_ms=bank_ms,
                    rated=rated and players[0] != players[1],
                    status="live",
                    reason="",
                    started_at=_now(),
                )
            )
        return match_id

    async def record_move(
        self, match_id: str, ply: int, player: int, move: int, think_ms: int, rtt_ms: int
    ) -> None:
        """Queue one move for the next group commit (within ``flush_interval`` seconds).

        Waits only when the buffer is far behind, which slows the callers
        down instead of growing memory without bound. A second move for the
        same ply is ignored (the first one stays), and moves of an unknown
        match are dropped with an error in the log when flushed.
        """
        if self._closed:
            raise StoreError("the store is closed")
        if player not in (0, 1) or ply < 0:
            raise ValueError(f"bad move record: ply {ply}, player {player}")
        self._buffer.add(
            {
                "match_id": match_id,
                "ply": ply,
                "player": player,
                "move": move,
                "think_ms": think_ms,
                "rtt_ms": rtt_ms,
                "played_at": _now(),
            }
        )
        if len(self._buffer) >= self._max_pending:
            await self._buffer.flush()

    async def flush(self) -> None:
        """Write every queued move now."""
        await self._buffer.flush()

    async def _write_moves(self, batch: Batch) -> None:
        rows = [row for match_rows in batch.values() for row in match_rows]
        try:
            async with self._write() as session:
                await session.execute(self._insert_moves, rows)
            return
        except IntegrityError:
            pass
        # Some match id is unknown: write match by match so one bad caller
        # cannot hold every other match's moves hostage.
        for match_id, match_rows in batch.items():
            try:
                async with self._write() as session:
                    await session.execute(self._insert_moves, match_rows)
            except IntegrityError:
                log.error("dropped %d moves of unknown match %r", len(match_rows), match_id)

    async def finish_match(
        self,
        match_id: str,
        winner: int | None,
        termination: str,
        fault: str | None,
        rated: bool,
        reason: str = "",
    ) -> list[RatingChange]:
        """End a live match: its pending moves, result and rating changes commit together.

        ``winner`` is the winning seat or None. A termination of
        ``"aborted"`` makes the match ``aborted`` with result ``*``; aborted
        and unrated matches change no rating and return ``[]``. Exactly
        once: the status flips from ``live`` inside the transaction, so a
        second call (from anywhere) raises ``MatchAlreadyFinishedError``.
        """
        if winner not in (None, 0, 1):
            raise ValueError(f"winner must be 0, 1 or None, got {winner!r}")
        aborted = termination == ABORTED
        values: dict[str, Any] = {
            "status": ABORTED if aborted else "finished",
            "winner": None if aborted else winner,
            "result": "*" if aborted else _RESULTS[winner],
            "termination": termination,
            "fault": fault,
            "reason": reason,
            "ended_at": _now(),
        }
        if aborted or not rated:
            values["rated"] = False
        # The buffer lock first: no batch holding this match's moves is in
        # flight while the match is closed (flushes take the same order).
        async with self._buffer.lock:
            taken: list[dict[str, Any]] = []
            try:
                async with self._write() as session:
                    changes = await self._claim_live(session, match_id, values, values["ended_at"])
                    taken = self._buffer.pop(match_id)
                    if taken:
                        await session.execute(self._insert_moves, taken)
                return changes
            except BaseException:
                if taken:
                    self._buffer.restore({match_id: taken})
                raise

    async def _claim_live(
        self, session: AsyncSession, match_id: str, values: dict[str, Any], at: datetime
    ) -> list[RatingChange]:
        # Flipping the status is the claim: of two finishes, only one can
        # match ``status = 'live'`` (PostgreSQL re-checks it after the row lock).
        claimed = (
            await session.execute(
                update(Match)
                .where(Match.id == match_id, Match.status == "live")
                .values(**values)
                .returning(Match.game, Match.player0_id, Match.player1_id, Match.rated)
                .execution_options(synchronize_session=False)
            )
        ).first()
        if claimed is None:
            status = await session.scalar(select(Match.status).where(Match.id == match_id))
            if status is None:
                raise NoSuchMatchError(match_id)
            raise MatchAlreadyFinishedError(match_id, status)
        game, player0_id, player1_id, rated = claimed
        if values["status"] != "finished" or not rated:
            return []
        ids = (player0_id, player1_id)
        return await rate_match(session, match_id, game, ids, values["winner"], self.k_factor, at)

    async def abort_unfinished(self) -> int:
        """Mark every live match aborted (infrastructure fault, unrated); returns how many.

        Meant for server start, after a crash. Several arena processes
        sharing one database would each abort the others' matches, so only
        one of them should call it.
        """
        await self.flush()
        async with self._write() as session:
            result = await session.execute(
                update(Match)
                .where(Match.status == "live")
                .values(
                    status=ABORTED,
                    rated=False,
                    winner=None,
                    result="*",
                    termination=ABORTED,
                    fault="infrastructure",
                    reason="the server stopped while the match was live",
                    ended_at=_now(),
                )
                .execution_options(synchronize_session=False)
            )
            return cast(CursorResult[Any], result).rowcount

    # Queries ---------------------------------------------------------------

    async def leaderboard(self, game: str) -> list[LeaderboardRow]:
        """Active bots with at least one rated game of ``game``, by rating then name."""
        async with self._read() as session:
            return await queries.leaderboard(session, game)

    async def rating(self, bot: str, game: str) -> float | None:
        """An active bot's current rating in ``game``; None before its first rated game.

        One row, where ``leaderboard`` would load every rated bot: the server
        asks this for each seek and each match start.
        """
        async with self._read() as session:
            return await session.scalar(
                select(Rating.rating)
                .join(Bot, Bot.id == Rating.bot_id)
                .where(Bot.name == bot, Bot.active, Rating.game == game)
            )

    async def get_match(self, match_id: str) -> MatchRecord | None:
        """One match in full, including moves still waiting in this process's buffer."""
        # Holding the buffer lock means no batch is half-way to the database.
        async with self._buffer.lock:
            pending = [
                MoveRecord(
                    ply=r["ply"],
                    player=r["player"],
                    move=r["move"],
                    think_ms=r["think_ms"],
                    rtt_ms=r["rtt_ms"],
                )
                for r in self._buffer.peek(match_id)
            ]
            async with self._read() as session:
                return await queries.get_match(session, match_id, pending)

    async def list_matches(
        self, status: str | None = None, game: str | None = None, limit: int = 50
    ) -> list[MatchSummary]:
        """The most recently started matches, optionally only one status or game."""
        async with self._read() as session:
            return await queries.list_matches(session, status, game, limit)

    async def rating_history(self, bot: str, game: str) -> list[RatingHistoryEntry]:
        """A bot's rating changes in ``game``, oldest first; raises ``NoSuchBotError``."""
        async with self._read() as session:
            return await queries.rating_history(session, bot, game)

    async def rebuild_ratings(self) -> int:
        """Recompute all ratings and history from the finished rated matches; returns their count.

        Every bot starts at ``DEFAULT_RATING`` and matches replay in the
        order they were rated, with this store's K-factor, so with an
        unchanged K-factor the result equals the stored ratings exactly.
        """
        async with self._write() as session:
            return await rebuild(session, self.k_factor)
