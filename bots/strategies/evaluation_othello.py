"""Othello's static evaluation for the heuristic strategies: mobility, corners, stability.

The classic evaluation-function terms, each mover's minus opponent's:

- corners held (25 each): a corner disc can never be turned;
- discs on the X- and C-squares next to an empty corner (-8 each): they open
  the corner to the opponent;
- mobility, the number of legal placements (3 each): the side with fewer
  moves is the one that will be forced into bad ones;
- stable discs (6 each): discs that can no longer be turned, grown from the
  corners (see ``stable_discs``);
- the disc count itself (1 each) only in the last dozen empty cells, where it
  is about to decide the game.
"""

from __future__ import annotations

from collections.abc import Hashable

from protocol.games import GameState
from protocol.games.othello import CELLS, PASS, placements

_EDGE_A = sum(1 << (8 * r) for r in range(8))  # column a
_EDGE_H = _EDGE_A << 7  # column h
_EDGE_1 = 0xFF  # top row
_EDGE_8 = 0xFF << 56  # bottom row
_FULL = (1 << CELLS) - 1
CORNERS = (0, 7, 56, 63)
_CORNER_BITS = sum(1 << c for c in CORNERS)
# Each corner with its X- and C-squares.
_NEAR_CORNER = (
    (1 << 0, (1 << 1) | (1 << 8) | (1 << 9)),
    (1 << 7, (1 << 6) | (1 << 15) | (1 << 14)),
    (1 << 56, (1 << 57) | (1 << 48) | (1 << 49)),
    (1 << 63, (1 << 62) | (1 << 55) | (1 << 54)),
)
# Per line axis (shift d): the cells with no neighbour in direction +d, in direction -d,
# and the masks that keep a shifted board from wrapping across the a/h columns.
_AXES = (
    (1, _EDGE_H, _EDGE_A, _FULL & ~_EDGE_A, _FULL & ~_EDGE_H),
    (8, _EDGE_8, _EDGE_1, _FULL, _FULL),
    (9, _EDGE_H | _EDGE_8, _EDGE_A | _EDGE_1, _FULL & ~_EDGE_A, _FULL & ~_EDGE_H),
    (7, _EDGE_A | _EDGE_8, _EDGE_H | _EDGE_1, _FULL & ~_EDGE_H, _FULL & ~_EDGE_A),
)

# Move order: corners, then the other edge and inner cells by a classic square table,
# the cells next to the corners last.
_SQUARE_VALUE = (
    (100, -20, 10, 5),
    (-20, -50, -2, -2),
    (10, -2, 1, 1),
    (5, -2, 1, 0),
)
SQUARE_VALUES: tuple[int, ...] = tuple(
    _SQUARE_VALUE[min(r, 7 - r)][min(c, 7 - c)] for r in range(8) for c in range(8)
)
"""A classic static value of each cell 0-63 (corners high, their neighbours low)."""


def stable_discs(mine: int) -> int:
    """Discs of ``mine`` that can never be turned (a safe under-estimate).

    A disc cannot be outflanked along a line axis when, on one side of it, the
    board ends or a stable disc of its own colour sits; a disc that holds on
    all four axes is stable. Starting from the corners, this is repeated until
    nothing is added.
    """
    stable = 0
    while True:
        grown = mine
        for shift, edge_plus, edge_minus, left_mask, right_mask in _AXES:
            # Cells whose +d neighbour is stable: the stable set shifted by -d, and so on.
            held = edge_plus | edge_minus
            held |= (stable >> shift) & right_mask
            held |= (stable << shift) & left_mask & _FULL
            grown &= held
        if grown == stable:
            return stable
        stable = grown


def _near_empty_corners(discs: int, taken: int) -> int:
    count = 0
    for corner, near in _NEAR_CORNER:
        if not taken & corner:
            count += (discs & near).bit_count()
    return count


def evaluate_othello(state: GameState) -> float:
    """Corners, corner neighbours, mobility, stability (and late disc count) for the mover."""
    boards: tuple[int, int] = state.boards  # type: ignore[attr-defined]
    mine, theirs = boards[state.to_move], boards[1 - state.to_move]
    taken = mine | theirs
    score = 25 * ((mine & _CORNER_BITS).bit_count() - (theirs & _CORNER_BITS).bit_count())
    score -= 8 * (_near_empty_corners(mine, taken) - _near_empty_corners(theirs, taken))
    score += 3 * (placements(mine, theirs).bit_count() - placements(theirs, mine).bit_count())
    score += 6 * (stable_discs(mine).bit_count() - stable_discs(theirs).bit_count())
    if CELLS - taken.bit_count() <= 12:
        score += mine.bit_count() - theirs.bit_count()
    return float(score)


def order_othello(_state: GameState, moves: list[int]) -> list[int]:
    """Corners first, the cells next to the corners last (the pass stands alone)."""
    return sorted(moves, key=lambda m: -SQUARE_VALUES[m] if m != PASS else 0)


def othello_key(state: GameState) -> Hashable:
    """The transposition key: both boards and the side to move."""
    return (state.boards, state.to_move)  # type: ignore[attr-defined]
