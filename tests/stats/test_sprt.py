"""sprt_llr and sprt against brute-force constrained maxima, closed forms and fishtest's numbers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.stats import SprtState, sprt, sprt_bounds, sprt_llr
from tests.stats.brute_force import llr_by_dual, llr_by_optimizer, trinomial_llr_closed_form

# fishtest server/fishtest/stats/LLRcalc.py (commit 0753fcc) LLR_logistic and
# LLR_normalized, run on these counts: (counts, elo0, elo1, logistic, normalized).
FISHTEST_LLR = [
    ((30, 10, 60), 0.0, 2.0, 0.19006136315192435, 0.18038217382360888),
    ((10, 20, 30), 0.0, 5.0, 0.4231694468971448, 0.3464179665494771),
    ((10, 20, 30), -1.75, 0.25, 0.17371808965240598, 0.14173362863546535),
    ((0, 0, 3), 0.0, 5.0, 0.04286260629528402, 0.04285397287496212),
    ((3, 0, 0), -1.75, 0.25, -0.017232080681689018, -0.017229143516793288),
    ((5, 0, 95), 0.0, 5.0, 1.2848620311270211, 1.2848116076204004),
    ((1, 5, 10, 6, 2), 0.0, 2.0, 0.03468091022911545, 0.024255685718316926),
    ((0, 0, 24, 0, 0), 0.0, 5.0, -0.341477617755581, -0.007584400547123765),
    ((0, 0, 24, 0, 0), -1.75, 0.25, 0.10197554397886904, 0.0006585101342258422),
    ((1, 2, 4, 10, 15), 0.0, 5.0, 0.4085895888365758, 0.4559401744564935),
    ((0, 0, 0, 0, 10), 0.0, 2.0, 0.05741038555877071, 0.08108038238875867),
    ((1523, 10411, 22840, 10501, 1557), 0.0, 2.0, -1.810290513811033, -0.024917823325843656),
    ((1523, 10411, 22840, 10501, 1557), -1.75, 0.25, 5.843244521592207, 2.690825915278397),
    ((1523, 10411, 22840, 10501, 1557), 0.0, 5.0, -20.91543982535354, -5.881780572053071),
]

EDGE_COUNTS = [
    (0, 0, 3),  # tiny
    (3, 0, 0),
    (0, 3, 0),
    (5, 0, 95),  # lopsided
    (1, 0, 19),
    (0, 0, 24, 0, 0),  # zeros
    (0, 0, 0, 0, 10),
    (2, 0, 10, 1, 0),
    (1, 5, 10, 6, 2),
    (40, 200, 410, 190, 35),
    (120, 310, 115),
]
BOUNDS = [(0.0, 2.0), (-1.75, 0.25), (-10.0, 10.0)]

trinomials = st.tuples(*[st.integers(0, 200)] * 3)
pentanomials = st.tuples(*[st.integers(0, 60)] * 5)
bounds = st.tuples(st.floats(-30, 30), st.floats(0.5, 30)).map(lambda b: (b[0], b[0] + b[1]))


@pytest.mark.parametrize(("counts", "elo0", "elo1", "logistic", "normalized"), FISHTEST_LLR)
def test_matches_fishtest(
    counts: tuple[int, ...], elo0: float, elo1: float, logistic: float, normalized: float
) -> None:
    assert sprt_llr(counts, elo0, elo1, model="logistic") == pytest.approx(logistic, abs=1e-4)
    assert sprt_llr(counts, elo0, elo1, model="normalized") == pytest.approx(normalized, abs=1e-4)


@pytest.mark.parametrize("counts", EDGE_COUNTS)
@pytest.mark.parametrize(("elo0", "elo1"), BOUNDS)
@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_matches_a_brute_force_maximization(
    counts: tuple[int, ...], elo0: float, elo1: float, model: str
) -> None:
    expected = llr_by_optimizer(counts, elo0, elo1, model)
    assert sprt_llr(counts, elo0, elo1, model=model) == pytest.approx(expected, abs=1e-4)  # type: ignore[arg-type]


def test_the_better_of_two_local_maxima_is_taken() -> None:
    # 13 pairs tested at 50..100 normalized Elo: under H1 the t-value constraint
    # has two local maxima. fishtest's iteration from the uniform distribution
    # stops at the lower one (LLR -1.58591); the brute force finds the higher.
    expected = llr_by_optimizer((2, 0, 10, 1, 0), 50.0, 100.0, "normalized")
    assert expected == pytest.approx(-1.574923, abs=1e-5)
    assert sprt_llr((2, 0, 10, 1, 0), 50.0, 100.0, model="normalized") == pytest.approx(
        expected, abs=1e-6
    )


@given(trinomials, bounds)
def test_logistic_trinomial_matches_the_quadratic_closed_form(
    counts: tuple[int, int, int], hypotheses: tuple[float, float]
) -> None:
    expected = trinomial_llr_closed_form(counts, *hypotheses)
    assert sprt_llr(counts, *hypotheses, model="logistic") == pytest.approx(expected, abs=1e-6)


@given(pentanomials, bounds)
def test_logistic_pentanomial_matches_the_convex_dual(
    counts: tuple[int, ...], hypotheses: tuple[float, float]
) -> None:
    expected = llr_by_dual(counts, *hypotheses)
    assert sprt_llr(counts, *hypotheses, model="logistic") == pytest.approx(expected, abs=1e-6)


@settings(max_examples=40)
@given(st.one_of(trinomials, pentanomials), bounds)
def test_normalized_matches_a_brute_force_maximization(
    counts: tuple[int, ...], hypotheses: tuple[float, float]
) -> None:
    expected = llr_by_optimizer(counts, *hypotheses, "normalized")
    assert sprt_llr(counts, *hypotheses, model="normalized") == pytest.approx(expected, abs=1e-4)


@given(st.one_of(trinomials, pentanomials), bounds, st.sampled_from(["logistic", "normalized"]))
def test_swapping_the_hypotheses_negates_the_llr(
    counts: tuple[int, ...], hypotheses: tuple[float, float], model: str
) -> None:
    elo0, elo1 = hypotheses
    forward = sprt_llr(counts, elo0, elo1, model=model)  # type: ignore[arg-type]
    assert sprt_llr(counts, elo1, elo0, model=model) == pytest.approx(-forward, abs=1e-9)  # type: ignore[arg-type]
    assert sprt_llr(counts, elo0, elo0, model=model) == pytest.approx(0.0, abs=1e-9)  # type: ignore[arg-type]


def test_bounds_are_walds() -> None:
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944439, abs=1e-6)
    assert upper == pytest.approx(2.944439, abs=1e-6)
    lower, upper = sprt_bounds(0.1, 0.2)
    assert (lower, upper) == pytest.approx((math.log(0.2 / 0.9), math.log(0.8 / 0.1)))


def test_verdicts() -> None:
    # A clear winner over 2,000 pairs passes a [0, 2] test; its mirror image fails it.
    winning = (50, 300, 1000, 500, 150)
    passed = sprt(winning, 0.0, 2.0)
    assert passed.verdict == "H1" and passed.llr >= passed.upper
    failed = sprt(winning[::-1], 0.0, 2.0)
    assert failed.verdict == "H0" and failed.llr <= failed.lower
    undecided = sprt((1, 5, 10, 6, 2), 0.0, 2.0)
    assert undecided.verdict is None and undecided.lower < undecided.llr < undecided.upper
    assert undecided == SprtState(
        sprt_llr((1, 5, 10, 6, 2), 0.0, 2.0, model="normalized"), *sprt_bounds(), None
    )
    assert sprt(winning, 0.0, 2.0, model="logistic").llr == sprt_llr(winning, 0.0, 2.0, "logistic")


def test_the_verdict_flips_exactly_at_a_bound() -> None:
    counts = (50, 300, 1000, 500, 150)
    llr = sprt_llr(counts, 0.0, 2.0)
    # Error rates that put the upper bound just below, then just above, this LLR.
    alpha_at_bound = (1 - 0.05) / math.exp(llr)
    assert sprt(counts, 0.0, 2.0, alpha=alpha_at_bound * 1.001).verdict == "H1"
    assert sprt(counts, 0.0, 2.0, alpha=alpha_at_bound * 0.999).verdict is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sprt((1, 2, 3), 2.0, 0.0), "below"),
        (lambda: sprt((1, 2, 3), 0.0, 2.0, alpha=0.0), "alpha"),
        (lambda: sprt((1, 2, 3), 0.0, 2.0, alpha=0.6, beta=0.5), "alpha"),
        (lambda: sprt_llr((1, 2, 3), 0.0, 2.0, model="bayeselo"), "model"),  # type: ignore[arg-type]
        (lambda: sprt_llr((1, 2, 3, 4), 0.0, 2.0), "trinomial"),
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
