"""The server's leaderboards: fitted once per change, cached, never refitted per request.

``Leaderboards`` keeps one ``Board`` per game. A board is built from one read
of the database (the store's leaderboard rows and the rated games per pair of
seats, in one transaction) and one ``fit_ratings``, run by the ``Fitter`` it is
given (``arena.leaderboard.fit_process``: the server's fit process, or a worker
thread), so the event loop keeps serving. It is rebuilt only when

- a rated result of that game has committed (``result_committed``; the server
  calls it from each rated ``match_end``), and at least ``refresh_s`` has
  passed since the last build began; or
- it is older than ``max_age_s`` (results committed by other arena processes
  sharing the database, ``arena bots remove``, ``arena ratings rebuild``);

and, either way, the last fit has rested: a fit that took ``d`` seconds is
followed by at least ``d·(1/FIT_SHARE − 1)`` seconds without one, so fitting
takes at most ``FIT_SHARE`` of a core however many bots the board holds (a
fit of 2,000 bots takes seconds; back to back, fits would take a core from the
matches). Pairing and live ratings never wait for a fit (``rating_now``).

``board(game)`` returns the cached board at once unless a rebuild is due; a
due rebuild is awaited (so a bot asking right after its match sees its result
whenever the board has been quiet for ``refresh_s``), and concurrent callers
share it. Within ``refresh_s`` of the last build a caller gets the cached
board, so a burst of results costs at most one fit per interval, not one per
result or per request. A read that finds the same rows and games as the
cached board keeps it (no refit).

Listeners (``listen``) hear of every new board. With a listener (the MQTT
publisher) a committed result schedules its own rebuild, so the board is
republished within about ``refresh_s`` of a result even if nobody asks.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.leaderboard.board import UNRATED, Board
from arena.leaderboard.fit_process import BoardReadError, BoardSource, Fitter, ThreadFit
from arena.play.lobby import check_game
from arena.play.match import Match
from arena.store import database_outage
from protocol.games import GAMES
from protocol.messages import Analysis, MatchEnd, Moved

log = logging.getLogger(__name__)

REFRESH_S = 1.0
"""Least time between two builds of one game's board while results keep coming."""

MAX_AGE_S = 30.0
"""A board older than this is re-read on the next request even without a known result."""

FIT_SHARE = 0.25
"""The most of its time the leaderboard spends fitting while results keep coming: after a fit
of ``d`` seconds the next begins no sooner than ``d·(1/FIT_SHARE − 1)`` seconds later."""

Spawn = Callable[[Coroutine[Any, Any, None], str], object]
"""Runs a coroutine as a supervised task (``Supervisor.spawn``)."""


@dataclass(eq=False)
class _Slot:
    """One game's cache entry."""

    board: Board | None = None
    digest: bytes | None = None
    """The digest of the inputs ``board`` was fitted from (``Fitter.build``)."""
    started: float = -1e18
    """When the last build began (clock seconds)."""
    paced_from: float = -1e18
    """When the last build that counts toward ``refresh_s`` began: the start-up build does
    not, so the first result after start is on the next read's board."""
    rested_at: float = -1e18
    """When the last fit has rested (``FIT_SHARE``): no paced build begins before."""
    dirty: bool = False
    building: asyncio.Task[Board] | None = None
    scheduled: bool = False
    reads: int = 0
    """Builds begun so far: build number ``reads`` is the next to read the database."""
    waiting: list[tuple[int, asyncio.Future[Board]]] = field(default_factory=list)
    """``fresh`` callers: the first build they accept, and where its board goes."""


