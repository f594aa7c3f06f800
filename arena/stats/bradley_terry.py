"""The penalized maximum-likelihood Bradley–Terry fit: strengths and their covariance.

Strengths ``θ`` are natural log-odds: bot ``i`` is expected to score
``σ(θᵢ − θⱼ) = 1 / (1 + e^−(θᵢ − θⱼ))`` against bot ``j``, a draw counting as
half a win and half a loss. A Gaussian prior ``N(0, 1/λ)`` on every strength
(a ridge penalty ``λ/2·Σθ²``) keeps the maximum finite when a bot has no wins
or no losses, or when the comparison graph falls apart; it also fixes the free
translation, so each connected group of bots is centred on 0.

The penalized log-likelihood is strictly concave; Newton's method with a
backtracking line search climbs it. Its Hessian is minus the weighted graph
Laplacian (weights ``nᵢⱼ·pᵢⱼ·(1 − pᵢⱼ)``, the Fisher information of each pair)
minus ``λ·I``; the inverse at the optimum is the covariance of the strengths.

That inverse holds a variance ``1/λ`` along each group's common translation —
large for a weak prior — which cancels in every within-group comparison. It is
therefore kept apart: with ``uₖ`` the normalized indicator of group ``k`` (an
eigenvector of the Hessian ``H``, eigenvalue ``λ``) and ``G = H + κ·Σ uₖuₖᵀ``,
``H⁻¹ = G⁻¹ + (1/λ − 1/(λ + κ))·Σ uₖuₖᵀ``, where ``G`` is as well conditioned
as the data allow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components

from arena.stats.counts import FloatArray

IntArray = npt.NDArray[np.intp]

_STEP_TOLERANCE = 1e-10
"""Newton stops when no strength moves more than this (in log-odds, ~4e-9 Elo)."""
_MAX_NEWTON_STEPS = 100


@dataclass(frozen=True, eq=False)
class PairGames:
    """The games of every pair of bots that met, one entry per unordered pair ``first < second``."""

    size: int
    """How many bots there are (indices ``0 .. size − 1``)."""
    first: IntArray
    second: IntArray
    games: FloatArray
    """Games played between the two."""
    score: FloatArray
    """``first``'s score over those games: wins plus half the draws."""


@dataclass(frozen=True, eq=False)
class Strengths:
    """The penalized maximum-likelihood strengths and what their covariance is made of."""

    theta: FloatArray
    component: IntArray
    """Group label per bot: 0 for the largest group connected by games, then by size."""
    conditioned_inverse: FloatArray
    """``G⁻¹``: the covariance without the groups' translation terms (log-odds²)."""
    translation_variance: float
    """``1/λ − 1/(λ + κ)``: what each group's translation adds back."""
    iterations: int
    """Newton steps taken."""

    def reference_covariance(self, references: FloatArray, reference_of: IntArray) -> FloatArray:
        """The covariance (log-odds²) of ``θᵢ − references[reference_of[i]] @ θ`` for every bot.

        Each bot's strength is read against one of a few reference weight
        vectors (the rows of ``references``: a group's mean, an anchor bot).
        With ``R`` the matrix whose row ``i`` is bot ``i``'s reference, that is
        ``(I − R)·H⁻¹·(I − R)ᵀ``; ``R`` has only a few distinct rows, so each
        term is a product with them and a gather, O(n²) rather than the O(n³)
        of two dense products (a board of 2,000 bots spent most of its fit there).
        """
        inverse = self.conditioned_inverse
        index = reference_of
        # (I − R)·G⁻¹·(I − R)ᵀ = G⁻¹ − R·G⁻¹ − G⁻¹·Rᵀ + R·G⁻¹·Rᵀ, with R = E·W (E picks rows).
        towards = inverse @ references.T  # G⁻¹·Wᵀ: one column per reference
        through = towards[:, index]  # G⁻¹·Rᵀ
        result = inverse - through - through.T
        result += (references @ towards)[np.ix_(index, index)]
        # The groups' translations: Σₖ ((I − R)·uₖ)((I − R)·uₖ)ᵀ, uₖ = group k's indicator/√nₖ.
        # With U (one column uₖ per group) and S = W·U: U·Uᵀ − U·S[E]ᵀ − S[E]·Uᵀ + S[E]·S[E]ᵀ.
        label = self.component
        sizes = np.bincount(label).astype(np.float64)
        unit = 1.0 / np.sqrt(sizes[label])  # bot i's entry in u of its group
        spread = np.zeros((len(references), len(sizes)))
        np.add.at(spread.T, label, (references * unit).T)  # S = W·U, references × groups
        same = label[:, None] == label[None, :]
        crossing = unit[:, None] * spread[index][:, label].T  # U·S[E]ᵀ
        translation = np.where(same, unit[:, None] * unit[None, :], 0.0)
        translation -= crossing + crossing.T
        translation += (spread @ spread.T)[np.ix_(index, index)]
        result += self.translation_variance * translation
        return np.asarray(result, np.float64)


