"""The immutable records the store hands out; callers never see ORM objects."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class BotRecord:
    """A registered bot. ``active`` is False once the bot has been removed."""

    name: str
    created_at: datetime
    active: bool


@dataclass(frozen=True, slots=True)
class Arrival:
    """A bot another node is sending to this one (``arena.cluster``), as the pairing pass
    that paired it read it: enough to start its match and check its ``hello`` here without
    reading the database again (``Store.expect_login``)."""

    bot: str
    bot_id: int
    token_hash: str
    created_at: datetime
    ratings: dict[str, float]
    """Its rating per game it has one in."""


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One bot's rating before and after one rated match."""

    bot: str
    before: float
    after: float

    @property
    def delta(self) -> float:
        """How much the rating moved (positive for a gain)."""
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """One stored move: ``player`` is the seat (0 or 1) that played it; ``analysis`` the
    search its bot reported with it, as JSON (None when it sent none)."""

    ply: int
    player: int
    move: int
    think_ms: int
    rtt_ms: int
    analysis: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """A match without its moves, as listed by ``Store.list_matches``.

    ``status`` is ``live``, ``finished`` or ``aborted``; ``winner`` is the
    seat that won (0 or 1) or None for a draw or no result; ``result`` is
    ``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` when aborted.
    """

    id: str
    game: str
    players: tuple[str, str]
    move_ms: int
    bank_ms: int
    rated: bool
    status: str
    winner: int | None
    result: str | None
    termination: str | None
    fault: str | None
    reason: str
    started_at: datetime
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class MatchRecord(MatchSummary):
    """A match with its moves in ply order and the rating changes it caused."""

    moves: list[MoveRecord]
    rating_changes: list[RatingChange]
    opening: tuple[int, ...] = ()
    """The moves the match started from (also its first ``moves``, with no think time)."""
    tournament_id: int | None = None
    """The tournament it was played for, if any."""
    tournament_pair: int | None = None
    """Its game pair in that tournament."""


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One line of a game's leaderboard; ``rank`` starts at 1."""

    rank: int
    bot: str
    rating: float
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True, slots=True)
class RatingHistoryEntry:
    """A bot's rating before and after one rated match, at the time it finished."""

    match_id: str
    before: float
    after: float
    at: datetime
