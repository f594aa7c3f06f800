"""The generalized sequential probability ratio test on trinomial or pentanomial counts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np

from arena.ratings import expected_score
from arena.stats.counts import FloatArray, is_pentanomial, regularized, unit_scores
from arena.stats.mle import mle_with_expected_score, mle_with_t_value

Model = Literal["logistic", "normalized"]
"""``logistic``: hypotheses in logistic Elo; ``normalized``: in normalized Elo."""

Verdict = Literal["H0", "H1"]

NELO_PER_T = 800.0 / math.log(10.0)
"""Normalized Elo per unit of per-game t-value (347.4...): nElo = t · 800 / ln 10."""


class SprtState(NamedTuple):
    """Where an SPRT stands: its log-likelihood ratio, the two bounds and the verdict."""

    llr: float
    lower: float
    """``log(β / (1 − α))``: at or below it the test accepts H0."""
    upper: float
    """``log((1 − β) / α)``: at or above it the test accepts H1."""
    verdict: Verdict | None
    """``"H0"``, ``"H1"``, or ``None`` while the test must go on."""


def sprt_llr(
    counts: Sequence[float], elo0: float, elo1: float, model: Model = "normalized"
) -> float:
    """The generalized log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``).

    Under each hypothesis the outcome distribution is the maximum-likelihood one
    given the observed ``counts`` (zeros regularized to 1e-3) that meets the
    hypothesis: expected score ``L(elo)`` for ``model="logistic"``, t-value
    ``nelo / (800 / ln 10)`` (times √2 for pentanomial counts, whose unit is a
    pair of games) for ``model="normalized"``. The LLR is the count-weighted sum
    of the log ratios of the two distributions.
    """
    values = regularized(counts)
    total = float(values.sum())
    observed = values / total
    scores = unit_scores(len(values))
    if model == "logistic":
        null = mle_with_expected_score(observed, scores, expected_score(elo0, 0.0))
        alternative = mle_with_expected_score(observed, scores, expected_score(elo1, 0.0))
    elif model == "normalized":
        scale = math.sqrt(2.0) if is_pentanomial(counts) else 1.0
        null, alternative = (
            mle_with_t_value(observed, scores, 0.5, nelo / NELO_PER_T * scale)
            for nelo in (elo0, elo1)
        )
    else:
        raise ValueError(f"model must be 'logistic' or 'normalized', got {model!r}")
    return total * _mean_log_ratio(observed, alternative, null)


def _mean_log_ratio(weights: FloatArray, numerator: FloatArray, denominator: FloatArray) -> float:
    return float(weights @ (np.log(numerator) - np.log(denominator)))


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's bounds ``(log(β/(1−α)), log((1−β)/α))`` for error rates ``alpha`` and ``beta``."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"need 0 < alpha, beta and alpha + beta < 1, got {alpha}, {beta}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt(
    counts: Sequence[float],
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    model: Model = "normalized",
) -> SprtState:
    """The state of an SPRT of H0 ``elo = elo0`` against H1 ``elo = elo1`` (``elo0 < elo1``)."""
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1, got {elo0} and {elo1}")
    lower, upper = sprt_bounds(alpha, beta)
    llr = sprt_llr(counts, elo0, elo1, model)
    verdict: Verdict | None = "H1" if llr >= upper else "H0" if llr <= lower else None
    return SprtState(llr=llr, lower=lower, upper=upper, verdict=verdict)