def components(pairs: PairGames) -> IntArray:
    """Group label per bot, 0 for the largest group connected by games, then by size."""
    size = pairs.size
    graph = coo_array((np.ones(len(pairs.first)), (pairs.first, pairs.second)), shape=(size, size))
    _, labels = connected_components(graph, directed=False)
    sizes = np.bincount(labels)
    # Largest first; ties by the smallest member index so labels are deterministic.
    first_member = [int(np.flatnonzero(labels == label)[0]) for label in range(len(sizes))]
    ranking = sorted(range(len(sizes)), key=lambda label: (-sizes[label], first_member[label]))
    relabel = np.empty(len(sizes), dtype=np.intp)
    relabel[ranking] = np.arange(len(sizes))
    return np.asarray(relabel[labels], np.intp)


def _log_likelihood(theta: FloatArray, pairs: PairGames, precision: float) -> float:
    margin = theta[pairs.first] - theta[pairs.second]
    # log σ(m) = −log(1 + e^−m), computed without overflow.
    fit = -pairs.score * np.logaddexp(0.0, -margin) - (pairs.games - pairs.score) * np.logaddexp(
        0.0, margin
    )
    return float(fit.sum()) - 0.5 * precision * float(theta @ theta)


def _gradient_and_information(
    theta: FloatArray, pairs: PairGames, precision: float
) -> tuple[FloatArray, FloatArray]:
    margin = theta[pairs.first] - theta[pairs.second]
    expected = 1.0 / (1.0 + np.exp(-margin))
    surplus = pairs.score - pairs.games * expected
    weight = pairs.games * expected * (1.0 - expected)
    size = pairs.size
    gradient = (
        _sum_by(pairs.first, surplus, size)
        - _sum_by(pairs.second, surplus, size)
        - precision * theta
    )
    information = np.zeros((size, size))
    # Each unordered pair appears once, so plain fancy assignment cannot collide.
    information[pairs.first, pairs.second] = -weight
    information[pairs.second, pairs.first] = -weight
    diagonal = _sum_by(pairs.first, weight, size) + _sum_by(pairs.second, weight, size)
    information[np.diag_indices(size)] = diagonal + precision
    return gradient, information


def _sum_by(index: IntArray, values: FloatArray, size: int) -> FloatArray:
    """``values`` added up per bot index (a weighted ``bincount``, always float)."""
    return np.bincount(index, values, size).astype(np.float64, copy=False)


def fit_strengths(pairs: PairGames, precision: float) -> Strengths:
    """Maximize the penalized Bradley–Terry likelihood of ``pairs`` (prior precision ``λ``)."""
    if precision <= 0.0:
        raise ValueError(f"the prior precision must be positive, got {precision}")
    theta = np.zeros(pairs.size)
    value = _log_likelihood(theta, pairs, precision)
    for step in range(1, _MAX_NEWTON_STEPS + 1):
        gradient, information = _gradient_and_information(theta, pairs, precision)
        direction = np.linalg.solve(information, gradient)
        length = 1.0
        # Newton's full step can overshoot when a bot is nearly undefeated;
        # halving it until the likelihood rises keeps the climb monotone.
        while True:
            candidate = theta + length * direction
            candidate_value = _log_likelihood(candidate, pairs, precision)
            # The slack admits round-off near the optimum, where the rise is ~1e-16.
            if candidate_value >= value - 1e-12 * abs(value) or length < 1e-6:
                break
            length /= 2.0
        theta, value = candidate, candidate_value
        if float(np.max(np.abs(length * direction), initial=0.0)) < _STEP_TOLERANCE:
            return with_covariance(theta, pairs, precision, step)
    raise ArithmeticError("the Bradley–Terry fit did not converge")


def with_covariance(
    theta: FloatArray, pairs: PairGames, precision: float, steps: int = 0
) -> Strengths:
    """``Strengths`` at ``theta`` (the optimum, or any point of interest) with their covariance."""
    _, information = _gradient_and_information(theta, pairs, precision)
    label = components(pairs)
    shift = float(np.mean(np.diag(information)))  # κ: the scale of the information itself
    conditioned = information.copy()
    for group in range(int(label.max(initial=-1)) + 1):
        members = np.flatnonzero(label == group)
        conditioned[np.ix_(members, members)] += shift / len(members)
    return Strengths(
        theta=theta,
        component=label,
        # numpy's LAPACK calls release the GIL (scipy.linalg's held it for up to 0.1 s at
        # 2,000 bots): the fit runs in a thread beside the server's event loop.
        conditioned_inverse=np.asarray(np.linalg.inv(conditioned), np.float64),
        translation_variance=1.0 / precision - 1.0 / (precision + shift),
        iterations=steps,
    )

