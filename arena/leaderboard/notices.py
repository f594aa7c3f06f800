"""After a rated match, tell its players where the leaderboard puts them now (``rating``).

A bot has one rating: the leaderboard's fitted one. ``match_end`` goes out as
soon as the result is committed, before any refit, so it carries no rating.
``RatingNotices`` (a match observer) waits for the first board read after the
commit (``Leaderboards.fresh``), then sends both players a ``rating`` message
(``RatingReport``) holding their rows of that board, and hands the same
message to its listeners (the MQTT publisher). What a bot is told is thus
exactly what the leaderboard shows after the refit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from arena.leaderboard.cache import Leaderboards
from arena.play.match import Match
from protocol.messages import Analysis, MatchEnd, Moved, RatingReport, ServerMessage

log = logging.getLogger(__name__)

WAIT_S = 60.0
"""Longest wait for the refit; a board that cannot be read by then (a store in trouble)
leaves the players untold rather than holding a task forever."""

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
            self._spawn(self._report(match.game, match.match_id, match.players), "rating-notice")

    async def report(self, game: str, match_id: str, players: tuple[str, str]) -> RatingReport:
        """The players' rows on the first board read from now on."""
        board = await self._leaderboards.fresh(game)
        # Only the two rows: a board of thousands of bots is not rebuilt per result.
        rows = (board.entry(bot, self._is_online) for bot in dict.fromkeys(players))
        entries = tuple(row for row in rows if row is not None)
        return RatingReport(match_id=match_id, game=game, entries=entries)

    async def _report(self, game: str, match_id: str, players: tuple[str, str]) -> None:
        try:
            async with asyncio.timeout(WAIT_S):
                report = await self.report(game, match_id, players)
        except TimeoutError:
            log.warning(
                "match %s: no leaderboard refit within %.0f s; ratings untold", match_id, WAIT_S
            )
            return
        for bot in dict.fromkeys(players):
            self._tell(bot, report)
        for listener in list(self._listeners):
            try:
                listener(report)
            except Exception:
                log.exception("a rating listener failed for match %s", match_id)
