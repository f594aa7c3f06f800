"""What a bot client run is told (``ClientConfig``, ``Backoff``) and what it reports
(``MatchReport``, ``ClientSummary``)."""

from __future__ import annotations

import random
import re
import secrets
from dataclasses import dataclass, field

from bots.budget import MARGIN_MS
from protocol.messages import PROTOCOL_VERSION, Hello, MatchEnd, RatingReport, TimeControl
from protocol.messages.values import BOT_NAME_PATTERN

DEFAULT_TIME_CONTROL = TimeControl(move_ms=1000, bank_ms=0)
"""What a bot seeks unless told otherwise: one second per move, no bank."""

MAX_MATCHES = 64
"""The protocol's limit on ``hello.max_matches``."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """How a bot connects and what it asks to play.

    ``games=None`` plays forever; ``challenge`` names a bot to challenge
    instead of seeking. ``fallback_urls`` are other nodes of the same arena,
    tried in turn after ``url`` when a connection fails or drops. ``ca_file``
    trusts only the CAs in that PEM file for a ``wss://`` URL (default: the
    system's); ``insecure`` allows a plain ``ws://`` URL to a host other than
    this machine. ``margin_ms`` is the fixed part of each move's safety
    margin (``bots.budget``). The token is left out of ``repr`` so it never
    reaches a log.
    """

    url: str
    name: str
    token: str = field(repr=False)
    game: str
    time_control: TimeControl = DEFAULT_TIME_CONTROL
    games: int | None = None
    max_matches: int = 1
    accept_challenges: bool = True
    guests: bool = True
    """Accept challenges from guests too (people playing from the web viewer; unrated),
    in ``game``: the hello says so. Needs ``accept_challenges``."""
    challenge: str | None = None
    seek: bool = True
    """False: never seek; play only the challenges accepted (a tournament's bots)."""
    worker: bool = False
    """One of several connections serving this bot at once, on any machines, each with
    its own ``max_matches`` (the hello's ``worker``): they join rather than replace
    each other."""
    worker_id: str = field(default_factory=lambda: secrets.token_hex(8))
    """Names this worker in every hello it sends, so that when it reconnects the server
    hands it the seats and matches of its old connection rather than keeping both."""
    retry_initial_s: float = 0.5
    retry_max_s: float = 10.0
    challenge_retry_s: float = 2.0
    open_timeout_s: float = 10.0
    ping_interval_s: float | None = 5.0
    ping_timeout_s: float | None = 20.0
    ca_file: str | None = None
    insecure: bool = False
    margin_ms: float = MARGIN_MS
    fallback_urls: tuple[str, ...] = ()

    @property
    def urls(self) -> tuple[str, ...]:
        """Every URL to try, in order: ``url``, then ``fallback_urls``."""
        return (self.url, *self.fallback_urls)

    def __post_init__(self) -> None:
        # Caught here: the server would only answer a bad hello by timing it out.
        if not 1 <= self.max_matches <= MAX_MATCHES:
            raise ValueError(f"max_matches must be within 1-{MAX_MATCHES}")
        if self.games is not None and self.games < 1:
            raise ValueError("games must be at least 1 (or None to play forever)")
        if not re.fullmatch(BOT_NAME_PATTERN, self.name):
            raise ValueError(f"a bot name must match {BOT_NAME_PATTERN}")
        if self.margin_ms < 0:
            raise ValueError("margin_ms must be at least 0")

    def hello(self) -> Hello:
        """The ``hello`` this bot opens every connection with."""
        accepts_guests = self.guests and self.accept_challenges
        return Hello(
            role="bot",
            version=PROTOCOL_VERSION,
            name=self.name,
            token=self.token,
            max_matches=self.max_matches,
            guests=(self.game,) if accepts_guests else (),
            worker=self.worker,
            worker_id=self.worker_id if self.worker else None,
        )


@dataclass(frozen=True, slots=True)
class MatchReport:
    """How one match ended, from this bot's side."""

    match_id: str
    game: str
    opponent: str | None
    you: int | None
    outcome: str
    """``win``, ``loss``, ``draw`` or ``aborted``."""
    end: MatchEnd

    def line(self, name: str) -> str:
        """The one log line for this result."""
        seat = {0: " as first", 1: " as second"}.get(self.you if self.you is not None else -1, "")
        text = (
            f"match {self.match_id} {self.game} vs {self.opponent or '?'}{seat}: "
            f"{self.outcome} {self.end.result} ({self.end.termination}) - {self.end.reason}"
        )
        if self.end.rated:
            text += "; rated (the rating follows the leaderboard's refit)"
        return text


def rating_line(report: RatingReport, name: str) -> str | None:
    """The log line for a ``rating`` report: ``name``'s leaderboard row after the refit."""
    for entry in report.entries:
        if entry.bot == name:
            interval = "" if entry.ci95 is None else f" ± {entry.ci95:.1f}"
            group = "" if not entry.group else f" in separate group {entry.group}"
            return (
                f"match {report.match_id} {report.game}: leaderboard rating {entry.rating:.1f}"
                f"{interval} (95%){' provisional' if entry.provisional else ''}, "
                f"rank {entry.rank}{group}, {entry.games} rated games"
            )
    return None


@dataclass(slots=True)
class ClientSummary:
    """What a run did: every finished match, connections opened, fallback moves, forfeits."""

    reports: list[MatchReport] = field(default_factory=list)
    connections: int = 0
    fallback_moves: int = 0
    """Moves the chooser failed to give (error, or an illegal move) replaced by a legal one."""
    forfeits: int = 0
    """Matches resigned because the strategy forfeited them (an engine fault)."""
    ratings: list[RatingReport] = field(default_factory=list)
    """The ``rating`` reports received: the leaderboard rows after each rated match's refit."""


class Backoff:
    """Reconnection delays: ``initial`` growing by ``factor`` up to ``maximum``, with jitter.

    Each delay is drawn from ``[base * (1 - jitter), base]`` so many bots
    dropped by one server restart do not all return at the same instant.
    """

    def __init__(
        self,
        initial: float = 0.5,
        maximum: float = 10.0,
        factor: float = 2.0,
        jitter: float = 0.5,
        rng: random.Random | None = None,
    ) -> None:
        self.initial, self.maximum, self.factor, self.jitter = initial, maximum, factor, jitter
        self._rng = rng or random.Random()
        self._base = initial

    def next_delay(self) -> float:
        """The delay before the next attempt; each call grows the next one."""
        base = min(self._base, self.maximum)
        self._base = min(self._base * self.factor, self.maximum)
        return base * (1.0 - self.jitter * self._rng.random())

    def reset(self) -> None:
        """Start again from ``initial`` (after a connection the server accepted)."""
        self._base = self.initial
