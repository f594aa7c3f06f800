"""Match statistics: Elo with intervals, LOS, SPRT and rating fits. Pure functions, no I/O.

Every Elo difference a user reads between two players comes from
``elo_interval``; ``elo_estimate`` is fishtest's figure, kept equal to it for
comparison with fishtest and cutechess.

Malformed input (a count vector of the wrong length, negative counts, unknown
models or bots) raises ``ValueError``. ``ArithmeticError`` would mean an
iteration failed to converge, which no tested input does.
"""

from __future__ import annotations

from arena.stats.counts import match_counts, pentanomial_counts, trinomial_counts
from arena.stats.elo import EloEstimate, elo_estimate
from arena.stats.interval import EloInterval, elo_interval
from arena.stats.ranks import is_provisional, rank_ranges
from arena.stats.rating_fit import BotRating, PairResult, RatingFit, fit_ratings, tally_pairs
from arena.stats.sprt import Model, SprtState, sprt, sprt_bounds, sprt_llr

__all__ = [
    "BotRating",
    "EloEstimate",
    "EloInterval",
    "Model",
    "PairResult",
    "RatingFit",
    "SprtState",
    "elo_estimate",
    "elo_interval",
    "fit_ratings",
    "is_provisional",
    "match_counts",
    "pentanomial_counts",
    "rank_ranges",
    "sprt",
    "sprt_bounds",
    "sprt_llr",
    "tally_pairs",
    "trinomial_counts",
]
