"""One game's fitted leaderboard, and what is read off it: entries and head-to-head records.

``build_board`` is the CPU part (one ``fit_ratings``), run off the event loop
by ``Leaderboards`` (in the server's fit process, ``fit_board``, or in a
worker thread: ``arena.leaderboard.fit_process``); everything else here is
cheap arithmetic on a built ``Board``. The command line builds boards from
the database with the same function, so ``arena leaderboard`` and the server
agree to the digit.

``arena.stats`` (numpy, scipy: about half a second) is imported where it is
first used, not with this module: every ``arena`` command imports the server,
and most never build a board. The first build pays it, in the fit process
(or the worker thread).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from arena.store import LeaderboardRow
from arena.store.queries import PairCell
from protocol.messages import LeaderboardEntry

if TYPE_CHECKING:
    from arena.stats import BotRating, EloInterval, PairResult, RatingFit
    from arena.stats.rating_fit import Weights

DECIMALS = 1
"""Ratings, intervals and Elo go out rounded to a tenth of a point."""

WEIGHTS: Weights = "games"
"""The board's level: the games-weighted mean rating of the main group is 1500, so a
newcomer with a few games neither moves everyone nor widens everyone's interval."""

UNRATED = 1500.0
"""The rating of a bot not on a board (no rated game yet): the level of the main group."""

Cell = tuple[str, str, int, int, int]
"""A ``PairCell`` as a plain tuple: ``(bot, opponent, wins, draws, losses)``."""


@dataclass(frozen=True, eq=False)
class Board:
    """A game's leaderboard as of one read of the database."""

    game: str
    fit: RatingFit
    """The fit over every rated game, removed bots included (their games inform the others)."""
    shown: RatingFit
    """``fit`` restricted to the bots on the board (active, rated), ranked among themselves."""
    cells: tuple[PairResult, ...]
    """The rated games per ordered pair of seats the fit was made from."""
    version: int
    """Counts the boards built by one ``Leaderboards``; a new number means new numbers."""

    def entries(self, is_online: Callable[[str], bool]) -> list[LeaderboardEntry]:
        """The wire rows group by group (main group first), each group best first and ranked
        on its own (``online`` asked now, the rest as of the read)."""
        return [_entry(line, is_online(line.name)) for line in self.shown.ratings]

    def entry(self, bot: str, is_online: Callable[[str], bool]) -> LeaderboardEntry | None:
        """``bot``'s row of ``entries`` (None when it is not on the board), built alone."""
        try:
            line = self.shown.get(bot)
        except KeyError:
            return None
        return _entry(line, is_online(bot))

    def groups(self) -> list[dict[str, Any]]:
        """The board's groups of bots connected by games, main group first: each group's
        bots (best first) and the line that says why it stands apart (None for the main)."""
        return [
            {
                "group": lines[0].group,
                "bots": [line.name for line in lines],
                "note": group_note(lines[0].group, lines[0].games),
            }
            for lines in self.shown.by_group()
        ]

    def record(self, bot: str, opponent: str) -> tuple[int, int, int]:
        """``(wins, draws, losses)`` of ``bot`` against ``opponent`` in rated games."""
        wins = draws = losses = 0
        for cell in self.cells:
            if cell.bot == bot and cell.opponent == opponent:
                wins, draws, losses = wins + cell.wins, draws + cell.draws, losses + cell.losses
            elif cell.bot == opponent and cell.opponent == bot:
                wins, draws, losses = wins + cell.losses, draws + cell.draws, losses + cell.wins
        return wins, draws, losses

    def opponents(self, bot: str) -> dict[str, tuple[int, int, int]]:
        """``bot``'s ``(wins, draws, losses)`` per opponent it has met."""
        found: dict[str, list[int]] = {}
        for cell in self.cells:
            if cell.bot == bot:
                tally = found.setdefault(cell.opponent, [0, 0, 0])
                tally[0] += cell.wins
                tally[1] += cell.draws
                tally[2] += cell.losses
            elif cell.opponent == bot:
                tally = found.setdefault(cell.bot, [0, 0, 0])
                tally[0] += cell.losses
                tally[1] += cell.draws
                tally[2] += cell.wins
        return {name: (w, d, lost) for name, (w, d, lost) in found.items()}

    def difference(self, a: str, b: str) -> FittedDifference | None:
        """The fitted rating difference ``a − b`` with its interval; None unless both are rated."""
        names = [line.name for line in self.fit.ratings]
        if a not in names or b not in names:
            return None
        from arena.stats.elo import Z95

        i, j = names.index(a), names.index(b)
        covariance = self.fit.covariance
        variance = max(float(covariance[i, i] + covariance[j, j] - 2.0 * covariance[i, j]), 0.0)
        lead = self.fit.ratings[i].rating - self.fit.ratings[j].rating
        spread = math.sqrt(variance)
        los = 0.5 if spread == 0.0 else NormalDist().cdf(lead / spread)
        return FittedDifference(lead, Z95 * spread, los)


