"""Wilson's and Garwood's intervals against independent computations.

Wilson's interval is checked against SciPy's ``binomtest(...).proportion_ci(method="wilson")``
and Garwood's against gamma quantiles (the same interval written through the
gamma distribution instead of chi-square), so neither reference shares code
with ``arena.stats.proportions``.
"""

from __future__ import annotations

import pytest
from scipy.stats import binomtest, gamma

from arena.stats.proportions import garwood_interval, wilson_interval


@pytest.mark.parametrize(
    ("successes", "trials"), [(0, 1), (1, 1), (0, 20), (20, 20), (7, 9), (812, 900), (3, 1000)]
)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_wilson_matches_scipy(successes: int, trials: int, confidence: float) -> None:
    expected = binomtest(successes, trials).proportion_ci(confidence, method="wilson")
    low, high = wilson_interval(successes, trials, confidence)
    assert low == pytest.approx(expected.low, abs=1e-12)
    assert high == pytest.approx(expected.high, abs=1e-12)
    assert 0.0 <= low <= successes / trials <= high <= 1.0


@pytest.mark.parametrize("count", [0, 1, 2, 5, 17, 250])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_garwood_matches_gamma_quantiles(count: int, confidence: float) -> None:
    alpha = 1 - confidence
    low, high = garwood_interval(count, confidence)
    expected_low = 0.0 if count == 0 else gamma.ppf(alpha / 2, count)
    assert low == pytest.approx(expected_low, rel=1e-10)
    assert high == pytest.approx(gamma.ppf(1 - alpha / 2, count + 1), rel=1e-10)
    assert low <= count <= high


def test_published_values() -> None:
    # Garwood (1936) via the usual table: 0 events -> [0, 3.689], 1 -> [0.0253, 5.572].
    assert garwood_interval(0) == pytest.approx((0.0, 3.6889), abs=1e-4)
    assert garwood_interval(1) == pytest.approx((0.0253, 5.5716), abs=1e-4)


def test_bad_counts_are_refused() -> None:
    for successes, trials in [(1, 0), (-1, 5), (6, 5)]:
        with pytest.raises(ValueError):
            wilson_interval(successes, trials)
    with pytest.raises(ValueError):
        garwood_interval(-1)
