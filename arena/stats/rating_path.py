"""A bot's fitted rating as its games accumulated, for a rating-history chart.

``rating_path(fit, results, bot, games, checkpoints)`` answers, for each
checkpoint ``k``: what rating and 95% interval would the leaderboard give the
bot if it had played only its first ``k`` rated games, measured against its
opponents as ``fit`` rates them now? The bot's strength is the penalized
maximum-likelihood one given those ``k`` games, every other bot's held at its
fitted value; the interval comes from the same Fisher information and
reference (anchor bot or pool mean) as the fit's own, with the bot's games cut
to the first ``k``. At ``k`` = all its games the point is exactly the fit's:
at the joint maximum each bot's strength is the best one given the others'.

Holding the others fixed keeps each point cheap (one small matrix inverse, no
refit); it also means the path answers "how did the evidence about this bot
grow?", not "what did the leaderboard say on that day?".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit
from threadpoolctl import threadpool_limits

from arena.ratings import ELO_PER_LOG_ODDS
from arena.stats.bradley_terry import PairGames, with_covariance
from arena.stats.counts import FloatArray
from arena.stats.elo import Z95
from arena.stats.rating_fit import (
    PairResult,
    RatingFit,
    report_ratings,
    tally_games,
)


class PathPoint(NamedTuple):
    """The bot's rating after its first ``games`` rated games."""

    games: int
    rating: float
    ci95: float


def rating_path(
    fit: RatingFit,
    results: Iterable[PairResult],
    bot: str,
    games: Sequence[tuple[str, float]],
    checkpoints: Iterable[int],
) -> list[PathPoint]:
    """The bot's rating and ci95 after each checkpoint's number of its games (see the module).

    ``fit`` must be ``fit_ratings`` of ``results`` (not a ``RatingFit.only``
    view); ``games`` are the bot's rated games in the order played, as
    ``(opponent, score)`` with score 1, ½ or 0. Checkpoints run from 1 to
    ``len(games)``; the points come back in increasing order. Raises
    ``ValueError`` for a bot or opponent the fit does not know, or a checkpoint
    out of range.
    """
    names = sorted(line.name for line in fit.ratings)
    index = {name: i for i, name in enumerate(names)}
    if bot not in index:
        raise ValueError(f"{bot!r} is not in the fit")
    try:
        opponents = np.array([index[opponent] for opponent, _ in games], dtype=np.intp)
    except KeyError as missing:
        raise ValueError(f"the opponent {missing} is not in the fit") from None
    scores = np.array([float(score) for _, score in games])
    if np.any((scores != 0.0) & (scores != 0.5) & (scores != 1.0)):
        raise ValueError("a game score must be 1, 0.5 or 0")
    wanted = sorted(set(checkpoints))
    if wanted and not 1 <= wanted[0] <= wanted[-1] <= len(games):
        raise ValueError(f"checkpoints must lie in 1..{len(games)}")

    fitted = {line.name: line.rating for line in fit.ratings}
    ratings = np.array([fitted[name] for name in names])
    # The prior is centred on θ = 0, so the fitted strengths sum to zero over all
    # bots and differ from the ratings only by scale and that mean.
    theta = (ratings - ratings.mean()) / ELO_PER_LOG_ODDS
    precision = (ELO_PER_LOG_ODDS / fit.prior_sd) ** 2
    pairs, _ = tally_games(list(results), names)
    me = index[bot]
    keep = (pairs.first != me) & (pairs.second != me)
    size = len(names)
    points = []
    with threadpool_limits(limits=1, user_api="blas"):
        for k in wanted:
            played = np.bincount(opponents[:k], minlength=size).astype(np.float64)
            scored = np.bincount(opponents[:k], scores[:k], size).astype(np.float64)
            met = np.flatnonzero(played > 0)
            low, high = np.minimum(met, me), np.maximum(met, me)
            first_score = np.where(low == me, scored[met], played[met] - scored[met])
            truncated = PairGames(
                size,
                np.concatenate([pairs.first[keep], low]),
                np.concatenate([pairs.second[keep], high]),
                np.concatenate([pairs.games[keep], played[met]]),
                np.concatenate([pairs.score[keep], first_score]),
            )
            at = theta.copy()
            at[me] = _own_strength(theta[met], played[met], scored[met], precision)
            strengths = with_covariance(at, truncated, precision)
            rating, covariance = report_ratings(
                strengths, truncated, names, fit.anchor, fit.anchor_rating, fit.weights
            )
            spread = math.sqrt(max(float(covariance[me, me]), 0.0))
            points.append(PathPoint(k, float(rating[me]), Z95 * spread))
    return points


def _own_strength(
    opponents: FloatArray, played: FloatArray, scored: FloatArray, precision: float
) -> float:
    """The strength maximizing the bot's penalized likelihood against fixed opponents.

    The derivative ``Σ (scoreⱼ − nⱼ·σ(θ − θⱼ)) − λθ`` falls strictly, is positive
    at ``−B`` and negative at ``B`` for ``B = max|θⱼ| + n/λ + 1``: Brent's method
    finds its root inside.
    """

    def slope(strength: float) -> float:
        expected = expit(strength - opponents)
        return float(np.sum(scored - played * expected)) - precision * strength

    bound = float(np.max(np.abs(opponents), initial=0.0)) + float(played.sum()) / precision + 1.0
    return float(brentq(slope, -bound, bound, xtol=1e-13, rtol=1e-15))
