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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from arena.store import LeaderboardRow
from arena.store.queries import PairCell
from protocol.messages import LeaderboardEntry

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from arena.stats import BotRating, EloInterval, PairResult, RatingFit
    from arena.stats.rating_fit import Weights

    Int32Array = npt.NDArray[np.int32]

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
class PairCells:
    """A board's rated games per ordered pair of seats, packed: each bot's name once, then
    per cell two indices into ``names`` and three counts, in numpy arrays.

    Why packed: the fit process sends the board to the server, and a long-running
    arena's board holds a cell per pair of bots that have met (about 100,000 for 400
    bots). As objects, unpickling them held the server's event loop for a tenth of a
    second per refit; as arrays, they are three buffers. Iterating gives the cells as
    ``PairResult``s, in the order they were packed.
    """

    names: tuple[str, ...]
    seats: Int32Array
    """Shape ``(n, 2)``: the bot's and the opponent's index in ``names``."""
    counts: Int32Array
    """Shape ``(n, 3)``: the bot's wins, draws and losses against the opponent."""

    @classmethod
    def pack(cls, cells: Iterable[Cell]) -> PairCells:
        """The cells packed, in the order given."""
        import numpy as np

        index: dict[str, int] = {}
        seats: list[int] = []
        counts: list[int] = []
        for bot, opponent, wins, draws, losses in cells:
            seats += (index.setdefault(bot, len(index)), index.setdefault(opponent, len(index)))
            counts += (wins, draws, losses)
        return cls(
            tuple(index),
            # 32 bits: half the bytes the server receives per board, and ample for a
            # count of games between two bots.
            np.array(seats, dtype=np.int32).reshape(-1, 2),
            np.array(counts, dtype=np.int32).reshape(-1, 3),
        )

    def __len__(self) -> int:
        return len(self.seats)

    def __iter__(self) -> Iterator[PairResult]:
        from arena.stats import PairResult

        names = self.names
        for (i, j), (wins, draws, losses) in zip(
            self.seats.tolist(), self.counts.tolist(), strict=True
        ):
            yield PairResult(names[i], names[j], wins, draws, losses)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PairCells):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside

    def digest(self) -> bytes:
        """A fingerprint of the cells (names, pairs, counts, in order): equal cells, equal
        digests, so a read that found nothing new is known without sending the cells."""
        import hashlib

        hasher = hashlib.blake2b(digest_size=16)
        hasher.update("\0".join(self.names).encode())
        hasher.update(self.seats.tobytes())
        hasher.update(self.counts.tobytes())
        return hasher.digest()

    def record(self, bot: str, opponent: str) -> tuple[int, int, int]:
        """``(wins, draws, losses)`` of ``bot`` against ``opponent``, both seat orders."""
        if bot not in self.names or opponent not in self.names:
            return 0, 0, 0
        i, j = self.names.index(bot), self.names.index(opponent)
        seats, counts = self.seats, self.counts
        ahead = counts[(seats[:, 0] == i) & (seats[:, 1] == j)].sum(axis=0)
        behind = counts[(seats[:, 0] == j) & (seats[:, 1] == i)].sum(axis=0)
        return (
            int(ahead[0] + behind[2]),
            int(ahead[1] + behind[1]),
            int(ahead[2] + behind[0]),
        )

    def opponents(self, bot: str) -> dict[str, tuple[int, int, int]]:
        """``bot``'s ``(wins, draws, losses)`` per opponent it has met, first met first."""
        if bot not in self.names:
            return {}
        me = self.names.index(bot)
        mine = ((self.seats[:, 0] == me) | (self.seats[:, 1] == me)).nonzero()[0]
        found: dict[str, list[int]] = {}
        for (i, j), (wins, draws, losses) in zip(
            self.seats[mine].tolist(), self.counts[mine].tolist(), strict=True
        ):
            if i == me:
                tally = found.setdefault(self.names[j], [0, 0, 0])
                tally[0] += wins
                tally[1] += draws
                tally[2] += losses
            elif j == me:
                tally = found.setdefault(self.names[i], [0, 0, 0])
                tally[0] += losses
                tally[1] += draws
                tally[2] += wins
        return {name: (w, d, lost) for name, (w, d, lost) in found.items()}


@dataclass(frozen=True, eq=False)
class Board:
    """A game's leaderboard as of one read of the database."""

    game: str
    fit: RatingFit
    """The fit over every rated game, removed bots included (their games inform the others)."""
    shown: RatingFit
    """``fit`` restricted to the bots on the board (active, rated), ranked among themselves."""
    cells: PairCells
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
        return self.cells.record(bot, opponent)

    def opponents(self, bot: str) -> dict[str, tuple[int, int, int]]:
        """``bot``'s ``(wins, draws, losses)`` per opponent it has met."""
        return self.cells.opponents(bot)

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
    fitted = fit_if_new(game, names, cells, version, None)
    assert fitted is not None
    return fitted[0]


def fit_if_new(
    game: str, names: Sequence[str], cells: Iterable[Cell], version: int, known: bytes | None
) -> tuple[Board, bytes] | None:
    """``fit_board`` and the inputs' digest, or None when the digest is ``known`` (the
    board fitted from these same inputs is the one the caller holds)."""
    from arena.stats import PairResult, fit_ratings

    results = tuple(PairResult(*cell) for cell in cells)
    packed = PairCells.pack(results)
    digest = _inputs_digest(names, packed)
    if digest == known:
        return None
    fit = fit_ratings(results, bots=names, weights=WEIGHTS)
    board = Board(game=game, fit=fit, shown=fit.only(names), cells=packed, version=version)
    return board, digest


def _inputs_digest(names: Sequence[str], cells: PairCells) -> bytes:
    import hashlib

    return hashlib.blake2b("\0".join(names).encode() + cells.digest(), digest_size=16).digest()
