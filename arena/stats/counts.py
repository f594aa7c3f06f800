"""Count vectors: how match results are tallied for ``elo_estimate`` and ``sprt_llr``.

A count vector is either trinomial, ``(losses, draws, wins)`` for single games,
or pentanomial, ``(LL, LD+DL, LW+DD+WL, DW+WD, WW)`` for colour-swapped game
pairs (pair scores 0, ½, 1, 1½, 2). Both are ordered worst result first, so
entry ``k`` of an ``m``-entry vector is the outcome with score ``k / (m - 1)``
on the unit scale (per game, or per game averaged over the pair).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

REGULARIZATION = 1e-3
"""What a zero count becomes before any estimate, as fishtest does: every vector stays finite."""

FloatArray = npt.NDArray[np.float64]

_GAME_SCORES = {0.0: 0, 0.5: 1, 1.0: 2}
_PAIR_SCORES = {0.0: 0, 0.5: 1, 1.0: 2, 1.5: 3, 2.0: 4}


def trinomial_counts(scores: Iterable[float]) -> tuple[int, int, int]:
    """``(losses, draws, wins)`` of one player from its per-game scores (0, ½ or 1).

    Use this only when games are independent of each other (no paired openings);
    games played as colour-swapped pairs belong in ``pentanomial_counts``.
    """
    tally = [0, 0, 0]
    for score in scores:
        tally[_index(score, _GAME_SCORES, "game score")] += 1
    return tally[0], tally[1], tally[2]


def pentanomial_counts(pair_scores: Iterable[float]) -> tuple[int, int, int, int, int]:
    """``(LL, LD+DL, LW+DD+WL, DW+WD, WW)`` of one player from its game-pair scores.

    Each entry of ``pair_scores`` is the player's total over one colour-swapped
    pair of games on the same opening: 0, ½, 1, 1½ or 2 (two losses ... two wins).
    """
    tally = [0, 0, 0, 0, 0]
    for score in pair_scores:
        tally[_index(score, _PAIR_SCORES, "pair score")] += 1
    return tally[0], tally[1], tally[2], tally[3], tally[4]


def match_counts(
    game_scores: Iterable[float], pair_scores: Iterable[float]
) -> tuple[int, int, int] | tuple[int, int, int, int, int]:
    """The tally a match's Elo interval is taken from, from one player's side.

    Its complete colour-swapped pairs (``pentanomial_counts`` of ``pair_scores``)
    when it has any — pairs cancel the first-move edge and their variance is the
    honest one — else its single games (``trinomial_counts`` of ``game_scores``).
    """
    pairs = pentanomial_counts(pair_scores)
    return pairs if sum(pairs) else trinomial_counts(game_scores)


def _index(score: float, table: dict[float, int], what: str) -> int:
    try:
        return table[float(score)]
    except KeyError:
        raise ValueError(f"a {what} must be one of {sorted(table)}, got {score!r}") from None


def regularized(counts: Sequence[float]) -> FloatArray:
    """``counts`` checked (length 3 or 5, finite, not negative) with zeros raised to 1e-3."""
    values = np.asarray(counts, dtype=np.float64)
    if values.shape not in ((3,), (5,)):
        raise ValueError(
            f"counts must be trinomial (3 entries) or pentanomial (5 entries), got {len(counts)}"
        )
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"counts must be finite and not negative, got {list(counts)}")
    return np.where(values == 0.0, REGULARIZATION, values)


def unit_scores(size: int) -> FloatArray:
    """The score of each entry of a ``size``-entry count vector on the unit scale, worst first."""
    return np.linspace(0.0, 1.0, size)


def is_pentanomial(counts: Sequence[float]) -> bool:
    """Whether ``counts`` tallies game pairs (5 entries) rather than single games (3)."""
    return len(counts) == 5
