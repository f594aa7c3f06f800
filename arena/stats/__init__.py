"""Match statistics: Elo with intervals, LOS, SPRT and rating fits. Pure functions, no I/O.

Malformed input (a count vector of the wrong length, negative counts, unknown
models or bots) raises ``ValueError``. ``ArithmeticError`` would mean an
iteration failed to converge, which no tested input does.
"""

from __future__ import annotations

from arena.stats.counts import pentanomial_counts, trinomial_counts
from arena.stats.elo import EloEstimate, elo_estimate
from arena.stats.ranks import is_provisional, rank_ranges
from arena.stats.rating_fit import BotRating, PairResult, RatingFit, fit_ratings, tally_pairs
from arena.stats.sprt import Model, SprtState, sprt, sprt_bounds, sprt_llr

__all__ = [
    "BotRating",
    "EloEstimate",
    "Model",
    "PairResult",
    "RatingFit",
    "SprtState",
    "elo_estimate",
    "fit_ratings",
    "is_provisional",
    "pentanomial_counts",
    "rank_ranges",
    "sprt",
    "sprt_bounds",
    "sprt_llr",
    "tally_pairs",
    "trinomial_counts",
]
