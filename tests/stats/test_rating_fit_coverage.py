"""The leaderboard fit's 95% intervals hold the truth in connected pools, at every sample size.

Pools of 8 bots spread uniformly over 800 Elo play random pairings (the draw
model of ``arena.stats.simulation``); each bot's interval should hold its true
rating relative to the pool's mean — what the fit's rating is relative to.
Pools that the games leave split into groups are skipped: their ratings are
not comparable (they are shown apart).
"""

from __future__ import annotations

import numpy as np
import pytest

from arena.ratings import DEFAULT_RATING
from arena.stats.rating_fit import fit_ratings
from arena.stats.simulation import DRAW_SHARE, simulate_pair_results

BOTS = 8
SPREAD = 800.0
POOLS = 60


def coverage(games_per_bot: int, seed: int, shrink: float = 1.0) -> tuple[float, int]:
    """Share of bots whose interval (times ``shrink``) held the truth, and the pools counted."""
    rng = np.random.default_rng(seed)
    names = [f"bot{i}" for i in range(BOTS)]
    held = counted = 0
    for _ in range(POOLS):
        truth = rng.uniform(0.0, SPREAD, BOTS)
        cells = simulate_pair_results(truth, BOTS * games_per_bot // 2, rng, DRAW_SHARE)
        fit = fit_ratings(cells, bots=names)
        if fit.groups > 1:
            continue
        counted += 1
        for name, true_rating in zip(names, truth, strict=True):
            line = fit.get(name)
            error = (line.rating - DEFAULT_RATING) - (true_rating - truth.mean())
            held += abs(error) <= shrink * line.ci95
    return held / (counted * BOTS), counted


@pytest.mark.parametrize("games_per_bot", [4, 16, 50, 200])
def test_fitted_intervals_hold_the_truth_relative_to_the_pool_mean(games_per_bot: int) -> None:
    share, pools = coverage(games_per_bot, seed=games_per_bot)
    assert pools >= POOLS * 0.8
    assert share >= 0.94


def test_the_check_would_catch_intervals_one_standard_error_wide() -> None:
    share, _ = coverage(50, seed=50, shrink=1 / 1.96)
    assert share < 0.85
