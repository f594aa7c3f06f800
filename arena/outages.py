"""How a background task logs an outage of what it depends on (database, broker).

Every task that retries a failing database or broker (the store's group
commit and heartbeat, the tournament scheduler, leaderboard refits, the
cluster's queue, sweeps and listening connection, the MQTT publisher and
feed) reports each attempt to its own ``Outage``, which logs:

- one line when the outage starts (the first failure's traceback only at
  DEBUG level),
- while it lasts, one summary line a minute (failed attempts since the last
  one), and
- one line when it ends (how long it lasted, how many attempts failed).

Never a line, let alone a traceback, per retry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

SUMMARY_EVERY_S = 60.0
"""How often an ongoing outage logs a summary line."""


def one_line(error: BaseException, limit: int = 200) -> str:
    """``Type: first line of the message``, cut to ``limit`` characters."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def duration(seconds: float) -> str:
    """``12.3 s`` below a minute, else ``2 min 5 s``."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes} min {secs} s" if minutes else f"{seconds:.1f} s"


class Outage:
    """One task's view of one dependency: ok, or failing since when and how often.

    ``failed`` and ``succeeded`` are called after each attempt; the three lines
    are ``started``, ``still`` and ``ended``, which a subclass may reword (the
    store's health does, to add what waits to be written).
    """

    def __init__(
        self,
        log: logging.Logger,
        what: str,
        *,
        describe: Callable[[BaseException], str] = one_line,
        level: int = logging.ERROR,
        summary_every_s: float = SUMMARY_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log = log
        self.what = what
        """What fails, as a subject: ``tournament scheduler reading the database``."""
        self._describe = describe
        self._level = level
        self._summary_every_s = summary_every_s
        self._clock = clock
        self.active = False
        """True from the first failed attempt until one succeeds."""
        self.reason = ""
        """The latest failure's short reason (empty when ok)."""
        self.attempts = 0
        """Failed attempts in this outage."""
        self._since = 0.0
        self._summary_at = 0.0
        self._attempts_since_summary = 0

    def failed(self, error: BaseException, source: str = "") -> None:
        """An attempt failed with ``error`` (``source``: which part of the task, if several)."""
        now = self._clock()
        self.reason = self._describe(error)
        if not self.active:
            self.active = True
            self._since = self._summary_at = now
            self.attempts = self._attempts_since_summary = 0
            self.started(error, source)
            self.log.debug("the first failure of the %s", source or self.what, exc_info=error)
        self.attempts += 1
        self._attempts_since_summary += 1
        if now - self._summary_at >= self._summary_every_s:
            self.still(duration(now - self._since), duration(now - self._summary_at))
            self._summary_at = now
            self._attempts_since_summary = 0

    def succeeded(self) -> bool:
        """An attempt succeeded; True when that ended an outage (its line is logged)."""
        if not self.active:
            return False
        self.active = False
        self.ended(duration(self._clock() - self._since))
        self.reason = ""
        return True

    @property
    def attempts_since_summary(self) -> int:
        """Failed attempts since the outage began or the last summary line."""
        return self._attempts_since_summary

    # The lines ------------------------------------------------------------------------

    def started(self, error: BaseException, source: str) -> None:
        """Log the outage's first line."""
        self.log.log(self._level, "%s failed: %s; retrying with backoff", self.what, self.reason)

    def still(self, lasted: str, window: str) -> None:
        """Log the summary line of a minute."""
        self.log.warning(
            "%s still failing after %s: %s; %d failed attempts in the last %s",
            self.what,
            lasted,
            self.reason,
            self._attempts_since_summary,
            window,
        )

    def ended(self, lasted: str) -> None:
        """Log the line that ends the outage."""
        self.log.warning(
            "%s works again after %s and %d failed attempts", self.what, lasted, self.attempts
        )
