"""Leaderboard ratings: one Bradley–Terry fit over all rated games of a game, with intervals.

The server aggregates its games per ordered pair of bots (``PairResult``: how
often ``bot`` won, drew and lost against ``opponent``), so the fit's input is at
most ``n·(n − 1)`` cells however many games were played, and calls
``fit_ratings``. Ratings are on the Elo scale, centred on a pool mean of 1500
or pinned to a named anchor bot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from arena.ratings import DEFAULT_RATING, ELO_PER_LOG_ODDS
from arena.stats.bradley_terry import IntArray, PairGames, Strengths, fit_strengths
from arena.stats.counts import FloatArray
from arena.stats.elo import Z95
from arena.stats.ranks import MAX_CI95, MIN_GAMES, is_provisional, rank_ranges

PRIOR_SD = 1000.0
"""Spread (Elo) of the Gaussian prior on each rating: weak, but it keeps every rating finite."""

Weights = Literal["equal", "games"]
"""Without an anchor, the mean fixed at ``anchor_rating``: of the main group's bots
(``"equal"``), or of their games (``"games"``: each bot weighs by its games played)."""


class PairResult(NamedTuple):
    """Rated games between two bots, counted from ``bot``'s side."""

    bot: str
    opponent: str
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class BotRating:
    """One bot's line on the leaderboard."""

    name: str
    rating: float
    """Fitted rating on the Elo scale."""
    ci95: float
    """Half-width of the 95% interval of ``rating`` (0 for the anchor bot)."""
    games: int
    wins: int
    draws: int
    losses: int
    rank: int
    """Position by rating, 1 = best."""
    rank_low: int
    """Best rank the bot could honestly hold (see ``rank_ranges``)."""
    rank_high: int
    """Worst rank the bot could honestly hold."""
    provisional: bool
    """Too few games or too wide an interval to take the rating at face value
    (``arena.stats.ranks.PROVISIONAL_HINT``)."""
    group: int
    """Which group of bots connected by games it belongs to (0 = the largest)."""


@dataclass(frozen=True, eq=False)
class RatingFit:
    """The fitted leaderboard of one game."""

    ratings: tuple[BotRating, ...]
    """Best first."""
    covariance: FloatArray
    """Covariance (Elo²) of the ratings, rows and columns in the order of ``ratings``."""
    iterations: int
    """Newton steps the fit took."""
    groups: int
    """How many separate groups of bots the games connect (1 when all are comparable)."""
    anchor: str | None
    """The bot pinned to the anchor rating, or ``None`` when the pool mean is."""
    anchor_rating: float = DEFAULT_RATING
    """The anchor bot's rating, or the mean rating of the main group without an anchor."""
    prior_sd: float = PRIOR_SD
    """The prior's spread (Elo) the fit used."""
    weights: Weights = "equal"
    """How the main group's bots weigh in the mean that ``anchor_rating`` fixes (no anchor)."""

    def only(self, names: Iterable[str]) -> RatingFit:
        """The same fit shown for a subset of bots (say, the active ones), ranked among themselves.

        Ratings and intervals are unchanged: the other bots' games still inform
        them. Only ``rank``, ``rank_low`` and ``rank_high`` are recomputed (within each group).
        """
        wanted = set(names)
        keep = [i for i, line in enumerate(self.ratings) if line.name in wanted]
        lines, covariance = _ranked(
            [self.ratings[i] for i in keep], self.covariance[np.ix_(keep, keep)]
        )
        return replace(self, ratings=lines, covariance=covariance)

    def by_group(self) -> list[tuple[BotRating, ...]]:
        """The ratings split into their groups (main group first), each best first."""
        split: dict[int, list[BotRating]] = {}
        for line in self.ratings:
            split.setdefault(line.group, []).append(line)
        return [tuple(split[label]) for label in sorted(split)]

    @cached_property
    def _by_name(self) -> dict[str, BotRating]:
        # Built once per fit: the server looks a bot up at every match start and result,
        # and a scan of a 1,000-bot board was a measurable share of a move's CPU.
        return {rating.name: rating for rating in self.ratings}

    def get(self, name: str) -> BotRating:
        """The rating of bot ``name``; ``KeyError`` if it is not in the fit."""
        return self._by_name[name]


def tally_pairs(games: Iterable[tuple[str, str, float]]) -> list[PairResult]:
    """``PairResult`` cells from ``(bot, opponent, bot's score)`` per game (score 1, ½ or 0)."""
    cells: dict[tuple[str, str], list[int]] = {}
    for bot, opponent, score in games:
        outcome = {1.0: 0, 0.5: 1, 0.0: 2}.get(float(score))
        if outcome is None:
            raise ValueError(f"a game score must be 1, 0.5 or 0, got {score!r}")
        cells.setdefault((bot, opponent), [0, 0, 0])[outcome] += 1
    return [PairResult(bot, opponent, *wdl) for (bot, opponent), wdl in cells.items()]