def _quietly(task: asyncio.Task[Board]) -> None:
    """Retrieve a build's failure: its callers got it; with none left (shutdown) it is moot."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("leaderboard build failed", exc_info=task.exception())


def _default_spawn(coro: Coroutine[Any, Any, None], name: str) -> object:
    return asyncio.get_running_loop().create_task(coro, name=name)


class Leaderboards:
    """Cached fitted leaderboards, one per game; see the module docstring.

    ``fitter`` is where the fits run: the server passes its ``FitProcess``; the
    default is ``ThreadFit`` (a worker thread of this process).
    """

    def __init__(
        self,
        source: BoardSource,
        *,
        refresh_s: float = REFRESH_S,
        max_age_s: float = MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
        spawn: Spawn = _default_spawn,
        fitter: Fitter | None = None,
    ) -> None:
        self._source = source
        self._fitter: Fitter = fitter or ThreadFit()
        self._refresh_s = refresh_s
        self._max_age_s = max_age_s
        self._clock = clock
        self._spawn = spawn
        self._slots: dict[str, _Slot] = {}
        self._listeners: list[Callable[[Board], None]] = []
        self._versions = 0
        self._outage = database_outage(log, "the leaderboard reading the database")
        self.fits = 0
        """Boards fitted so far (a read that found nothing new fits nothing)."""

    # Reading ----------------------------------------------------------------------

    async def board(self, game: str) -> Board:
        """``game``'s board: cached, or rebuilt first when a rebuild is due; ``no_such_game``."""
        check_game(game)
        slot = self._slots.setdefault(game, _Slot())
        now = self._clock()
        if slot.board is None or slot.building is not None:
            return await self._build(game, slot)
        stale = slot.dirty or now - slot.started >= self._max_age_s
        if stale and now >= self._due_at(slot):
            return await self._build(game, slot)
        return slot.board

    def cached(self, game: str) -> Board | None:
        """The board last built for ``game``, without reading anything."""
        slot = self._slots.get(game)
        return None if slot is None else slot.board

    async def fresh(self, game: str) -> Board:
        """The first board of ``game`` read from the database after this call.

        It holds every result committed before the call: what a bot is told its
        rating is after a game (``arena.leaderboard.notices``). The rebuild is
        scheduled as after a result, so a burst of results still costs one fit per
        ``refresh_s``; a read finding nothing new returns the cached board.
        """
        check_game(game)
        slot = self._slots.setdefault(game, _Slot())
        waiter: asyncio.Future[Board] = asyncio.get_running_loop().create_future()
        slot.waiting.append((slot.reads, waiter))
        slot.dirty = True
        self._schedule(game, slot)
        return await waiter

    def rating_now(self, bot: str, game: str) -> float | None:
        """``bot``'s rating for pairing and live views, without waiting: its rating on
        ``game``'s board (``UNRATED`` when it is not on it); None before the first build.

        A board older than ``max_age_s`` gets a rebuild scheduled (results committed by
        another process), so the lookups keep the board current even if nobody reads it.
        """
        slot = self._slots.get(game)
        if slot is None or slot.board is None:
            return None
        if self._clock() - slot.started >= self._max_age_s:
            slot.dirty = True
            self._schedule(game, slot)
        try:
            return slot.board.shown.get(bot).rating
        except KeyError:
            return UNRATED

    async def rating(self, bot: str, game: str) -> float:
        """``rating_now``, after waiting for ``game``'s first board when it has none yet.

        The one rating from the first game on: the server builds every board at start
        (``refresh_all``), so this waits only if that build failed or is still running.
        """
        rating = self.rating_now(bot, game)
        if rating is None:
            await self.board(game)
            rating = self.rating_now(bot, game)
            assert rating is not None
        return rating

    def listen(self, callback: Callable[[Board], None]) -> None:
        """Call ``callback(board)`` with every board built from now on, and the cached ones now.

        With a listener, a committed result is followed by a rebuild even if
        nobody asks (within ``refresh_s``).
        """
        self._listeners.append(callback)
        for slot in list(self._slots.values()):
            if slot.board is not None:
                callback(slot.board)

    # Invalidation -----------------------------------------------------------------

    def result_committed(self, game: str) -> None:
        """A rated result of ``game`` is in the database: the board is out of date."""
        slot = self._slots.get(game)
        if slot is None:
            if not self._listeners:
                return  # nobody has read this board yet: the first read builds it
            slot = self._slots.setdefault(game, _Slot())
        slot.dirty = True
        if self._listeners:
            self._schedule(game, slot)

    def match_started(self, match: Match) -> None:
        """Part of the match observer interface; starts change no board."""

    def moved(self, match: Match, moved: Moved, analysis: Analysis | None) -> None:
        """Part of the match observer interface; moves change no board."""

    def match_ended(self, match: Match, end: MatchEnd) -> None:
        """A committed end: a rated result makes its game's board out of date."""
        if end.rated:
            self.result_committed(match.game)

    # Building ---------------------------------------------------------------------

    async def _build(self, game: str, slot: _Slot, paced: bool = True) -> Board:
        if slot.building is None:
            slot.building = asyncio.get_running_loop().create_task(
                self._read_and_fit(game, slot, paced), name=f"leaderboard-{game}"
            )
            slot.building.add_done_callback(_quietly)
        building = slot.building
        # Shielded: one caller giving up must not cancel the build others wait for.
        return await asyncio.shield(building)

    async def _read_and_fit(self, game: str, slot: _Slot, paced: bool) -> Board:
        number = slot.reads
        slot.reads += 1
        try:
            slot.started = self._clock()
            slot.paced_from = slot.started if paced else -1e18
            slot.dirty = False  # a result committed from now on needs another build
            fit_began = self._clock()
            known = slot.digest if slot.board is not None else None
            try:
                # A number per read, unique even when two games build at once; a read
                # that finds nothing new leaves a gap.
                self._versions += 1
                fitted = await self._fitter.build(self._source, game, self._versions, known)
            except BoardReadError as exc:
                self._outage.failed(exc)
                raise
            self._outage.succeeded()
            fit_ended = self._clock()
            if fitted is None:  # the same rows and games as the cached board: no refit
                assert slot.board is not None
                self._answer(slot, number, slot.board)
                return slot.board
            if paced:
                slot.rested_at = fit_ended + (fit_ended - fit_began) * (1.0 / FIT_SHARE - 1.0)
            board, slot.digest = fitted
            self.fits += 1
            slot.board = board
        except BaseException:
            slot.dirty = True
            raise
        finally:
            slot.building = None
            if slot.dirty and (self._listeners or slot.waiting):
                self._schedule(game, slot)
        self._answer(slot, number, board)
        for listener in list(self._listeners):
            try:
                listener(board)
            except Exception:
                log.exception("a leaderboard listener failed for %s", game)
        return board

    @staticmethod
    def _answer(slot: _Slot, number: int, board: Board) -> None:
        """Give ``board`` (from build ``number``) to the ``fresh`` callers that accept it."""
        keep = []
        for first, waiter in slot.waiting:
            if first > number:
                keep.append((first, waiter))
            elif not waiter.done():
                waiter.set_result(board)
        slot.waiting = keep

    def _due_at(self, slot: _Slot) -> float:
        """When a stale board may be rebuilt: ``refresh_s`` after the last paced build began,
        and not before the last fit has rested (``FIT_SHARE``)."""
        return max(slot.paced_from + self._refresh_s, slot.rested_at)

    def _schedule(self, game: str, slot: _Slot) -> None:
        """Rebuild ``game``'s board once it is due (``_due_at``).

        A build under way when the time comes reschedules when it ends, if needed.
        """
        if slot.scheduled or slot.building is not None:
            return
        slot.scheduled = True
        delay = max(0.0, self._due_at(slot) - self._clock())
        self._spawn(self._rebuild_later(game, slot, delay), f"leaderboard-refresh-{game}")

    async def _rebuild_later(self, game: str, slot: _Slot, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
        finally:
            slot.scheduled = False
        if slot.dirty and slot.building is None:
            try:
                await self._build(game, slot)
            except Exception:  # a failed read is logged as an outage; retried later
                level = logging.DEBUG if self._outage.active else logging.WARNING
                log.log(level, "leaderboard of %s not rebuilt", game, exc_info=True)

    async def refresh_all(self, games: Sequence[str] = GAMES) -> None:
        """Build the boards of ``games`` now: at start, so that pairing, live views and
        listeners have every game's board before the first request or result. These builds
        do not count toward ``refresh_s``: the first result after them is rebuilt at once.

        A game whose build fails is logged (a database outage is) and built on first use.
        """
        for game in games:
            slot = self._slots.setdefault(game, _Slot())
            try:
                await self._build(game, slot, paced=False)
            except Exception:
                level = logging.DEBUG if self._outage.active else logging.WARNING
                log.log(level, "leaderboard of %s not built at start", game, exc_info=True)
