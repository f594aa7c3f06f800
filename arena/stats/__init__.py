"""Match statistics: Elo with intervals, LOS, SPRT and rating fits. Pure functions, no I/O.

Malformed input (a count vector of the wrong length, negative counts, unknown
models or bots) raises ``ValueError``; nothing else is raised on purpose.
"""

from __future__ import annotations

from arena.stats.counts import pentanomial_counts, trinomial_counts
from arena.stats.elo import EloEstimate, elo_estimate
from arena.stats.sprt import Model, SprtState, sprt, sprt_bounds, sprt_llr

__all__ = [
    "EloEstimate",
    "Model",
    "SprtState",
    "elo_estimate",
    "pentanomial_counts",
    "sprt",
    "sprt_bounds",
    "sprt_llr",
    "trinomial_counts",
]
