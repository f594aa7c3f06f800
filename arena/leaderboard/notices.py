"""After a rated match, tell its players where the leaderboard puts them now (``rating``).

A bot has one rating: the leaderboard's fitted one. ``match_end`` goes out as
soon as the result is committed, before any refit, so it carries no rating.
``RatingNotices`` (a match observer) waits for the first board read after the
commit (``Leaderboards.fresh``), then sends both players a ``rating`` message
(``RatingReport``) holding their rows of that board, and hands the same
message to its listeners (the MQTT publisher). What a bot is told is thus
exactly what the leaderboard shows after the refit.

The matches of one game that end while a refit is awaited wait together:
one task per game takes every rated end so far, awaits one ``fresh`` board
for them all, sends their reports ``SLICE`` at a time, yielding to the event
loop between slices, then takes the ends that came meanwhile. A busy arena
ends hundreds of matches per refit; woken at once (a task per match), their
reports held the loop for 20–30 ms in one turn (bench.load ``--soak``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from arena.leaderboard.board import Board
from arena.leaderboard.cache import Leaderboards
from arena.play.match import Match
from protocol.messages import Analysis, MatchEnd, Moved, RatingReport, ServerMessage

log = logging.getLogger(__name__)

WAIT_S = 60.0
"""Longest wait for the refit; a board that cannot be read by then (a store in trouble)
leaves the players untold rather than holding a task forever."""

SLICE = 32
"""Reports sent per turn of the event loop when many wait for the same refit."""

Spawn = Callable[[Coroutine[Any, Any, None], str], object]
"""Runs a coroutine as a supervised task (``Supervisor.spawn``)."""
Tell = Callable[[str, ServerMessage], object]
"""Sends a message to a connected bot by name, if it is connected (``Gateway.tell``)."""


class RatingNotices:
    """The match observer that sends ``rating`` after each rated ``match_end``."""

    def __init__(
        self,
        leaderboards: Leaderboards,
        tell: Tell,
        spawn: Spawn,
        is_online: Callable[[str], bool],
    ) -> None:
        self._leaderboards = leaderboards
        self._tell = tell
        self._spawn = spawn
        self._is_online = is_online
        self._listeners: list[Callable[[RatingReport], None]] = []
        self._ended: dict[str, list[tuple[str, tuple[str, str]]]] = {}
        """Per game: the rated matches ended and not yet under a refit awaited."""
        self._telling: set[str] = set()
        """The games whose task is running (``_tell_game``)."""

    def listen(self, callback: Callable[[RatingReport], None]) -> None:
        """Call ``callback(report)`` with every report from now on (MQTT publishes it)."""
        self._listeners.append(callback)

    def match_started(self, match: Match) -> None:
        """Part of the match observer interface; nothing to tell at a start."""

    def moved(self, match: Match, moved: Moved, analysis: Analysis | None) -> None:
        """Part of the match observer interface; nothing to tell on a move."""

    def match_ended(self, match: Match, end: MatchEnd) -> None:
        """A committed end: a rated one gets its ``rating`` report after the refit."""
        if end.rated:
            self._ended.setdefault(match.game, []).append((match.match_id, match.players))
            if match.game not in self._telling:
                self._telling.add(match.game)
                self._spawn(self._tell_game(match.game), f"rating-notices-{match.game}")

    async def _tell_game(self, game: str) -> None:
        """Report every rated end of ``game``, one refit for all that ended before it."""
        try:
            while ended := self._ended.pop(game, None):
                try:
                    async with asyncio.timeout(WAIT_S):
                        board = await self._leaderboards.fresh(game)
                except TimeoutError:
                    log.warning(
                        "no leaderboard refit of %s within %.0f s; ratings untold after %d "
                        "matches (the first %s)",
                        game,
                        WAIT_S,
                        len(ended),
                        ended[0][0],
                    )
                    continue
                for number, (match_id, players) in enumerate(ended, 1):
                    self._tell_match(board, game, match_id, players)
                    if number % SLICE == 0:
                        await asyncio.sleep(0)  # let moves through between slices
        finally:
            self._telling.discard(game)

    def _tell_match(self, board: Board, game: str, match_id: str, players: tuple[str, str]) -> None:
        # Only the two rows: a board of thousands of bots is not rebuilt per result.
        rows = (board.entry(bot, self._is_online) for bot in dict.fromkeys(players))
        report = RatingReport(
            match_id=match_id, game=game, entries=tuple(row for row in rows if row is not None)
        )
        for bot in dict.fromkeys(players):
            self._tell(bot, report)
        for listener in list(self._listeners):
            try:
                listener(report)
            except Exception:
                log.exception("a rating listener failed for match %s", match_id)
