"""Elo arithmetic: exact values and conservation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import (
    DEFAULT_K,
    DEFAULT_RATING,
    elo_update,
    expected_score,
    score_to_elo,
)

ratings = st.floats(min_value=0.0, max_value=4000.0, allow_nan=False)


def test_defaults() -> None:
    assert DEFAULT_RATING == 1500.0
    assert DEFAULT_K == 32.0


def test_expected_score_known_values() -> None:
    assert expected_score(1500.0, 1500.0) == 0.5
    assert expected_score(1900.0, 1500.0) == pytest.approx(10 / 11)
    assert expected_score(1500.0, 1900.0) == pytest.approx(1 / 11)


def test_equal_ratings_move_half_k() -> None:
    assert elo_update(1500.0, 1500.0, 1.0, 32.0) == (1516.0, 1484.0)
    assert elo_update(1500.0, 1500.0, 0.0, 32.0) == (1484.0, 1516.0)
    assert elo_update(1500.0, 1500.0, 0.5, 32.0) == (1500.0, 1500.0)


def test_draw_moves_ratings_towards_each_other() -> None:
    high, low = elo_update(1700.0, 1500.0, 0.5, 32.0)
    assert high < 1700.0
    assert low > 1500.0


def test_score_out_of_range_is_rejected() -> None:
    with pytest.raises(ValueError):
        elo_update(1500.0, 1500.0, 1.5, 32.0)


@settings(derandomize=True)
@given(ratings, ratings)
def test_expected_scores_sum_to_one(ra: float, rb: float) -> None:
    assert expected_score(ra, rb) + expected_score(rb, ra) == pytest.approx(1.0)


@settings(derandomize=True)
@given(ratings, ratings, st.sampled_from([0.0, 0.5, 1.0]))
def test_update_conserves_points_and_is_bounded(ra: float, rb: float, score: float) -> None:
    na, nb = elo_update(ra, rb, score, 32.0)
    assert na - ra == pytest.approx(rb - nb, abs=1e-9)
    assert abs(na - ra) <= 32.0
    if score == 1.0:
        assert na >= ra
    if score == 0.0:
        assert na <= ra


def test_update_is_deterministic_bit_for_bit() -> None:
    # The store relies on this to make rebuild_ratings reproduce stored ratings.
    assert elo_update(1523.25, 1477.125, 1.0, 24.0) == elo_update(1523.25, 1477.125, 1.0, 24.0)


def test_score_to_elo() -> None:
    assert score_to_elo(0.5) == 0.0
    assert score_to_elo(0.75) == pytest.approx(190.85, abs=0.01)
    assert score_to_elo(1.0) == math.inf
    assert score_to_elo(0.0) == -math.inf
