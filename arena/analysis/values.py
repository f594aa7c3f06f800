"""Solved values: what a solve proved about a position, a move's verdict, and their words.

Scores are Pascal Pons' (``bots.strategies.solver``), from the side to move: ``22 - s``
when it wins with its ``s``-th stone, ``s - 22`` when the opponent wins with
its ``s``-th stone, 0 for a draw. In plies from a position with ``stones``
stones on the board, a win scoring ``v > 0`` comes with the side to move's
``n = 22 - v - stones // 2``-th move from now, ``2n - 1`` plies away; a loss
scoring ``v < 0`` with the opponent's ``n = 22 + v - (stones + 1) // 2``-th
move, ``2n`` plies away (``plies_to_end``).

Nothing here imports the store or the solver: the pool's workers import it.
"""

from __future__ import annotations

from dataclasses import dataclass

STONES_TO_WIN = 22
"""Pons' constant: a win with the s-th stone scores 22 - s (at most 21 stones each)."""


@dataclass(frozen=True, slots=True)
class Solved:
    """What a solve proved about a position, for the side to move: the ``outcome`` (1, 0,
    -1) and the exact ``score``, each None when not proven within the budget."""

    outcome: int | None
    score: int | None
    nodes: int = 0

    def negated(self) -> Solved:
        """The same position from the other side's point of view."""
        return Solved(
            None if self.outcome is None else -self.outcome,
            None if self.score is None else -self.score,
            self.nodes,
        )


UNKNOWN = Solved(None, None)
"""A position the budget did not solve."""


def line_score(ply: int) -> int:
    """The score of the move at ``ply`` (0-based) that completes a line, for its mover."""
    return STONES_TO_WIN - (ply // 2 + 1)


def plies_to_end(score: int, stones: int) -> int:
    """Plies until the winning move with perfect play, for a nonzero ``score`` of the side to
    move in a position with ``stones`` stones (1: it wins at once)."""
    if score > 0:
        return 2 * (STONES_TO_WIN - score - stones // 2) - 1
    if score < 0:
        return 2 * (STONES_TO_WIN + score - (stones + 1) // 2)
    raise ValueError("a draw has no winning move")


def describe(outcome: int | None, score: int | None, stones: int) -> str:
    """The value in words for the side to move: ``win in 3`` (its own moves, the winning
    one included), ``loss in 2`` (the opponent's moves), ``draw``, or ``unknown``."""
    if score is not None and score != 0:
        plies = plies_to_end(score, stones)
        moves = (plies + 1) // 2
        return f"{'win' if score > 0 else 'loss'} in {moves}"
    if outcome is None:
        return "unknown"
    return {1: "win", 0: "draw", -1: "loss"}[outcome]