def fit_ratings(
    results: Iterable[PairResult],
    *,
    bots: Iterable[str] = (),
    anchor: str | None = None,
    anchor_rating: float = DEFAULT_RATING,
    prior_sd: float = PRIOR_SD,
    weights: Weights = "equal",
    min_games: int = MIN_GAMES,
    max_ci95: float = MAX_CI95,
) -> RatingFit:
    """Fit every bot's rating to all ``results`` at once (Bradley–Terry, draws = ½).

    Cells for both orders of a pair may be given; they are added up. ``bots``
    names bots to include even without games (they get the anchor rating with
    a prior-wide interval). With ``anchor`` the named bot is pinned to
    ``anchor_rating`` and every interval is relative to it; without, the mean
    rating of each group of bots connected by games is ``anchor_rating`` and
    intervals are relative to that mean (with an anchor, other groups than
    the anchor's still are). Groups are ranked apart (``BotRating.group``,
    ``RatingFit.by_group``): no games say how one group compares with another.
    Bots without games form one last group, at the main group's level with
    prior-wide intervals.

    ``weights="games"`` makes that mean the games-weighted one: a bot's share
    is its share of the group's games, so a newcomer with a handful of games
    neither moves the level nor widens everyone's interval (with equal
    weights, its wide interval adds ``1/n`` of itself to every bot's).
    """
    if weights not in ("equal", "games"):
        raise ValueError(f"weights must be 'equal' or 'games', got {weights!r}")
    if not prior_sd > 0.0:
        raise ValueError(f"prior_sd must be positive, got {prior_sd}")
    cells = list(results)
    names = sorted({*bots, *(c.bot for c in cells), *(c.opponent for c in cells)})
    if anchor is not None and anchor not in names:
        raise ValueError(f"the anchor bot {anchor!r} is not among the rated bots")
    pairs, wdl = tally_games(cells, names)
    if not names:
        return RatingFit(
            ratings=(),
            covariance=np.zeros((0, 0)),
            iterations=0,
            groups=0,
            anchor=None,
            anchor_rating=anchor_rating,
            prior_sd=prior_sd,
            weights=weights,
        )
    # One BLAS thread: these matrices are small, and a multi-threaded OpenBLAS
    # on a busy machine spins on contended cores (a 100×100 solve measured
    # 45 ms instead of 0.04 ms with another process on the second core).
    with threadpool_limits(limits=1, user_api="blas"):
        strengths = fit_strengths(pairs, precision=(ELO_PER_LOG_ODDS / prior_sd) ** 2)
        rating, covariance = report_ratings(strengths, pairs, names, anchor, anchor_rating, weights)
    ci95 = Z95 * np.sqrt(np.maximum(np.diag(covariance), 0.0))
    # Each unordered pair that met appears once: a bot's degree is its count of opponents.
    opponents = np.bincount(pairs.first, minlength=pairs.size) + np.bincount(
        pairs.second, minlength=pairs.size
    )

    group = display_groups(strengths.component, wdl.sum(axis=1))
    unranked = [
        BotRating(
            name=names[i],
            rating=float(rating[i]),
            ci95=float(ci95[i]),
            games=int(wdl[i].sum()),
            wins=int(wdl[i, 0]),
            draws=int(wdl[i, 1]),
            losses=int(wdl[i, 2]),
            rank=0,
            rank_low=0,
            rank_high=0,
            provisional=is_provisional(
                int(wdl[i].sum()), float(ci95[i]), min_games, max_ci95, int(opponents[i])
            ),
            group=int(group[i]),
        )
        for i in range(pairs.size)
    ]
    lines, covariance = _ranked(unranked, covariance)
    return RatingFit(
        ratings=lines,
        covariance=covariance,
        iterations=strengths.iterations,
        groups=int(group.max(initial=-1)) + 1,
        anchor=anchor,
        anchor_rating=anchor_rating,
        prior_sd=prior_sd,
        weights=weights,
    )


