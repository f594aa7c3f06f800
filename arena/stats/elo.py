"""Elo difference, its 95% interval and the likelihood of superiority from one count vector."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import NamedTuple

from arena.ratings import score_to_elo
from arena.stats.counts import REGULARIZATION, regularized, unit_scores

_NORMAL = NormalDist()
Z95 = _NORMAL.inv_cdf(0.975)
"""The two-sided 95% quantile of the standard normal distribution (1.95996...)."""


class EloEstimate(NamedTuple):
    """What a count vector says about the Elo difference between two players."""

    elo: float
    """The logistic Elo difference whose expected score is the observed mean score."""
    elo95: float
    """Half the width of the 95% interval, in Elo."""
    los: float
    """Likelihood of superiority: the probability (0..1) that the true score exceeds ½."""


def bounded_score_to_elo(score: float) -> float:
    """``score_to_elo`` with the score held inside [1e-3, 1 − 1e-3], as fishtest's ``elo`` does.

    The bound makes every estimate finite: no Elo figure exceeds ±1199.6.
    """
    # + 0.0 turns the -0.0 of an even score into 0.0.
    return score_to_elo(min(max(score, REGULARIZATION), 1.0 - REGULARIZATION)) + 0.0


def mean_and_sigma(counts: Sequence[float]) -> tuple[float, float]:
    """The mean score per game of a count vector and the standard error of that mean.

    For pentanomial counts the unit is the pair, its score halved: the pairs are
    what is independent, so the variance is that of the pair averages.
    """
    values = regularized(counts)
    total = float(values.sum())
    probabilities = values / total
    scores = unit_scores(len(values))
    mean = float(probabilities @ scores)
    variance = float(probabilities @ (scores - mean) ** 2)
    return mean, math.sqrt(variance / total)


def elo_estimate(counts: Sequence[float]) -> EloEstimate:
    """Elo difference, 95% half-width and LOS of a trinomial or pentanomial count vector.

    ``counts`` is ``(losses, draws, wins)`` or ``(LL, LD+DL, LW+DD+WL, DW+WD, WW)``
    from the first player's point of view. The mean score ``s`` and its standard
    error ``σ`` come from the observed frequencies (zeros regularized to 1e-3);
    ``elo = -400·log10(1/s − 1)``, ``elo95`` is half the Elo distance between
    ``s − 1.96σ`` and ``s + 1.96σ``, and ``los = Φ((s − ½)/σ)``.
    """
    mean, sigma = mean_and_sigma(counts)
    low = bounded_score_to_elo(mean - Z95 * sigma)
    high = bounded_score_to_elo(mean + Z95 * sigma)
    return EloEstimate(
        elo=bounded_score_to_elo(mean),
        elo95=(high - low) / 2.0,
        los=_NORMAL.cdf((mean - 0.5) / sigma),
    )
