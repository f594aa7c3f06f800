"""The rating model and the logistic Elo curve: pure, no I/O, no heavy imports.

``RatingModel`` is what the store is given: it turns one result into both
players' new ratings. The store applies it both when a match finishes and when
it rebuilds every rating from history, so the two paths agree bit for bit.
``EloModel`` is the one in use; another model (Glicko-2, say) is one more class
here plus the migration for the columns it keeps. The curve (``expected_score``,
``score_to_elo``) is the one the statistics in ``arena.stats`` build on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Protocol

DEFAULT_RATING = 1500.0
"""The rating every bot starts from in every game."""

DEFAULT_K = 32.0
"""The default K-factor: the largest change one game can make."""


ELO_SCALE = 400.0
"""Elo points per factor of ten in the odds of winning: the curve's one scale."""

ELO_PER_LOG_ODDS = ELO_SCALE / math.log(10.0)
"""Elo points per unit of natural log-odds (173.7...), the scale of the rating fits."""


def expected_score(ra: float, rb: float) -> float:
    """The score a player rated ``ra`` is expected to make against one rated ``rb``."""
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / ELO_SCALE))


def elo_update(ra: float, rb: float, score_a: float, k: float) -> tuple[float, float]:
    """Both new ratings after A (``ra``) scores ``score_a`` (1, 0.5 or 0) against B (``rb``).

    One delta is added to A and subtracted from B so rating points are
    conserved exactly, whatever the rounding.
    """
    if not 0.0 <= score_a <= 1.0:
        raise ValueError(f"score_a must be between 0 and 1, got {score_a}")
    delta = k * (score_a - expected_score(ra, rb))
    return ra + delta, rb - delta


class RatingModel(Protocol):
    """How one result changes two ratings: the store's only rating arithmetic."""

    name: ClassVar[str]
    """The model's name, e.g. ``"elo"``."""

    @property
    def initial(self) -> float:
        """The rating a bot starts from in every game."""
        ...

    @property
    def parameters(self) -> dict[str, float]:
        """The model's parameters by name (for logs and reports)."""
        ...

    def update(self, ratings: tuple[float, float], score0: float) -> tuple[float, float]:
        """Both seats' ratings after seat 0 scores ``score0`` (1, 0.5 or 0) against seat 1."""
        ...


@dataclass(frozen=True, slots=True)
class EloModel:
    """Plain Elo with one K-factor: what ``RatingModel`` the server uses.

    Frozen and picklable: the SQLite writer process is handed the same model.
    """

    k: float = DEFAULT_K
    """The K-factor: the largest change one game can make."""

    name: ClassVar[str] = "elo"

    @property
    def initial(self) -> float:
        """Every bot starts at ``DEFAULT_RATING``."""
        return DEFAULT_RATING

    @property
    def parameters(self) -> dict[str, float]:
        """``{"k": K}``."""
        return {"k": self.k}

    def update(self, ratings: tuple[float, float], score0: float) -> tuple[float, float]:
        """``elo_update`` with this model's K."""
        return elo_update(ratings[0], ratings[1], score0, self.k)


def score_to_elo(score: float) -> float:
    """The Elo difference that makes ``score`` the expected score (±inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -ELO_SCALE * math.log10(1.0 / score - 1.0)


DEFAULT_MODEL = EloModel()
"""The rating model a store uses when it is given none: Elo with ``DEFAULT_K``."""
