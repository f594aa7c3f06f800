"""Synthetic rated games between bots of known strength, for benchmarks and checks of the fit."""

from __future__ import annotations

import numpy as np

from arena.stats.counts import FloatArray
from arena.stats.rating_fit import ELO_PER_LOG_ODDS, PairResult


def simulate_pair_results(
    true_ratings: FloatArray, games: int, rng: np.random.Generator, draw_share: float = 0.4
) -> list[PairResult]:
    """``games`` games between uniformly drawn ordered pairs, tallied as ``PairResult`` cells.

    Bot ``i`` is named ``bot{i}``. Each game's expected score follows the Elo
    curve of the rating difference; a share of the decisive mass goes to draws
    (``draw_share · 4s(1 − s)``, most draws between equals), so the expected
    score is exactly the Elo one whatever the draw share.
    """
    if not 0.0 <= draw_share <= 1.0:
        raise ValueError(f"draw_share must be between 0 and 1, got {draw_share}")
    size = len(true_ratings)
    first = rng.integers(0, size, games)
    second = (first + rng.integers(1, size, games)) % size  # never the same bot
    margin = (true_ratings[first] - true_ratings[second]) / ELO_PER_LOG_ODDS
    expected = 1.0 / (1.0 + np.exp(-margin))
    draw = draw_share * 4.0 * expected * (1.0 - expected)
    win = expected - draw / 2.0
    roll = rng.random(games)
    outcome = np.where(roll < win, 0, np.where(roll < win + draw, 1, 2))  # 0 win, 1 draw, 2 loss
    cell = (first * size + second) * 3 + outcome
    tally = np.bincount(cell, minlength=size * size * 3).reshape(size, size, 3)
    return [
        PairResult(f"bot{i}", f"bot{j}", int(w), int(d), int(loss))
        for i, j in zip(*np.nonzero(tally.sum(axis=2)), strict=True)
        for w, d, loss in [tally[i, j]]
    ]
