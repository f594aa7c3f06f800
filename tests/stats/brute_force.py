"""Reference computations for the statistics tests, written from the definitions alone.

Nothing here imports ``arena.stats``: the constrained maxima come from a
general-purpose optimizer (SLSQP over the simplex, through a softmax), a convex
dual, or the quadratic that the trinomial secular equation reduces to.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import logit
from scipy.stats import norm

ELO_PER_LOG_ODDS = 400.0 / math.log(10.0)


def regularize(counts: Sequence[float]) -> np.ndarray:
    """fishtest's rule: a zero count becomes 1e-3."""
    values = np.array(counts, dtype=float)
    values[values == 0] = 1e-3
    return values


def outcome_scores(size: int) -> np.ndarray:
    """Per-game score of each entry (the pair average for pentanomial counts)."""
    return np.arange(size) / (size - 1)


def logistic_elo(score: float) -> float:
    """The Elo difference for an expected score, via the natural logit (clamped like fishtest)."""
    return ELO_PER_LOG_ODDS * float(logit(min(max(score, 1e-3), 1 - 1e-3)))


def expected_score(elo: float) -> float:
    """The logistic expected score of an Elo difference."""
    return float(1.0 / (1.0 + math.exp(-elo / ELO_PER_LOG_ODDS)))


def elo_from_sample(sample: np.ndarray) -> tuple[float, float, float]:
    """Elo, ±95% and LOS from an explicit sample of per-unit scores (games or pair averages)."""
    mean = float(np.mean(sample))
    error = float(np.std(sample)) / math.sqrt(len(sample))
    z = float(norm.ppf(0.975))
    half = (logistic_elo(mean + z * error) - logistic_elo(mean - z * error)) / 2
    return logistic_elo(mean), half, float(norm.cdf((mean - 0.5) / error))


def sample_of(counts: Sequence[int]) -> np.ndarray:
    """The explicit sample a count vector tallies."""
    return np.repeat(outcome_scores(len(counts)), counts)


def constrained_max(
    observed: np.ndarray, constraint: Callable[[np.ndarray], float], seed: int = 0
) -> float:
    """max Σ p̂ log p over the simplex subject to ``constraint(p) = 0`` (SLSQP, several starts)."""
    rng = np.random.default_rng(seed)
    size = len(observed)
    # Observed, uniform and one random start: the t-value constraint can hold two
    # local maxima, and the best of several starts is the global one in these tests.
    starts = [np.log(observed), np.zeros(size), np.log(rng.dirichlet(np.ones(size)))]

    def probabilities(z: np.ndarray) -> np.ndarray:
        return np.exp(z - np.logaddexp.reduce(z))

    def objective(z: np.ndarray) -> float:
        return float(-observed @ (z - np.logaddexp.reduce(z)))

    best = -math.inf
    for start in starts:
        result = minimize(
            objective,
            start,
            method="SLSQP",
            constraints=[{"type": "eq", "fun": lambda z: constraint(probabilities(z))}],
            options={"ftol": 1e-15, "maxiter": 2000},
        )
        if abs(constraint(probabilities(result.x))) < 1e-9:
            best = max(best, -float(result.fun))
    assert best > -math.inf, "no start reached the constraint"
    return best


def expected_score_constraint(scores: np.ndarray, score: float) -> Callable[[np.ndarray], float]:
    """The logistic model's constraint: the expected score is ``score``."""
    return lambda p: float(p @ scores - score)


def t_value_constraint(scores: np.ndarray, t_value: float) -> Callable[[np.ndarray], float]:
    """The normalized model's constraint: ``(μ − ½)/σ`` is ``t_value``."""

    def constraint(p: np.ndarray) -> float:
        mean = float(p @ scores)
        return (mean - 0.5) / math.sqrt(max(float(p @ (scores - mean) ** 2), 1e-300)) - t_value

    return constraint


def llr_by_optimizer(counts: Sequence[float], elo0: float, elo1: float, model: str) -> float:
    """The generalized LLR with both constrained maxima found by SLSQP."""
    values = regularize(counts)
    total = values.sum()
    observed = values / total
    scores = outcome_scores(len(values))
    if model == "logistic":
        h0 = expected_score_constraint(scores, expected_score(elo0))
        h1 = expected_score_constraint(scores, expected_score(elo1))
    else:
        per_unit = math.sqrt(2) if len(counts) == 5 else 1.0
        h0 = t_value_constraint(scores, elo0 * math.log(10) / 800 * per_unit)
        h1 = t_value_constraint(scores, elo1 * math.log(10) / 800 * per_unit)
    return float(total * (constrained_max(observed, h1) - constrained_max(observed, h0)))


