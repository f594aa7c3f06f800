"""Synthetic games between players of known strength, for benchmarks and calibration checks.

One draw model serves every simulation: between players whose expected score
is ``s`` a game is drawn with probability ``draw_share · 4s(1 − s)`` (the
share itself between equals, fewer when lopsided) and won with ``s − draw/2``,
so the expected score is exactly the Elo one whatever the draw share.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.ratings import expected_score, score_to_elo
from arena.stats.counts import FloatArray
from arena.stats.interval import elo_interval
from arena.stats.rating_fit import PairResult

DRAW_SHARE = 0.2
"""Draws between equals in the interval's calibration simulation (``bench/elo_interval.py``)."""

FIRST_MOVE_EDGE = 100.0
"""Elo the first mover gains in the simulated colour-swapped pairs."""


def game_probabilities(elo: float | FloatArray, draw_share: float = DRAW_SHARE) -> FloatArray:
    """``(loss, draw, win)`` probabilities of a player ``elo`` stronger than its opponent.

    ``elo`` may be an array: the result then has one row per outcome.
    """
    if not 0.0 <= draw_share <= 1.0:
        raise ValueError(f"draw_share must be between 0 and 1, got {draw_share}")
    score = expected_score(elo, 0.0)  # type: ignore[arg-type]  # elementwise on arrays too
    draw = draw_share * 4.0 * score * (1.0 - score)
    return np.array([1.0 - score - draw / 2.0, draw, score - draw / 2.0])


def pair_probabilities(
    elo: float, edge: float = FIRST_MOVE_EDGE, draw_share: float = DRAW_SHARE
) -> FloatArray:
    """Pentanomial probabilities (pair scores 0, ½, 1, 1½, 2) of a colour-swapped game pair.

    The player moves first in one game (``elo + edge``) and second in the other
    (``elo − edge``); the two games are independent given the colours.
    """
    first = game_probabilities(elo + edge, draw_share)
    second = game_probabilities(elo - edge, draw_share)
    return np.convolve(first, second)


def sample_counts(
    probabilities: FloatArray, units: int, rng: np.random.Generator
) -> tuple[int, ...]:
    """One tally of ``units`` games (or pairs) drawn from outcome ``probabilities``, worst first."""
    return tuple(int(c) for c in rng.multinomial(units, probabilities))


def simulate_pair_results(
    true_ratings: FloatArray, games: int, rng: np.random.Generator, draw_share: float = 0.4
) -> list[PairResult]:
    """``games`` games between uniformly drawn ordered pairs, tallied as ``PairResult`` cells.

    Bot ``i`` is named ``bot{i}``. Each game's expected score follows the Elo
    curve of the rating difference; a share of the decisive mass goes to draws
    (``draw_share · 4s(1 − s)``, most draws between equals), so the expected
    score is exactly the Elo one whatever the draw share.
    """
    size = len(true_ratings)
    first = rng.integers(0, size, games)
    second = (first + rng.integers(1, size, games)) % size  # never the same bot
    _, draw, win = game_probabilities(true_ratings[first] - true_ratings[second], draw_share)
    roll = rng.random(games)
    outcome = np.where(roll < win, 0, np.where(roll < win + draw, 1, 2))  # 0 win, 1 draw, 2 loss
    cell = (first * size + second) * 3 + outcome
    tally = np.bincount(cell, minlength=size * size * 3).reshape(size, size, 3)
    return [
        PairResult(f"bot{i}", f"bot{j}", int(w), int(d), int(loss))
        for i, j in zip(*np.nonzero(tally.sum(axis=2)), strict=True)
        for w, d, loss in [tally[i, j]]
    ]


@dataclass(frozen=True, slots=True)
class CoverageCell:
    """One cell of the interval's calibration table: how often the interval held the truth."""

    elo: float
    """The true Elo difference (for pairs: before the first-move edge)."""
    units: int
    """Games, or colour-swapped pairs."""
    pentanomial: bool
    samples: int
    covered: float
    """Share of samples whose interval held the truth (0..1)."""
    too_few: float
    """Share of samples the channels would show as "too few games"."""


def true_score(elo: float, pentanomial: bool, edge: float = FIRST_MOVE_EDGE) -> float:
    """The expected score per game the simulated tallies have: the interval's true value.

    For colour-swapped pairs it is the mean of the two colours' expected scores,
    which sits slightly nearer ½ than ``expected_score(elo)``: that mean is what
    any tally of pairs measures.
    """
    if not pentanomial:
        return expected_score(elo, 0.0)
    return (expected_score(elo + edge, 0.0) + expected_score(elo - edge, 0.0)) / 2.0


def interval_coverage(
    elo: float,
    units: int,
    pentanomial: bool,
    samples: int,
    rng: np.random.Generator,
    method: Callable[[Sequence[int]], tuple[float, float]] | None = None,
) -> CoverageCell:
    """How often the 95% ``elo_interval`` (or ``method``'s ``(low, high)``) holds the truth.

    ``samples`` tallies of ``units`` games (or pairs) are drawn from the draw
    model; each distinct tally's interval is computed once.
    """
    probabilities = pair_probabilities(elo) if pentanomial else game_probabilities(elo)
    truth = score_to_elo(true_score(elo, pentanomial))
    tallies = Counter(sample_counts(probabilities, units, rng) for _ in range(samples))
    covered = few = 0
    for counts, times in tallies.items():
        if method is None:
            interval = elo_interval(counts)
            low, high, too_few = interval.low, interval.high, interval.too_few
        else:
            (low, high), too_few = method(counts), False
        covered += times * (low <= truth <= high)
        few += times * too_few
    return CoverageCell(elo, units, pentanomial, samples, covered / samples, few / samples)
