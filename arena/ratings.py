"""Elo arithmetic: pure functions, no I/O.

The store calls ``elo_update`` both when a match finishes and when it
rebuilds every rating from history, so the two paths agree bit for bit.
"""

from __future__ import annotations

import math

DEFAULT_RATING = 1500.0
"""The rating every bot starts from in every game."""

DEFAULT_K = 32.0
"""The default K-factor: the largest change one game can make."""

def expected_score(ra: float, rb: float) -> float:
    """The score a player rated ``ra`` is expected to make against one rated ``rb``."""
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))


def elo_update(ra: float, rb: float, score_a: float, k: float) -> tuple[float, float]:
    """Both new ratings after A (``ra``) scores ``score_a`` (1, 0.5 or 0) against B (``rb``).

    One delta is added to A and subtracted from B so rating points are
    conserved exactly, whatever the rounding.
    """
    if not 0.0 <= score_a <= 1.0:
        raise ValueError(f"score_a must be between 0 and 1, got {score_a}")
    delta = k * (score_a - expected_score(ra, rb))
    return ra + delta, rb - delta


def score_to_elo(score: float) -> float:
    """The Elo difference that makes ``score`` the expected score (±inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)
