"""elo_estimate against cutechess's printed figures, fishtest's get_elo and explicit samples."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from arena.stats import elo_estimate
from tests.stats.brute_force import elo_from_sample, logistic_elo, regularize, sample_of

# fishtest server/fishtest/stats/stat_util.py get_elo (commit 0753fcc), run on these counts:
# (elo, elo95, los).
FISHTEST_GET_ELO = [
    ((30, 10, 60), (107.53812491703204, 68.45770717531838, 0.9995709396668032)),
    ((10, 20, 30), (120.41199826559247, 75.25988693832561, 0.9997339972474304)),
    ((0, 0, 3), (1199.8261952903777, 276.4785047458733, 1.0)),
    ((5, 0, 95), (511.484983772153, 228.73575204450037, 1.0)),
    ((3, 0, 0), (-1199.826195290393, 276.47850474588165, 0.0)),
    ((1, 5, 10, 6, 2), (21.74306492903708, 68.63422229059947, 0.7358836115660085)),
    ((0, 0, 24, 0, 0), (-7.714619732426294e-14, 1.4184407138470643, 0.49999999999997874)),
    ((1, 2, 4, 10, 15), (221.1367874631123, 97.5334799017082, 0.9999999992394216)),
    ((0, 0, 0, 0, 10), (1199.8261952903777, 188.8974870262287, 1.0)),
    ((1523, 10411, 22840, 10501, 1557), (0.586082962308062, 1.3253414702759656, 0.80695419855021)),
]


def test_cutechess_figures() -> None:
    # cutechess-cli prints "Elo difference: 107.54 +/- 68.46" for 60 W / 30 L / 10 D
    # and "0.00 +/- 53.16" for 30 W / 30 L / 40 D.
    strong = elo_estimate((30, 10, 60))
    assert strong.elo == pytest.approx(107.54, abs=0.005)
    assert strong.elo95 == pytest.approx(68.46, abs=0.005)
    even = elo_estimate((30, 40, 30))
    assert even.elo == pytest.approx(0.0, abs=1e-12)
    assert even.elo95 == pytest.approx(53.16, abs=0.005)
    assert even.los == pytest.approx(0.5, abs=1e-12)


def test_los_is_score_based_not_cutechess_wins_and_losses() -> None:
    # cutechess: LOS = Φ((W − L)/√(W + L)), draws ignored: 99.92% for 60/30/10.
    cutechess_los = norm.cdf((60 - 30) / math.sqrt(60 + 30))
    assert cutechess_los == pytest.approx(0.9992, abs=5e-5)
    # Ours (fishtest's): Φ((s − ½)/σ) with σ the standard error of the mean score.
    score, sd = 0.65, math.sqrt((0.6 * 0.35**2 + 0.3 * 0.65**2 + 0.1 * 0.15**2) / 100)
    los = elo_estimate((30, 10, 60)).los
    assert los == pytest.approx(norm.cdf((score - 0.5) / sd), abs=1e-12)
    assert los == pytest.approx(0.99957, abs=5e-6)


@pytest.mark.parametrize(("counts", "expected"), FISHTEST_GET_ELO)
def test_matches_fishtest(counts: tuple[int, ...], expected: tuple[float, float, float]) -> None:
    elo, elo95, los = elo_estimate(counts)
    assert elo == pytest.approx(expected[0], abs=1e-3)
    assert elo95 == pytest.approx(expected[1], abs=1e-3)
    assert los == pytest.approx(expected[2], abs=1e-6)


@given(st.lists(st.integers(1, 300), min_size=3, max_size=3))
def test_trinomial_matches_an_explicit_sample(counts: list[int]) -> None:
    assert tuple(elo_estimate(counts)) == pytest.approx(
        elo_from_sample(sample_of(counts)), abs=1e-9
    )


@given(st.lists(st.integers(1, 300), min_size=5, max_size=5))
def test_pentanomial_matches_an_explicit_sample_of_pair_averages(counts: list[int]) -> None:
    assert tuple(elo_estimate(counts)) == pytest.approx(
        elo_from_sample(sample_of(counts)), abs=1e-9
    )


@given(st.lists(st.integers(0, 50), min_size=3, max_size=5).filter(lambda c: len(c) != 4))
def test_zero_counts_are_regularized_and_every_answer_is_finite(counts: list[int]) -> None:
    estimate = elo_estimate(counts)
    assert all(math.isfinite(x) for x in estimate)
    values = regularize(counts)
    scores = [k / (len(counts) - 1) for k in range(len(counts))]
    mean = sum(v * s for v, s in zip(values, scores, strict=True)) / values.sum()
    assert estimate.elo == pytest.approx(logistic_elo(mean), abs=1e-9)
    assert 0.0 <= estimate.los <= 1.0
    assert abs(estimate.elo) < 1200 and 0 <= estimate.elo95 < 1200


def test_lopsided_and_tiny_vectors_stay_finite() -> None:
    assert elo_estimate((5, 0, 95)).elo == pytest.approx(511.485, abs=1e-3)
    tiny = elo_estimate((0, 0, 3))
    # 3 wins out of 3: the score is clamped at 1 − 1e-3, so the Elo is the clamp's.
    assert tiny.elo == pytest.approx(400 * math.log10(0.999 / 0.001), abs=1e-9)
    nothing = elo_estimate((0, 0, 0))
    assert (nothing.elo, nothing.los) == (0.0, 0.5)
    assert 0.0 < nothing.elo95 < 1200.0


def test_pairs_decided_by_the_opening_are_measured_by_the_pentanomial() -> None:
    # 100 pairs, each won by whoever had the good side of the opening: 100 W, 100 L as
    # games, but every pair scores exactly 1. As independent games the ±95% is wide;
    # as pairs it is almost nothing, and it is the pairs that are independent.
    as_games = elo_estimate((100, 0, 100))
    as_pairs = elo_estimate((0, 0, 100, 0, 0))
    assert as_games.elo == as_pairs.elo == 0.0
    assert as_games.elo95 > 40.0
    assert as_pairs.elo95 < 0.5


@pytest.mark.parametrize("counts", [(1, 2), (1, 2, 3, 4), (1, -1, 3), (1, math.nan, 2)])
def test_malformed_counts_are_refused(counts: tuple[float, ...]) -> None:
    with pytest.raises(ValueError):
        elo_estimate(counts)