@dataclass(frozen=True, slots=True)
class FittedDifference:
    """What the whole fit says about ``a − b``: shared opponents count too."""

    difference: float
    ci95: float
    los: float
    """Probability that ``a`` is the stronger, from the fit's normal approximation."""


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """The rated games between two bots in one game, from ``a``'s side."""

    game: str
    a: str
    b: str
    wins: int
    draws: int
    losses: int
    interval: EloInterval | None
    """``elo_interval((losses, draws, wins))``; None before their first game."""
    fitted: FittedDifference | None

    def to_json(self) -> dict[str, Any]:
        """The ``/api/h2h`` body."""
        games = self.wins + self.draws + self.losses
        return {
            "game": self.game,
            "a": self.a,
            "b": self.b,
            "games": games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": None if games == 0 else (self.wins + 0.5 * self.draws) / games,
            "elo_interval": None if self.interval is None else self.interval.to_json(),
            "fitted": None
            if self.fitted is None
            else {
                "difference": round(self.fitted.difference, DECIMALS),
                "ci95": round(self.fitted.ci95, DECIMALS),
                "los": self.fitted.los,
            },
        }


def _entry(line: BotRating, online: bool) -> LeaderboardEntry:
    """A board line as its wire row, rounded to ``DECIMALS``."""
    return LeaderboardEntry(
        rank=line.rank,
        bot=line.name,
        rating=round(line.rating, DECIMALS),
        games=line.games,
        wins=line.wins,
        draws=line.draws,
        losses=line.losses,
        online=online,
        ci95=round(line.ci95, DECIMALS),
        provisional=line.provisional,
        rank_low=line.rank_low,
        rank_high=line.rank_high,
        group=line.group,
    )


def group_note(group: int, games: int) -> str | None:
    """Why group ``group`` of a board is its own table (``games``: one member's rated games;
    a group without games is the bots that have none); None for the main group (0)."""
    if games == 0:
        return "These bots have no rated games yet."
    if group == 0:
        return None
    return (
        "These bots have not played anyone in the main group: they are ranked among "
        "themselves, their ratings relative to their own average."
    )


def head_to_head(board: Board, a: str, b: str) -> HeadToHead:
    """``a`` against ``b`` on ``board``: W/D/L, ``elo_interval`` and the fitted difference."""
    from arena.stats import elo_interval

    wins, draws, losses = board.record(a, b)
    interval = elo_interval((losses, draws, wins)) if wins + draws + losses else None
    return HeadToHead(board.game, a, b, wins, draws, losses, interval, board.difference(a, b))


def build_board(
    game: str, rows: Sequence[LeaderboardRow], cells: Sequence[PairCell], version: int = 0
) -> Board:
    """Fit ``cells`` and show the bots of ``rows`` (the store's leaderboard rows).

    Every bot on the board is in the fit, even one whose games the cells do
    not hold yet (another read may be a moment newer): it gets a prior-wide,
    provisional rating rather than a missing line.
    """
    return fit_board(game, [row.bot for row in rows], cells, version)


def fit_board(game: str, names: Sequence[str], cells: Iterable[Cell], version: int = 0) -> Board:
    """``build_board`` from the shown bots' names and plain cells: what the fit process is
    sent (pickling the store's records costs the server several times as much)."""
    from arena.stats import PairResult, fit_ratings

    results = tuple(PairResult(*cell) for cell in cells)
    fit = fit_ratings(results, bots=names, weights=WEIGHTS)
    return Board(
        game=game,
        fit=fit,
        shown=fit.only(names),
        cells=results,
        version=version,
    )
