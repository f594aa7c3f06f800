"""``Store``: the one async facade the arena server uses for persistence.

Engine, sessions, the group commit, the node's lease, health and closing
live in its base ``StoreCore`` (``core``); the solved values of stored moves
(``arena analyse``) in ``AnalysisStore`` (``analysis``), between the two;
two bots' past ladder games in ``PairHistoryStore`` (``pair_history``).
Tables of their own are facets the store hands out, each method one
transaction: ``tournaments`` (``TournamentTables``), and for the nodes of a
cluster ``directory`` and ``seek_queue``.

Writes that sit on a match's critical path go through the group commit in
``movebuffer``: a new match row (``open_match``), every move, and every
match end (``finish_match``). One transaction writes a whole batch, in
order: new matches, moves, then ends, each end with its result and both
rating changes. Bot ids the server needs when it starts matches come from
an in-memory cache filled when a bot logs in (``authenticate``). The rating
model's running ratings are cached the same way (``rating_hint``); the
server pairs and reports by the fitted leaderboard instead
(``arena.leaderboard``), so that cache serves only callers of the store.
The database stays authoritative: every finish reads the current ratings
inside its own transaction.

The batch SQL itself lives in ``batch_sql`` (synchronous, run here through
``AsyncSession.run_sync``); with ``writer_process=True`` a SQLite store sends
its batches to a separate process that runs the same code instead
(``writer_process``), which keeps commits short on a saturated event loop.

A serving store also claims the database as a node (``claim_node``), which
starts its lease's heartbeat; ``abort_orphans`` ends the live matches of
nodes that are gone. When writes fail, the store retries them for as long
as it runs, reports its ``health``, and at ``close`` saves what could not be
committed to the recovery journal, which the next ``open`` replays first.
See ``docs/operations.md``.

Removing a bot only disables its account: it can no longer log in, is
hidden from ``list_bots`` and leaderboards, and keeps its name, matches and
rating history; ``reset_token(name, reactivate=True)`` brings it back. A
server asks ``revoked_logins`` now and then to close the connections of bots
removed, or whose token was reset, since they logged in.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from arena.errors import (
    DatabaseOpenError,
    LeaseLostError,
    NoSuchBotError,
    StoreDegradedError,
    StoreError,
)
from arena.ratings import DEFAULT_MODEL, RatingModel
from arena.store import nodes, queries
from arena.store.accounts import GUEST_ACCOUNT, AccountStore
from arena.store.analysis import AnalysisStore
from arena.store.engine import DEFAULT_URL, is_sqlite
from arena.store.health import HealthState
from arena.store.journal import (
    DEFAULT_RESERVE_BYTES,
    RecoveryJournal,
    default_journal_path,
    fallback_journal_path,
    replay,
)
from arena.store.models import Bot, Rating
from arena.store.movebuffer import DEFAULT_MAX_ANALYSIS_BYTES, DEFAULT_MAX_PENDING, Finish
from arena.store.opening import mask_url, open_database
from arena.store.pair_history import PairHistoryStore
from arena.store.placement import Directory
from arena.store.queries import BotResult, PairCell
from arena.store.rating_updates import rebuild
from arena.store.records import (
    Arrival,
    BotRecord,
    LeaderboardRow,
    MatchRecord,
    MatchSummary,
    MoveRecord,
    RatingChange,
    RatingHistoryEntry,
)
from arena.store.searches import search_json, search_text
from arena.store.seek_queue import SeekQueueTable
from arena.store.tokens import hash_token, new_match_id
from arena.store.tournaments import TournamentTables
from arena.store.writer_process import WriterProcess
from protocol.games import GAMES, Fault, Termination
from protocol.messages import Analysis

ABORTED = nodes.ABORTED
"""The status of a match that ended without a result (``Termination.ABORTED``)."""

ARRIVAL_TTL_S = 60.0
"""How long an expected login (``expect_login``) may be checked without a read."""

MAX_ARRIVALS = 10_000
"""Expected logins kept at most (a bound: a bot sent here may never come)."""

_RESULTS = {0: "1-0", 1: "0-1", None: "1/2-1/2"}
log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


class Store(AccountStore, AnalysisStore, PairHistoryStore):
    """Bots, matches, moves and ratings in one SQL database. Create it with ``Store.open``.

    A store belongs to the event loop that opened it. Several stores (in one
    process or many) may share a database; each buffers only its own moves.
    """

    @classmethod
    async def open(
        cls,
        url: str = DEFAULT_URL,
        *,
        create: bool = True,
        rating_model: RatingModel = DEFAULT_MODEL,
        flush_interval: float = 0.05,
        flush_batch: int = 512,
        writer_process: bool = False,
        max_pending_moves: int = DEFAULT_MAX_PENDING,
        max_pending_analysis_bytes: int = DEFAULT_MAX_ANALYSIS_BYTES,
        journal_path: str | Path | None = None,
        journal_fallback_path: str | Path | None = None,
        journal_reserve_bytes: int = DEFAULT_RESERVE_BYTES,
    ) -> Store:
        """Open ``url``, migrate it, replay any recovery journal, and start the flusher.

        Raises ``DatabaseOpenError`` (bad URL; missing, unwritable or
        unreachable database; see ``opening``) and ``RecoveryJournalError``
        (a journal that cannot be replayed), both ``StoreStartError``s.
        ``create`` allows creating a missing SQLite file (logged) or the
        tables of an empty database; read-only commands pass False.
        ``writer_process`` (SQLite only; ignored for other databases) writes
        the group commits from a separate process (``writer_process``):
        what a busy server wants, at the price of a second or so at start.
        The journal goes to ``journal_path`` (default: next to a SQLite
        file; see ``journal``), else to ``journal_fallback_path``.
        """
        opened = await open_database(url, create=create)
        engine = opened.engine
        recovery = RecoveryJournal(
            Path(journal_path) if journal_path else default_journal_path(opened.url),
            Path(journal_fallback_path or fallback_journal_path(opened.url)),
            mask_url(opened.url),
        )
        writer = None
        try:
            await replay(recovery, engine, rating_model)
            if writer_process and is_sqlite(engine):
                writer = WriterProcess(
                    opened.url.render_as_string(hide_password=False), rating_model
                )
                try:
                    await writer.start()
                except StoreError as error:
                    raise DatabaseOpenError(mask_url(url), str(error)) from error
        except BaseException:
            await engine.dispose()
            raise
        store = cls(
            engine,
            recovery,
            rating_model=rating_model,
            flush_interval=flush_interval,
            flush_batch=flush_batch,
            max_pending_moves=max_pending_moves,
            max_pending_analysis_bytes=max_pending_analysis_bytes,
            journal_reserve_bytes=journal_reserve_bytes,
            writer=writer,
        )
        store._buffer.start()
        return store

    # Bots ------------------------------------------------------------------

    async def authenticate(self, name: str, token: str) -> BotRecord | None:
        """The bot when ``token`` is its token and it is active, else None.

        A bot that logs in also has its ratings read into the cache, in the
        same transaction, so its seeks and match starts need no database read.
        A bot expected here (``expect_login``, ``expect_return``) is checked
        against what was read for it then, once.
        """
        expected, until = self._arrivals.pop(name, (None, 0.0))
        if (
            expected is not None
            and time.monotonic() <= until
            and hmac.compare_digest(expected.token_hash, hash_token(token))
        ):
            self._logins[name] = (expected.token_hash, expected.created_at)
            return BotRecord(name, queries.utc(expected.created_at), active=True)
        # Read with the other logins of the moment (``arena.store.logins``).
        found = await self._login_reads.read(name)
        bot, ratings = found if found is not None else (None, {})
        # Compare even for unknown names so timing says as little as possible.
        stored = bot.token_hash if bot is not None else "0" * 64
        matches = hmac.compare_digest(stored, hash_token(token))
        if bot is None or not bot.active or not matches:
            return None
        self._remember(bot.name, bot.id, ratings)
        self._logins[bot.name] = (bot.token_hash, bot.created_at)
        return queries.bot_record(bot)

    def expect_login(self, arrival: Arrival) -> None:
        """``arrival``'s bot is on its way here from another node: its id and ratings are
        cached now (its match starts without a read), and its next login here, within
        ``ARRIVAL_TTL_S``, is checked against the token hash read with them instead of
        the database. A token reset meanwhile is caught as for any bot online: by the
        server's login recheck (``ArenaConfig.login_recheck_s``), which closes the login."""
        self._remember(arrival.bot, arrival.bot_id, arrival.ratings)
        now = time.monotonic()
        if len(self._arrivals) >= MAX_ARRIVALS:  # bots that never came
            self._arrivals = {k: v for k, v in self._arrivals.items() if v[1] >= now}
        if len(self._arrivals) < MAX_ARRIVALS:
            self._arrivals[arrival.bot] = (arrival, now + ARRIVAL_TTL_S)

    def expect_return(self, bot: str) -> None:
        """``bot``, logged in here, leaves for a match on another node and comes back to seek
        after it: its next login here is checked as after ``expect_login``, against its last
        login here."""
        login, bot_id = self._logins.get(bot), self._bot_ids.get(bot)
        if login is not None and bot_id is not None:
            self.expect_login(Arrival(bot, bot_id, login[0], login[1], {}))

    def _remember(self, bot: str, bot_id: int, ratings: dict[str, float]) -> None:
        """Cache a bot's id and ratings as just read from the database."""
        self._bot_ids[bot] = bot_id
        for game in GAMES:
            # setdefault: a match this store finished since the read began is newer.
            self._ratings.setdefault((bot, game), ratings.get(game))

    # Matches ---------------------------------------------------------------

    async def create_match(
        self,
        game: str,
        players: tuple[str, str],
        move_ms: int,
        bank_ms: int,
        rated: bool = True,
    ) -> str:
        """Start a live match between two active bots and write it now; returns its id.

        A bot playing itself is allowed but never rated.
        """
        match_id = await self.open_match(game, players, move_ms, bank_ms, rated)
        await self.flush()
        return match_id

    async def open_match(
        self,
        game: str,
        players: tuple[str, str],
        move_ms: int,
        bank_ms: int,
        rated: bool = True,
        *,
        opening: Sequence[int] = (),
        tournament: tuple[int, int] | None = None,
        match_id: str | None = None,
    ) -> str:
        """Start a live match through the group commit; returns its id at once.

        Like ``create_match``, but the row is written with the next batch,
        before any of the match's moves or its end. Only an unknown bot (not
        yet seen by this store) costs a database read; a bot removed by
        another process since it logged in here can still start matches.
        ``opening`` is recorded as the moves the match starts from, and
        ``tournament`` as the ``(tournament id, pair number)`` it is played for.
        ``match_id`` is the id to use when it was chosen before (``new_match_id``).

        Refuses (``StoreDegradedError``) while the store is degraded or
        ``max_pending_moves`` moves wait, which bounds the memory pending
        writes take; ``LeaseLostError`` once the node's lease is lost.
        """
        if self._closed:
            raise StoreError("the store is closed")
        health = self._monitor.health
        if health.state is HealthState.LEASE_LOST:
            raise LeaseLostError(health.reason)
        if not health.ok:
            raise StoreDegradedError(
                f"no new match while the store is degraded: {health.reason}"
                f" (since {health.since:%H:%M:%S} UTC)"
            )
        if self._buffer.full:
            raise StoreDegradedError(
                f"no new match while {len(self._buffer)} moves wait to be written"
            )
        if move_ms <= 0 or bank_ms < 0:
            raise ValueError("move_ms must be positive and bank_ms not negative")
        ids = await self._bot_ids_of(players)
        match_id = match_id or new_match_id()
        self._buffer.add_match(
            {
                "id": match_id,
                "game": game,
                "player0_id": ids[0],
                "player1_id": ids[1],
                "move_ms": move_ms,
                "bank_ms": bank_ms,
                "rated": rated and players[0] != players[1],
                "status": "live",
                "winner": None,
                "result": None,
                "termination": None,
                "fault": None,
                "reason": "",
                "started_at": _now(),
                "ended_at": None,
                "node_id": self.node_id,
                "opening": " ".join(map(str, opening)) if opening else None,
                "tournament_id": None if tournament is None else tournament[0],
                "tournament_pair": None if tournament is None else tournament[1],
            }
        )
        return match_id

    async def _bot_ids_of(self, players: tuple[str, str]) -> tuple[int, int]:
        missing = [name for name in players if name not in self._bot_ids]
        if missing:
            async with self._read() as session:
                found = dict(
                    (
                        await session.execute(
                            select(Bot.name, Bot.id).where(Bot.name.in_(missing), Bot.active)
                        )
                    ).all()
                )
            if GUEST_ACCOUNT in missing and GUEST_ACCOUNT not in found:
                found[GUEST_ACCOUNT] = await self._guest_account()
            for name in missing:
                if name not in found:
                    raise NoSuchBotError(name)
            self._bot_ids.update(found)
        return self._bot_ids[players[0]], self._bot_ids[players[1]]

    def record_move(
        self,
        match_id: str,
        ply: int,
        player: int,
        move: int,
        think_ms: int,
        rtt_ms: int,
        analysis: Analysis | None = None,
    ) -> None:
        """Queue one move, with the mover's ``analysis`` if any, for the next group commit
        (within ``flush_interval`` seconds); the analysis is kept bounded (``searches``).

        A second move for the same ply is ignored (the first one stays), and
        moves of an unknown match are dropped with an error in the log when
        flushed. Never waits: memory is bounded by ``open_match``, which
        refuses new matches while the store is degraded or holds
        ``max_pending_moves`` moves.
        """
        if self._closed:
            raise StoreError("the store is closed")
        if player not in (0, 1) or ply < 0:
            raise ValueError(f"bad move record: ply {ply}, player {player}")
        row = (ply, player, move, think_ms, rtt_ms, time.time(), search_text(analysis))
        self._buffer.add(match_id, row)

    async def finish_match(
        self,
        match_id: str,
        winner: int | None,
        termination: Termination,
        fault: Fault | None,
        rated: bool,
        reason: str = "",
    ) -> list[RatingChange]:
        """End a live match: its pending moves, result and rating changes commit together.

        The end goes through the group commit: it is written, with any other
        ends and moves pending, within the buffer's ``finish_delay``; this
        returns once that transaction has committed. While the database
        fails, it waits (retried with backoff) for as long as the store runs;
        if the store closes first, it raises ``EndNotCommittedError`` (the
        end went to the recovery journal): never a result that is not stored.

        ``winner`` is the winning seat or None. A termination of
        ``"aborted"`` makes the match ``aborted`` with result ``*``; aborted
        and unrated matches change no rating and return ``[]``. Exactly
        once: the status flips from ``live`` inside the transaction, so a
        second call (from anywhere) raises ``MatchAlreadyFinishedError``.
        """
        if winner not in (None, 0, 1):
            raise ValueError(f"winner must be 0, 1 or None, got {winner!r}")
        aborted = termination is Termination.ABORTED
        values: dict[str, Any] = {
            "status": ABORTED if aborted else "finished",
            "winner": None if aborted else winner,
            "result": "*" if aborted else _RESULTS[winner],
            "termination": termination.value,
            "fault": None if fault is None else fault.value,
            "reason": reason,
            "ended_at": _now(),
        }
        # Only the store knows whether the match itself was rated; False here settles it.
        values["rated"] = not aborted and rated
        if self._closed:
            raise StoreError("the store is closed")
        done: asyncio.Future[list[RatingChange]] = asyncio.get_running_loop().create_future()
        self._buffer.add_finish(Finish(match_id, values, done))
        # Shielded: a caller cancelled while waiting must not cancel the future the
        # flusher settles (the end is written either way).
        return await asyncio.shield(done)

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

    async def rating_hint(self, bot: str, game: str) -> float | None:
        """``rating``, from this store's cache when it has one: for pairing and display.

        The cache is filled when the bot logs in (``authenticate``), or else by
        the first lookup, and refreshed by every match this store finishes, so
        with one arena process it is exact; with several sharing a database it
        may trail the other nodes' results.
        """
        key = (bot, game)
        if key not in self._ratings:
            self._ratings[key] = await self.rating(bot, game)
        return self._ratings[key]

    def cached_rating(self, bot: str, game: str) -> tuple[bool, float | None]:
        """``(True, rating_hint)`` when the cache already holds it, else ``(False, None)``.

        Lets a caller skip the await (and the task it would need) in the usual case.
        """
        key = (bot, game)
        if key in self._ratings:
            return True, self._ratings[key]
        return False, None

    async def get_match(self, match_id: str) -> MatchRecord | None:
        """One match in full, including moves still waiting in this process's buffer."""
        if self._buffer.has_match(match_id):
            await self.flush()  # the match row itself is still waiting
        # Holding the buffer lock means no batch is half-way to the database.
        async with self._buffer.lock:
            pending = [
                MoveRecord(ply, player, move, think_ms, rtt_ms, search_json(analysis))
                for ply, player, move, think_ms, rtt_ms, _, analysis in self._buffer.peek(match_id)
            ]
            async with self._read() as session:
                return await queries.get_match(session, match_id, pending)

    async def list_matches(
        self,
        status: str | None = None,
        game: str | None = None,
        limit: int = 50,
        *,
        bot: str | None = None,
        before: queries.MatchKey | None = None,
    ) -> list[MatchSummary]:
        """The most recently started matches, optionally of one status, game or bot.

        ``before`` (a match's ``(started_at, id)``) continues a listing after that
        match. Live matches whose rows still wait for the group commit, or are on their
        way to the database in a batch under way, are written first, so a match that has
        started is listed.
        """
        if status in (None, "live") and self._buffer.unwritten_matches():
            await self.flush()  # it waits for the batch under way (the buffer's lock)
        async with self._read() as session:
            return await queries.list_matches(session, status, game, limit, bot, before)

    async def finished_matches(
        self,
        game: str,
        *,
        bot: str | None = None,
        since: datetime | None = None,
        page: int = 500,
    ) -> AsyncIterator[MatchRecord]:
        """Every finished match of ``game`` in full, oldest first, read a page at a time.

        Optionally only ``bot``'s matches, and those started at or after ``since``.
        Each page is its own read transaction, so a long export never holds one open.
        """
        after: queries.MatchKey | None = None
        while True:
            async with self._read() as session:
                records = await queries.finished_matches(session, game, bot, since, after, page)
            for record in records:
                yield record
            if len(records) < page:
                return
            after = (records[-1].started_at, records[-1].id)

    async def rating_history(self, bot: str, game: str) -> list[RatingHistoryEntry]:
        """A bot's rating changes in ``game``, oldest first; raises ``NoSuchBotError``."""
        async with self._read() as session:
            return await queries.rating_history(session, bot, game)

    async def rebuild_ratings(self) -> int:
        """Recompute all ratings and history from the finished rated matches; returns their count.

        Every bot starts at the rating model's initial rating and matches
        replay in the order they were rated, through this store's model, so
        with an unchanged model the result equals the stored ratings exactly.
        """
        async with self._write() as session:
            count = await rebuild(session, self.rating_model)
        self._ratings.clear()
        return count

    # Nodes sharing a database (``arena.cluster``) ---------------------------------

    def directory(self, node_id: str) -> Directory:
        """Where node ``node_id`` publishes its URL and finds the node hosting a bot's match."""
        return Directory(self.engine, node_id)

    def seek_queue(self, node_id: str) -> SeekQueueTable:
        """The shared ``seek_queue`` table (PostgreSQL) as node ``node_id`` pairs from it."""
        return SeekQueueTable(self.engine, node_id)

    # Tournaments (``arena.tournaments``) ---------------------------------------------

    @property
    def tournaments(self) -> TournamentTables:
        """The tournament tables, one transaction per method (the domain holds no session)."""
        return TournamentTables(self._write, self._read)

    # Leaderboard and bot pages (read models in ``arena.leaderboard``) ------------

    async def leaderboard_inputs(self, game: str) -> tuple[list[LeaderboardRow], list[PairCell]]:
        """``leaderboard(game)`` and its rated games per pair of seats, read in one transaction."""
        async with self._read() as session:
            return await queries.leaderboard_inputs(session, game)

    @property
    def database_url(self) -> str:
        """The database URL with its password, for a helper process that opens it itself
        (the leaderboard's fit process reads its inputs there: ``arena.store.reader``)."""
        return self.engine.url.render_as_string(hide_password=False)

    async def get_bot(self, name: str) -> BotRecord | None:
        """The bot called ``name``, active or removed; None when there is none."""
        async with self._read() as session:
            return await queries.get_bot(session, name)

    async def bot_results(self, name: str) -> list[BotResult]:
        """A bot's rated finished games in every game, oldest first; raises ``NoSuchBotError``."""
        async with self._read() as session:
            return await queries.bot_results(session, name)

    async def bot_matches(self, name: str, limit: int = 20) -> list[MatchSummary]:
        """A bot's most recently started matches, newest first; raises ``NoSuchBotError``."""
        async with self._read() as session:
            return await queries.bot_matches(session, name, limit)