def report_ratings(
    strengths: Strengths,
    pairs: PairGames,
    names: list[str],
    anchor: str | None,
    anchor_rating: float,
    weights: Weights,
) -> tuple[FloatArray, FloatArray]:
    """Ratings (Elo) and their covariance (Elo²) relative to the reference, in ``names`` order.

    Each group of bots that games connect is referred to its own mean (equal
    or games-weighted), the anchor's group to the anchor bot: ratings of
    different groups are never compared, so a stray group neither widens the
    main group's intervals nor gets intervals as wide as the prior. Bots
    without games are referred to the main group. The reference is linear in
    θ, so with the contrast matrix A, rating = anchor_rating + scale·A·θ and
    its covariance is scale²·A·C·Aᵀ.
    """
    size = len(names)
    share: FloatArray = _sum_games(pairs) if weights == "games" else np.ones(size)
    if anchor is not None:
        pinned = names.index(anchor)
        default = np.zeros(size)
        default[pinned] = 1.0
    else:
        pinned = -1
        main = strengths.component == 0
        if np.count_nonzero(main) < 2:  # no games at all: no group stands out
            main[:] = True
        default = _mean_of(main, share)
    # ``reference_of[i]`` says what bot i's rating is relative to: its own group's mean
    # (or the anchor, in the anchor's group), a row of ``references``. A bot without games
    # has no group to speak of: it sits at the main group's level with a prior-wide interval.
    references = [default]
    reference_of = np.zeros(size, dtype=np.intp)
    for label in range(int(strengths.component.max(initial=-1)) + 1):
        members = strengths.component == label
        if np.count_nonzero(members) < 2 or (pinned >= 0 and members[pinned]):
            continue
        reference_of[members] = len(references)
        references.append(_mean_of(members, share))
    weights_of = np.array(references)
    rating = anchor_rating + ELO_PER_LOG_ODDS * (
        strengths.theta - (weights_of @ strengths.theta)[reference_of]
    )
    covariance = ELO_PER_LOG_ODDS**2 * strengths.reference_covariance(weights_of, reference_of)
    return rating, covariance


def _mean_of(members: npt.NDArray[np.bool_], share: FloatArray) -> FloatArray:
    """The weights of the (``share``-weighted) mean over ``members``; equal without games."""
    weight = np.where(members, share, 0.0)
    if not weight.sum() > 0.0:
        weight = members.astype(np.float64)
    return np.asarray(weight / weight.sum(), np.float64)


def display_groups(component: IntArray, games: IntArray) -> IntArray:
    """Group label per bot for showing: the groups games connect (0 = the largest), then one
    group of every bot without games (each is a group of one to the fit)."""
    group = component.copy()
    gameless = games == 0
    group[gameless] = int(component[~gameless].max(initial=-1)) + 1
    return group


def _ranked(
    lines: list[BotRating], covariance: FloatArray
) -> tuple[tuple[BotRating, ...], FloatArray]:
    """``lines`` ordered by group, then best first, ranked within their group (rank ranges
    too): ratings of bots no games connect are never compared. ``covariance`` reordered."""
    order = sorted(
        range(len(lines)), key=lambda i: (lines[i].group, -lines[i].rating, lines[i].name)
    )
    covariance = covariance[np.ix_(order, order)]
    ranked: list[BotRating] = []
    start = 0
    while start < len(order):
        label = lines[order[start]].group
        end = start
        while end < len(order) and lines[order[end]].group == label:
            end += 1
        block = covariance[start:end, start:end]
        ranges = rank_ranges([lines[i].rating for i in order[start:end]], block)
        for position, (i, (low, high)) in enumerate(zip(order[start:end], ranges, strict=True)):
            ranked.append(replace(lines[i], rank=position + 1, rank_low=low, rank_high=high))
        start = end
    return tuple(ranked), covariance


def _sum_games(pairs: PairGames) -> FloatArray:
    """Games played per bot."""
    size = pairs.size
    played = np.bincount(pairs.first, pairs.games, size) + np.bincount(
        pairs.second, pairs.games, size
    )
    return np.asarray(played, np.float64)


def tally_games(cells: list[PairResult], names: list[str]) -> tuple[PairGames, IntArray]:
    """The fit's input (one entry per unordered pair that met) and W/D/L per bot."""
    index = {name: i for i, name in enumerate(names)}
    size = len(names)
    rows = np.array(
        [(index[bot], index[opponent], w, d, lost) for bot, opponent, w, d, lost in cells],
        dtype=np.intp,
    ).reshape(-1, 5)
    bad = (rows[:, 0] == rows[:, 1]) | np.any(rows[:, 2:] < 0, axis=1)
    if bad.any():
        raise ValueError(f"not a valid pair result: {cells[int(np.argmax(bad))]}")
    i, j, wins, draws, losses = rows.T
    wdl = np.zeros((size, 3), dtype=np.intp)
    np.add.at(wdl, i, rows[:, 2:])
    np.add.at(wdl, j, rows[:, [4, 3, 2]])
    score = np.zeros((size, size))
    np.add.at(score, (i, j), wins + 0.5 * draws)
    np.add.at(score, (j, i), losses + 0.5 * draws)
    games = np.zeros((size, size))
    np.add.at(games, (i, j), wins + draws + losses)
    games += games.T
    first, second = np.nonzero(np.triu(games) > 0)
    return PairGames(size, first, second, games[first, second], score[first, second]), wdl
