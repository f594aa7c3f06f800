"""The progress line of ``arena analyse`` on standard error: games, positions/s, ETA.

On a terminal the line is redrawn in place a few times a second; otherwise
(a log file, a pipe) a full line is written every ``LOG_INTERVAL_S`` seconds,
so a long run still shows it is alive without flooding the log.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

BAR_WIDTH = 24
TTY_INTERVAL_S = 0.2
LOG_INTERVAL_S = 10.0


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h07m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class Progress:
    """Counts games and solved positions and shows them on ``stream``."""

    def __init__(
        self,
        total_games: int,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total_games
        self.games = 0
        self.positions = 0
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._tty = stream.isatty()
        self._interval = TTY_INTERVAL_S if self._tty else LOG_INTERVAL_S
        self._shown = self._start

    @property
    def elapsed_s(self) -> float:
        """Seconds since the run started."""
        return self._clock() - self._start

    def solved(self, positions: int = 1) -> None:
        """Count positions the solver finished."""
        self.positions += positions
        self._maybe_show()

    def game_done(self) -> None:
        """Count a game whose analysis is committed."""
        self.games += 1
        self._maybe_show()

    def line(self) -> str:
        """The progress line as it stands."""
        elapsed = self.elapsed_s
        rate = self.positions / elapsed if elapsed > 0 else 0.0
        filled = BAR_WIDTH * self.games // self.total if self.total else BAR_WIDTH
        eta = "--"
        if self.games and self.games < self.total:
            eta = format_duration(elapsed / self.games * (self.total - self.games))
        elif self.games >= self.total:
            eta = "0s"
        return (
            f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.games}/{self.total} games"
            f"  {self.positions} positions  {rate:.0f}/s  ETA {eta}"
        )

    def close(self) -> None:
        """Show the final state and end the line."""
        self._show()
        if self._tty:
            self._stream.write("\n")
            self._stream.flush()

    def _maybe_show(self) -> None:
        if self._clock() - self._shown >= self._interval:
            self._show()

    def _show(self) -> None:
        self._shown = self._clock()
        if self._tty:
            self._stream.write("\r\x1b[2K" + self.line())
        else:
            self._stream.write(self.line() + "\n")
        self._stream.flush()
