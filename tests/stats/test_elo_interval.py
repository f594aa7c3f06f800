"""elo_interval against brute-force likelihoods, edge tallies and a simulated truth."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq, minimize_scalar

from arena.ratings import expected_score, score_to_elo
from arena.stats import elo_estimate
from arena.stats.interval import MIN_GAMES, TOO_FEW, elo_interval, format_elo
from arena.stats.simulation import interval_coverage

Z2 = 1.959963984540054**2


def binomial_end(wins: float, losses: float, upper: bool) -> float:
    """An end of the binomial likelihood-ratio interval, in score, by plain bisection."""
    score = wins / (wins + losses)

    def deviance(s: float) -> float:
        best = sum(n * math.log(p) for n, p in ((wins, score), (losses, 1 - score)) if n)
        here = sum(n * math.log(p) for n, p in ((wins, s), (losses, 1 - s)) if n)
        return 2 * (best - here) - Z2

    if upper:
        return 1.0 if losses == 0 else brentq(deviance, score, 1 - 1e-15)
    return 0.0 if wins == 0 else brentq(deviance, 1e-15, score)


def trinomial_deviance(counts: Sequence[float], s: float) -> float:
    """The profile deviance of a (L, D, W) tally at mean score ``s``, by a 1-D search.

    With the mean fixed the distribution has one free parameter, the draw rate
    ``t``: ``(1 − s − t/2, t, s − t/2)``; the best ``t`` is found numerically.
    """
    losses, draws, wins = counts
    total = losses + draws + wins

    def log_likelihood(p: Sequence[float]) -> float:
        return sum(n * math.log(q) for n, q in zip(counts, p, strict=True) if n)

    def negative(t: float) -> float:
        p = (1 - s - t / 2, t, s - t / 2)
        if min(q for n, q in zip(counts, p, strict=True) if n) <= 0:
            return math.inf
        return -log_likelihood(p)

    top = 2 * min(s, 1 - s)
    found = minimize_scalar(negative, bounds=(0.0, top), method="bounded",
                            options={"xatol": 1e-12})
    best = min(found.fun, negative(0.0), negative(top))
    return 2 * (log_likelihood([n / total for n in counts]) + best)


@pytest.mark.parametrize(("losses", "wins"), [(0, 2), (1, 1), (3, 7), (12, 30), (0, 8), (5, 0)])
def test_without_draws_it_is_the_corrected_binomial_likelihood_ratio(
    losses: int, wins: int
) -> None:
    interval = elo_interval((losses, 0, wins))
    # The lower end from half a game moved from a win to a loss, the upper the other way.
    low = binomial_end(wins - 0.5, losses + 0.5, upper=False) if wins else 0.0
    high = binomial_end(wins + 0.5, losses - 0.5, upper=True) if losses else 1.0
    assert interval.low == pytest.approx(score_to_elo(low), abs=1e-6)
    assert interval.high == pytest.approx(score_to_elo(high), abs=1e-6)


@pytest.mark.parametrize("counts", [(3, 5, 12), (10, 20, 30), (1, 6, 1), (0, 3, 9), (2, 9, 0)])
def test_with_draws_each_end_sits_where_the_brute_force_deviance_is_z_squared(
    counts: tuple[int, int, int],
) -> None:
    interval = elo_interval(counts)
    losses, draws, wins = counts
    # The lower end's tally: half of the best result seen becomes a loss.
    shifted = (losses + 0.5, draws, wins - 0.5) if wins else (losses + 0.5, draws - 0.5, wins)
    low = expected_score(interval.low, 0.0)
    assert trinomial_deviance(shifted, low) == pytest.approx(Z2, abs=1e-6)
    mirrored = elo_interval(counts[::-1])
    assert mirrored.low == pytest.approx(-interval.high, abs=1e-6)
    assert mirrored.elo == pytest.approx(-interval.elo, abs=1e-9)
    assert mirrored.los == pytest.approx(1 - interval.los, abs=1e-9)


def test_known_values() -> None:
    two_nil = elo_interval((0, 0, 2))
    assert (round(two_nil.low, 2), two_nil.high) == (-318.31, math.inf)
    assert two_nil.elo == pytest.approx(score_to_elo(0.75))  # half a game off 2/2
    assert two_nil.too_few and two_nil.text() == TOO_FEW
    strong = elo_interval((30, 10, 60))
    assert (round(strong.low, 2), round(strong.elo, 2), round(strong.high, 2)) == (
        37.48, 107.54, 180.35,
    )
    assert strong.elo == pytest.approx(elo_estimate((30, 10, 60)).elo)  # the same point
    assert strong.text() == "+108 [+38, +180]"  # printed from the JSON's tenths: 37.5
    assert strong.los == pytest.approx(0.99898, abs=1e-5)
    pairs = elo_interval((1, 5, 10, 6, 2))
    assert (round(pairs.low, 2), round(pairs.high, 2), pairs.games) == (-55.95, 100.65, 48)
    sweep = elo_interval((0, 0, 0, 0, 10))
    assert (round(sweep.low, 2), sweep.high, sweep.games) == (195.67, math.inf, 20)
    assert sweep.text() == "+636 [+196, +inf]"


def test_narrows_with_more_games_and_with_draws() -> None:
    def width(counts: tuple[int, int, int]) -> float:
        interval = elo_interval(counts)
        return interval.high - interval.low

    assert width((400, 0, 600)) < width((4, 0, 6))
    assert width((30, 40, 30)) < width((50, 0, 50))


def test_edges_are_finite_on_one_side_and_infinite_on_the_other() -> None:
    for counts in [(0, 0, 1), (0, 0, 2), (0, 0, 50), (0, 0, 0, 0, 1), (0, 0, 0, 0, 7)]:
        up, down = elo_interval(counts), elo_interval(counts[::-1])
        assert math.isfinite(up.low) and up.high == math.inf and math.isfinite(up.elo)
        assert down.low == -math.inf and math.isfinite(down.high) and math.isfinite(down.elo)
    # Any game short of the best result makes both ends finite.
    for counts in [(1, 0, 1), (0, 3, 4), (0, 0, 0, 2, 7)]:
        interval = elo_interval(counts)
        assert math.isfinite(interval.low) and math.isfinite(interval.high)


def test_too_few_games_rule_and_json() -> None:
    assert elo_interval((1, 2, 4)).too_few and not elo_interval((1, 3, 4)).too_few
    assert elo_interval((1, 1, 1, 0, 0)).too_few and not elo_interval((1, 1, 1, 1, 0)).too_few
    assert MIN_GAMES == 8
    data = elo_interval((0, 0, 9)).to_json()
    assert data["high"] is None and data["low"] == round(elo_interval((0, 0, 9)).low, 1)
    assert data["too_few"] is False and data["games"] == 9
    assert (format_elo(-0.3), format_elo(math.inf), format_elo(-math.inf)) == ("+0", "+inf", "-inf")


@pytest.mark.parametrize(
    "counts", [(), (1, 2), (1, 2, 3, 4), (-1, 2, 3), (0, 0, 0), (math.nan, 1, 1)]
)
def test_rejects_malformed_counts(counts: tuple[float, ...]) -> None:
    with pytest.raises(ValueError):
        elo_interval(counts)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=3, max_size=3) | st.lists(
    st.integers(0, 20), min_size=5, max_size=5))
def test_los_agrees_with_the_interval(counts: list[int]) -> None:
    if not sum(counts):
        return
    interval = elo_interval(counts)
    assert interval.low <= interval.elo <= interval.high
    # The same likelihood decides both: LOS over 97.5% exactly when the interval is above 0.
    if abs(interval.los - 0.975) > 1e-9:
        assert (interval.los > 0.975) == (interval.low > 0)
    if abs(interval.los - 0.025) > 1e-9:
        assert (interval.los < 0.025) == (interval.high < 0)


# (true Elo, games or pairs, pentanomial): cells where the normal approximation fails.
CELLS = [(300, 2, False), (200, 4, False), (400, 8, False), (400, 16, False), (300, 2, True),
         (400, 4, True)]
SAMPLES = 600


def _estimate_bounds(counts: Sequence[int]) -> tuple[float, float]:
    estimate = elo_estimate(counts)
    return estimate.elo - estimate.elo95, estimate.elo + estimate.elo95


@pytest.mark.parametrize(("elo", "units", "pentanomial"), CELLS)
def test_covers_the_truth_where_the_normal_approximation_does_not(
    elo: float, units: int, pentanomial: bool
) -> None:
    rng = np.random.default_rng(31)
    cell = interval_coverage(elo, units, pentanomial, SAMPLES, rng)
    assert cell.covered >= 0.93
    old = interval_coverage(elo, units, pentanomial, SAMPLES, rng, _estimate_bounds)
    assert old.covered < 0.93  # this check would fail the old method


@pytest.mark.parametrize(("elo", "units", "pentanomial"), [(0, 64, False), (300, 64, False),
                                                           (100, 32, True)])
def test_not_needlessly_wide_from_64_games(elo: float, units: int, pentanomial: bool) -> None:
    cell = interval_coverage(elo, units, pentanomial, SAMPLES, np.random.default_rng(32))
    assert 0.93 <= cell.covered <= 0.99
