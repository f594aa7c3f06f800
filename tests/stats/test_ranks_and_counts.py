"""Rank ranges, the provisional rule and the count-vector builders."""

from __future__ import annotations

import numpy as np
import pytest

from arena.stats import match_counts, pentanomial_counts, trinomial_counts
from arena.stats.ranks import is_provisional, rank_ranges


def test_rank_ranges_use_the_sd_of_each_difference() -> None:
    # Four bots; b and c are 30 apart, c and d 10. Independent ratings with sd 10
    # each give a difference the sd √200 ≈ 14.1: 30 > 1.96·14.1 = 27.7 separates
    # b from c, 10 does not separate c from d.
    ratings = [1600.0, 1530.0, 1500.0, 1490.0]
    independent = np.diag([100.0, 100.0, 100.0, 100.0])
    assert rank_ranges(ratings, independent) == [(1, 1), (2, 2), (3, 4), (3, 4)]
    # Same marginal sd, but b and c anti-correlated: the difference's sd is
    # √360 ≈ 19 and 30 < 1.96·19 = 37.2, so b and c share ranks 2–3.
    anti = independent.copy()
    anti[1, 2] = anti[2, 1] = -80.0
    assert rank_ranges(ratings, anti) == [(1, 1), (2, 3), (2, 4), (3, 4)]
    # Positively correlated c and d (shared opponents): the difference's sd is
    # √20 ≈ 4.5 and 10 > 8.8, so even they are told apart.
    correlated = independent.copy()
    correlated[2, 3] = correlated[3, 2] = 90.0
    assert rank_ranges(ratings, correlated) == [(1, 1), (2, 2), (3, 3), (4, 4)]


def test_rank_ranges_threshold_is_the_given_z() -> None:
    ratings = [1520.0, 1500.0]
    covariance = np.diag([50.0, 50.0])  # difference sd 10
    assert rank_ranges(ratings, covariance, z=1.99) == [(1, 1), (2, 2)]
    assert rank_ranges(ratings, covariance, z=2.01) == [(1, 2), (1, 2)]


def test_provisional_boundaries() -> None:
    assert is_provisional(19, 10.0)
    assert not is_provisional(20, 100.0)
    assert is_provisional(20, 100.01)
    assert not is_provisional(5, 10.0, min_games=5)
    assert is_provisional(500, 60.0, max_ci95=50.0)


def test_trinomial_counts() -> None:
    assert trinomial_counts([1, 0.5, 0, 1, 1.0, 0.5]) == (1, 2, 3)
    assert trinomial_counts([]) == (0, 0, 0)
    with pytest.raises(ValueError, match="game score"):
        trinomial_counts([0.25])


def test_pentanomial_counts() -> None:
    pairs = [(1, 1), (1, 0), (0.5, 0.5), (0, 0.5), (1, 0.5), (0, 0), (0.5, 1)]
    # pair totals 2, 1, 1, ½, 1½, 0, 1½
    assert pentanomial_counts(a + b for a, b in pairs) == (1, 1, 2, 2, 1)
    assert pentanomial_counts([2.0, 2, 1.5, 0]) == (1, 0, 0, 1, 2)
    with pytest.raises(ValueError, match="pair score"):
        pentanomial_counts([2.5])


def test_match_counts_prefers_complete_pairs() -> None:
    games = [1.0, 0.5, 0.0, 1.0, 1.0]
    assert match_counts(games, [1.5, 1.0]) == (0, 0, 1, 1, 0)
    assert match_counts(games, []) == (1, 1, 3)  # no complete pair yet: the single games


def test_a_hundred_games_against_three_opponents_settle_a_wide_interval() -> None:
    assert is_provisional(500, 250.0, opponents=2)
    assert is_provisional(99, 250.0, opponents=3)
    assert not is_provisional(100, 250.0, opponents=3)
    assert is_provisional(100, 250.0, min_games=200, opponents=3)  # never weaker than min_games
