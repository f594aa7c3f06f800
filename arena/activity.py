"""What the operator hears about play: a log line per match start and end, and the counts.

``MatchActivity`` is one of the ``MatchObserver``s the match registry reports
to (with the spectator hub and the leaderboards): it logs each match's start
and end and counts the moves applied and the matches ended per game and
termination (``arena.metrics`` exports them). A move costs it one addition.

The end line comes once the end is committed, like ``match_end`` itself::

    match Xk3v9QpL started: connect4, alice vs bob, 1000+0 ms, rated
    match Xk3v9QpL ended: connect4, alice vs bob, 1-0 by line after 23 plies in 14.2 s
"""

from __future__ import annotations

import logging
import time
import weakref
from collections import Counter

from arena.play.match import Match
from protocol.messages import Analysis, MatchEnd, Moved

log = logging.getLogger("arena.matches")


class MatchActivity:
    """Logs and counts matches; see the module docstring."""

    def __init__(self) -> None:
        self.moves = 0
        """Moves applied since start."""
        self.started = 0
        """Matches started since start."""
        self.ended: Counter[tuple[str, str]] = Counter()
        """Matches ended (their end committed) since start, by ``(game, termination)``."""
        self._began: weakref.WeakKeyDictionary[Match, float] = weakref.WeakKeyDictionary()

    def match_started(self, match: Match) -> None:
        """Count and log the start."""
        self.started += 1
        self._began[match] = time.monotonic()
        tc = match.time_control
        rated = "rated" if match.rated else "unrated"
        log.info(
            "match %s started: %s, %s vs %s, %d+%d ms, %s",
            match.match_id,
            match.game,
            match.players[0],
            match.players[1],
            tc.move_ms,
            tc.bank_ms,
            rated,
            extra={
                "event": "match_started",
                "match_id": match.match_id,
                "game": match.game,
                "players": list(match.players),
                "move_ms": tc.move_ms,
                "bank_ms": tc.bank_ms,
                "rated": match.rated,
            },
        )

    def moved(self, match: Match, moved: Moved, analysis: Analysis | None) -> None:
        """Count the move."""
        self.moves += 1

    def match_ended(self, match: Match, end: MatchEnd) -> None:
        """Count and log the end (it is committed)."""
        self.ended[match.game, end.termination] += 1
        began = self._began.pop(match, None)
        duration = round(time.monotonic() - began, 3) if began is not None else None
        plies = match.ply
        log.info(
            "match %s ended: %s, %s vs %s, %s by %s after %d plies in %s",
            match.match_id,
            match.game,
            match.players[0],
            match.players[1],
            end.result,
            end.termination,
            plies,
            "?" if duration is None else f"{duration:.1f} s",
            extra={
                "event": "match_ended",
                "match_id": match.match_id,
                "game": match.game,
                "players": list(match.players),
                "result": end.result,
                "winner": end.winner,
                "termination": end.termination,
                "fault": end.fault,
                "rated": end.rated,
                "plies": plies,
                "duration_s": duration,
                "reason": end.reason,
            },
        )
