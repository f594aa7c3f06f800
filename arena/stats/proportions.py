"""Intervals for a proportion and for a count: ``wilson_interval``, ``garwood_interval``.

Both are the published formulas. Wilson's score interval (E. B. Wilson,
1927) for ``successes`` of ``trials``: unlike the normal approximation it
stays inside [0, 1] and is sensible at 0% and 100%. Garwood's exact interval
(F. Garwood, 1936) for the mean of a Poisson count, from chi-square
quantiles: with ``count`` events seen it is ``[chi2(a/2, 2k)/2,
chi2(1-a/2, 2k+2)/2]``, the lower end 0 when nothing was seen.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from scipy.stats import chi2


def wilson_interval(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for the proportion ``successes / trials``."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials > 0, got {successes}/{trials}")
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2))
    # At 0% and 100% the ends are exactly 0 and 1; say so rather than round near them.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def garwood_interval(count: int, confidence: float = 0.95) -> tuple[float, float]:
    """Garwood's exact interval for the mean of a Poisson variable observed as ``count``."""
    if count < 0:
        raise ValueError(f"a count cannot be negative, got {count}")
    alpha = 1 - confidence
    low = 0.0 if count == 0 else float(chi2.ppf(alpha / 2, 2 * count)) / 2
    return low, float(chi2.ppf(1 - alpha / 2, 2 * count + 2)) / 2
