"""Maximum-likelihood outcome distributions under one constraint (Van den Bergh).

Given observed frequencies ``p̂`` over outcome scores ``a``, the distribution
``p`` that maximizes the multinomial log-likelihood ``Σ p̂ₖ log pₖ`` subject to
a constraint of the form ``Σ pₖ bₖ = 0`` is ``pₖ = p̂ₖ / (1 + x·bₖ)``, where
``x`` is the root of the *secular equation* ``Σ p̂ₖ bₖ / (1 + x·bₖ) = 0``
("support_MLE_multinomial", Proposition 1.1). Both constraints the SPRT needs
take that form: a fixed expected score ``s`` (``bₖ = aₖ − s``), and a fixed
t-value ``(μ − ref)/σ = t``, whose ``bₖ`` depends on ``p`` itself and is found
by a short fixed-point iteration ("normalized_elo_practical", section 4.1).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from arena.stats.counts import FloatArray

_MAX_FIXED_POINT_STEPS = 200
_FIXED_POINT_TOLERANCE = 1e-12
_ROUND_OFF_FLOOR = 1e-8


def solve_secular(observed: FloatArray, offsets: FloatArray) -> float:
    """The root ``x`` of ``Σ p̂ₖ bₖ / (1 + x·bₖ) = 0`` (``observed`` = p̂, ``offsets`` = b).

    The left side falls strictly from +∞ to −∞ between the poles, so the root is
    unique. Because every ``pₖ = p̂ₖ / (1 + x·bₖ)`` is at most 1 at the root,
    ``1 + x·bₖ ≥ p̂ₖ`` for all ``k``: that brackets the root away from the poles.
    """
    positive = offsets > 0.0
    negative = offsets < 0.0
    if not positive.any() or not negative.any():
        raise ValueError("the constraint lies outside the range of possible outcomes")
    with np.errstate(over="ignore"):  # a tiny offset only loosens its own bound
        low = float(np.max((observed[positive] - 1.0) / offsets[positive]))
        high = float(np.min((observed[negative] - 1.0) / offsets[negative]))
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("the constraint sits at the edge of the possible outcomes")

    def secular(x: float) -> float:
        return float(np.sum(observed * offsets / (1.0 + x * offsets)))

    return float(brentq(secular, low, high, xtol=1e-15, maxiter=500))


def mle_with_expected_score(observed: FloatArray, scores: FloatArray, score: float) -> FloatArray:
    """The most likely distribution given ``observed`` whose expected score is ``score``."""
    offsets = scores - score
    return observed / (1.0 + solve_secular(observed, offsets) * offsets)


def mle_with_t_value(
    observed: FloatArray, scores: FloatArray, reference: float, t_value: float
) -> FloatArray:
    """The most likely distribution given ``observed`` whose ``(μ − reference)/σ`` is ``t_value``.

    Differentiating ``μ − reference − t·σ`` gives, up to a constant that the
    normalization absorbs, ``bₖ = aₖ − reference − t·σ·(1 + ((aₖ − μ)/σ)²)/2``,
    which has ``Σ pₖ bₖ = 0`` exactly when ``p`` meets the constraint. ``μ`` and
    ``σ`` are taken from the current guess and the secular equation is solved
    again until the guess stops moving.

    The constraint is not convex, and on tiny samples tested far from what they
    show the likelihood can have two local maxima on it. The iteration is run
    from the uniform distribution (as fishtest does) and from ``observed``, and
    the better of the two fixed points is the answer.
    """
    candidates = []
    for start in (np.full_like(observed, 1.0 / len(observed)), observed):
        try:
            candidates.append(_t_value_fixed_point(observed, scores, reference, t_value, start))
        except (ValueError, ArithmeticError):
            continue  # this start left the feasible region or wandered; the other decides
    if not candidates:
        raise ArithmeticError(f"the t-value MLE did not converge for t = {t_value}")
    return max(candidates, key=lambda p: float(observed @ np.log(p)))


def _t_value_fixed_point(
    observed: FloatArray, scores: FloatArray, reference: float, t_value: float, start: FloatArray
) -> FloatArray:
    current = start
    previous_change = math.inf
    for _ in range(_MAX_FIXED_POINT_STEPS):
        mean = float(current @ scores)
        sigma = math.sqrt(float(current @ (scores - mean) ** 2))
        offsets = scores - reference - t_value * sigma * (1.0 + ((scores - mean) / sigma) ** 2) / 2
        updated = observed / (1.0 + solve_secular(observed, offsets) * offsets)
        # Weighted as the LLR weighs each outcome. The contraction is geometric
        # until round-off: an outcome seen 1e-3 times sits next to a pole of the
        # secular equation and wobbles at that level, so a change that no longer
        # shrinks (and is already tiny) means the fixed point is reached.
        change = float(np.max(observed * np.abs(np.log(updated / current))))
        if change < _FIXED_POINT_TOLERANCE or (
            change < _ROUND_OFF_FLOOR and change >= previous_change
        ):
            return updated
        current, previous_change = updated, change
    raise ArithmeticError(f"the t-value fixed point did not converge for t = {t_value}")