def llr_by_dual(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The logistic LLR through the convex dual of the fixed-mean maximum (empirical likelihood).

    max {Σ p̂ log p : Σ p = 1, Σ p (a − s) = 0} = Σ p̂ log p̂ − max_x Σ p̂ log(1 + x (a − s)),
    the inner maximum taken over the x that keep every 1 + x (a − s) positive.
    """
    values = regularize(counts)
    total = values.sum()
    observed = values / total
    scores = outcome_scores(len(values))

    def penalty(score: float) -> float:
        offsets = scores - score
        low, high = -1 / offsets.max(), -1 / offsets.min()
        span = high - low
        result = minimize_scalar(
            lambda x: -float(observed @ np.log1p(x * offsets)),
            bounds=(low + 1e-12 * span, high - 1e-12 * span),
            method="bounded",
            options={"xatol": 1e-14},
        )
        return float(-result.fun)

    return float(total * (penalty(expected_score(elo0)) - penalty(expected_score(elo1))))


def trinomial_llr_closed_form(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The logistic LLR of trinomial counts, the secular equation solved as a quadratic.

    Σ pₖ bₖ / (1 + x bₖ) = 0 over three outcomes, times Π (1 + x bₖ), is
    b₁b₂b₃·x² + Σ pₖ bₖ (S − bₖ)·x + Σ pₖ bₖ = 0 with S = Σ bₖ; exactly one root
    keeps every 1 + x bₖ positive.
    """
    values = regularize(counts)
    total = values.sum()
    observed = values / total
    scores = outcome_scores(3)

    def log_likelihood(score: float) -> float:
        b = scores - score
        quadratic = [np.prod(b), float(observed @ (b * (b.sum() - b))), float(observed @ b)]
        roots = [r.real for r in np.roots(quadratic) if abs(r.imag) < 1e-12]
        (x,) = [r for r in roots if np.all(1 + r * b > 0)]
        return float(observed @ np.log(observed / (1 + x * b)))

    return float(
        total * (log_likelihood(expected_score(elo1)) - log_likelihood(expected_score(elo0)))
    )


def negative_log_posterior(
    games: Sequence[tuple[int, int, float]], prior_sd: float
) -> Callable[[np.ndarray], float]:
    """The penalized Bradley–Terry objective over Elo ratings, built game by game.

    Each game ``(i, j, score of i)`` adds ``s·log σ(Δ) + (1 − s)·log σ(−Δ)`` with
    ``Δ = (rᵢ − rⱼ)/scale``; each rating has a N(0, prior_sd²) prior.
    """
    first = np.array([g[0] for g in games], dtype=int)
    second = np.array([g[1] for g in games], dtype=int)
    score = np.array([g[2] for g in games])

    def objective(ratings: np.ndarray) -> float:
        margin = (ratings[first] - ratings[second]) / ELO_PER_LOG_ODDS
        fit = score * -np.logaddexp(0, -margin) + (1 - score) * -np.logaddexp(0, margin)
        return float(-fit.sum() + 0.5 * ratings @ ratings / prior_sd**2)

    return objective


def covariance_at(objective: Callable[[np.ndarray], float], ratings: np.ndarray) -> np.ndarray:
    """The inverse of ``objective``'s central-difference Hessian at ``ratings`` (Elo²)."""
    size = len(ratings)
    step = 1e-2
    hessian = np.zeros((size, size))
    for a in range(size):
        for b in range(size):
            corners = []
            for da, db in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                moved = ratings.copy()
                moved[a] += da * step
                moved[b] += db * step
                corners.append(objective(moved))
            hessian[a, b] = (corners[0] - corners[1] - corners[2] + corners[3]) / (4 * step**2)
    return np.asarray(np.linalg.inv(hessian))


def bradley_terry_by_optimizer(
    games: Sequence[tuple[int, int, float]], size: int, prior_sd: float
) -> tuple[np.ndarray, np.ndarray]:
    """Penalized Bradley–Terry fit game by game: Elo ratings (mean 0) and their covariance.

    BFGS maximizes ``negative_log_posterior``'s negation; the covariance is the
    inverse of a central-difference Hessian at the maximum.
    """
    objective = negative_log_posterior(games, prior_sd)
    # BFGS works in log-odds units, where the gradient is of order one.
    result = minimize(
        lambda theta: objective(theta * ELO_PER_LOG_ODDS),
        np.zeros(size),
        method="BFGS",
        options={"gtol": 1e-9},
    )
    ratings = result.x * ELO_PER_LOG_ODDS
    return ratings, covariance_at(objective, ratings)
