"""Honest ranks and the provisional flag for a fitted rating list."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arena.stats.counts import FloatArray
from arena.stats.elo import Z95

MIN_GAMES = 20
"""Below this many rated games a rating is provisional."""
MAX_CI95 = 100.0
"""A rating whose 95% half-width exceeds this many Elo is provisional."""
ESTABLISHED_GAMES = 100
"""With this many rated games ..."""
ESTABLISHED_OPPONENTS = 3
"""... against at least this many different opponents, a rating is established whatever its
interval: a bot that beats everyone keeps a wide interval (one-sided scores say little about
how much stronger it is) but has shown where it stands."""

PROVISIONAL_HINT = (
    f"provisional: fewer than {MIN_GAMES} rated games, or a 95% interval wider than "
    f"±{MAX_CI95:.0f}, unless {ESTABLISHED_GAMES} rated games against "
    f"{ESTABLISHED_OPPONENTS} or more opponents"
)
"""What the ``?`` after a rating means, in the words the CLI legend and the web page use."""


def is_provisional(
    games: int,
    ci95: float,
    min_games: int = MIN_GAMES,
    max_ci95: float = MAX_CI95,
    opponents: int = 0,
) -> bool:
    """Whether a rating is provisional (``PROVISIONAL_HINT`` says the rule in words).

    Provisional: under ``min_games`` games or ``ci95 > max_ci95``; but
    ``ESTABLISHED_GAMES`` games (or ``min_games``, when more) against
    ``ESTABLISHED_OPPONENTS`` or more distinct ``opponents`` always settle it.
    """
    if games >= max(min_games, ESTABLISHED_GAMES) and opponents >= ESTABLISHED_OPPONENTS:
        return False
    return games < min_games or ci95 > max_ci95


def rank_ranges(
    ratings: Sequence[float], covariance: FloatArray, z: float = Z95
) -> list[tuple[int, int]]:
    """The ranks each bot could honestly hold: ``(rank_low, rank_high)``, 1 = best.

    Bot ``j`` counts as *clearly above* bot ``i`` when ``rᵢ`` trails ``rⱼ`` by more
    than ``z`` standard deviations of the difference ``rⱼ − rᵢ`` (taken from the
    joint ``covariance`` of the ratings, so shared opponents are accounted for;
    with the default ``z`` that is a one-sided likelihood of superiority above
    97.5%). Then ``rank_low = 1 + #(clearly above)`` and
    ``rank_high = n − #(clearly below)``. A bot no other bot is clearly
    separated from gets ``(1, n)``; a bot clearly apart from all gets one rank.
    """
    values = np.asarray(ratings, dtype=np.float64)
    count = len(values)
    variances = np.diag(covariance)
    difference_sd = np.sqrt(
        np.maximum(variances[:, None] + variances[None, :] - 2.0 * covariance, 0.0)
    )
    lead = values[None, :] - values[:, None]  # lead[i, j] = r_j - r_i
    above = lead > z * difference_sd
    clearly_above = above.sum(axis=1)
    clearly_below = above.sum(axis=0)
    return [(1 + int(clearly_above[i]), count - int(clearly_below[i])) for i in range(count)]
